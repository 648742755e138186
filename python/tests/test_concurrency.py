"""Many processes, one build folder and one cache (issue 42): every program
is compiled once, nobody falls back to DaCe's CMake build, and a builder
killed halfway leaves nothing that looks finished. Also: a library that
calls MPI, loaded without MPI, fails with sdfgc's own message."""
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import sdfgc
from conftest import CORPUS, REPO, run_case

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/


def child_env(tmp_path, **extra):
    """The environment of a child process: the switch on (SDFGC_DACE=1), one
    DaCe build folder and one sdfgc cache for all, a compiler that logs
    each command to `cxx.log`, and a `cmake` that logs and fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    cxx = bin_dir / "cxx"
    cxx.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case "$*" in *--version*) ;; *) echo "$*" >> {tmp_path / 'cxx.log'} ;; esac
        if [ -n "$SDFGC_TEST_STALL" ]; then
            case "$*" in *"$SDFGC_TEST_STALL_ON"*) touch "$SDFGC_TEST_STALL"; sleep 120 ;; esac
        fi
        exec g++ "$@"
        """))
    (bin_dir / "cmake").write_text(f"#!/bin/sh\necho \"$*\" >> {tmp_path / 'cmake.log'}\nexit 1\n")
    for f in (cxx, bin_dir / "cmake"):
        f.chmod(0o755)
    env = dict(os.environ, SDFGC_DACE="1", SDFGC_DACE_LOG=str(tmp_path / "sdfgc.log"), CXX=str(cxx),
               SDFGC_CACHE_DIR=str(tmp_path / "cache"), DACE_default_build_folder=str(tmp_path / "dacecache"),
               PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("DACE_compiler_cpu_executable", None)
    if os.path.dirname(os.path.dirname(os.path.abspath(sdfgc.__file__))) == HERE:
        # a source checkout: its sitecustomize does what the installed .pth does
        env["PYTHONPATH"] = os.pathsep.join([HERE, os.path.join(HERE, "sdfgc", "_startup")])
    else:
        env.pop("PYTHONPATH", None)
    env.update(extra)
    return env


def compiles(tmp_path, source):
    """How many compiler commands compiled `source`."""
    log = tmp_path / "cxx.log"
    return sum(source in line.split() for line in log.read_text().splitlines()) if log.exists() else 0


def no_cmake(tmp_path):
    log = tmp_path / "sdfgc.log"
    lines = log.read_text().splitlines() if log.exists() else []
    assert not [ln for ln in lines if ln.startswith("cmake ")], lines
    assert not (tmp_path / "cmake.log").exists(), (tmp_path / "cmake.log").read_text()


def leftovers(cache):
    """Private work folders and files left in a cache folder (not its locks)."""
    return [e for e in os.listdir(cache) if e.startswith(".") and e != ".locks"] if os.path.isdir(cache) else []


AXPY = textwrap.dedent("""\
    import sys, numpy as np, dace
    N = dace.symbol('N')
    @dace.program
    def prog(x: dace.float64[N], y: dace.float64[N]):
        y[:] = 2.0 * x + y
    s = prog.to_sdfg(); s.name = sys.argv[1]
    x, y = np.arange(5.0), np.ones(5)
    s.compile()(x=x, y=y, N=5)
    assert np.allclose(y, 2 * np.arange(5.0) + 1), y
    print('ok')
    """)


def test_eight_processes_compile_one_program_into_one_folder(tmp_path):
    # DaCe's SDFG.compile() through the switch, 8 processes at once, one
    # build folder: one compile, no CMake, right results everywhere.
    script = tmp_path / "axpy.py"
    script.write_text(AXPY)
    env = child_env(tmp_path)
    procs = [subprocess.Popen([sys.executable, str(script), "conc_eight"], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err[-3000:] for _, err in outs]
    assert all(out.split()[-1] == "ok" for out, _ in outs)
    no_cmake(tmp_path)
    assert (tmp_path / "sdfgc.log").read_text().count("compiled conc_eight") == 8
    assert compiles(tmp_path, "conc_eight.cpp") == 1  # one library build
    assert compiles(tmp_path, "-ldl") == 1  # one loader stub build
    assert leftovers(tmp_path / "cache" / "dace-lib") == []


def test_eight_processes_build_one_program_with_sdfgc_build(tmp_path):
    path = os.path.join(CORPUS, "jacobi_1d", "program.sdfg")
    env = child_env(tmp_path)
    code = ("import sys, sdfgc\n"
            "r = sdfgc.build(sys.argv[1], build_dir=sys.argv[2], compiler=sys.argv[3])\n"
            "print(r, r.cached)\n")
    cache = str(tmp_path / "build-cache")
    procs = [subprocess.Popen([sys.executable, "-c", code, path, cache, env["CXX"]], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err[-3000:] for _, err in outs]
    libs = {out.split()[0] for out, _ in outs}
    assert len(libs) == 1
    assert sorted(out.split()[1] for out, _ in outs) == ["False"] + ["True"] * 7  # one built, seven waited
    assert compiles(tmp_path, "-shared") == 1
    assert leftovers(cache) == []
    run_case(libs.pop(), "jacobi_1d")


def _mpi_ready():
    if not shutil.which("mpirun") or not shutil.which("mpicxx"):
        return False
    return subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True).returncode == 0


BCAST = textwrap.dedent("""\
    import numpy as np, dace
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    @dace.program
    def conc_bcast(A: dace.int32[10]):
        comm.Bcast(A)
    func = conc_bcast.to_sdfg().compile()   # every rank compiles, into one folder
    A = np.arange(10, dtype=np.int32) if rank == 0 else np.zeros(10, dtype=np.int32)
    func(A=A)
    assert (A == np.arange(10)).all(), A
    print('ok', rank, flush=True)
    """)


@pytest.mark.skipif(not _mpi_ready(), reason="needs mpirun, mpicxx and mpi4py")
def test_mpirun_every_rank_compiles(tmp_path):
    script = tmp_path / "bcast.py"
    script.write_text(BCAST)
    r = subprocess.run(["mpirun", "-np", "4", "--oversubscribe", sys.executable, str(script)],
                       env=child_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert r.stdout.count("ok") == 4, r.stdout
    no_cmake(tmp_path)
    assert compiles(tmp_path, "conc_bcast.cpp") == 1


XDIST_TESTS = textwrap.dedent("""\
    import numpy as np, dace
    N = dace.symbol('N')

    def test_scale():
        @dace.program
        def prog(x: dace.float64[N]):
            x[:] = 3.0 * x
        s = prog.to_sdfg(); s.name = 'conc_xdist_scale'
        x = np.arange(4.0); s.compile()(x=x, N=4)
        assert np.allclose(x, 3 * np.arange(4.0))

    def test_shift():
        @dace.program
        def prog(x: dace.float64[N]):
            x[:] = x + 5.0
        s = prog.to_sdfg(); s.name = 'conc_xdist_shift'
        x = np.arange(4.0); s.compile()(x=x, N=4)
        assert np.allclose(x, np.arange(4.0) + 5)
    """)


def test_two_xdist_workers_share_a_cache(tmp_path):
    pytest.importorskip("xdist")
    (tmp_path / "test_shared.py").write_text(XDIST_TESTS)
    # `--dist each`: both workers run both tests at once, into one build folder and cache.
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "each",
                        "test_shared.py"], env=child_env(tmp_path), cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "4 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    no_cmake(tmp_path)
    assert compiles(tmp_path, "conc_xdist_scale.cpp") == 1
    assert compiles(tmp_path, "conc_xdist_shift.cpp") == 1


def _kill_when_stalled(proc, marker):
    deadline = time.time() + 120
    while not marker.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the builder ended before its compiler stalled:\n{out[-2000:]}\n{err[-3000:]}")
        if time.time() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("the builder's compiler never started")
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the builder, its compiler wrapper and the compiler
    proc.communicate()


def test_builder_killed_mid_build_leaves_nothing_finished(tmp_path):
    # sdfgc.build: a builder SIGKILLed while its compiler runs (holding the
    # entry's lock, its private folder half done); the next build compiles
    # again and is right, and the killed one's folder is gone.
    path = os.path.join(CORPUS, "jacobi_1d", "program.sdfg")
    marker = tmp_path / "stalled"
    env = child_env(tmp_path, SDFGC_TEST_STALL=str(marker), SDFGC_TEST_STALL_ON="-shared")
    cache = str(tmp_path / "build-cache")
    code = "import sys, sdfgc; sdfgc.build(sys.argv[1], build_dir=sys.argv[2], compiler=sys.argv[3])"
    proc = subprocess.Popen([sys.executable, "-c", code, path, cache, env["CXX"]], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    _kill_when_stalled(proc, marker)
    assert leftovers(cache)  # its private folder is there ...
    assert not [e for e in os.listdir(cache) if not e.startswith(".")]  # ... and no entry
    lib = sdfgc.build(path, build_dir=cache, compiler=env["CXX"])  # the lock was released with the process
    assert not lib.cached
    assert leftovers(cache) == []
    run_case(lib, "jacobi_1d")


def test_dace_compile_killed_mid_build_then_another_process_compiles(tmp_path):
    # The switch: a process killed while it compiles the program (its lock
    # held, DaCe's folder maybe half written); the next one compiles it in
    # the same build folder and cache, without CMake.
    script = tmp_path / "axpy.py"
    script.write_text(AXPY)
    marker = tmp_path / "stalled"
    first = subprocess.Popen([sys.executable, str(script), "conc_killed"], cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True,
                             env=child_env(tmp_path, SDFGC_TEST_STALL=str(marker),
                                           SDFGC_TEST_STALL_ON="conc_killed.cpp"))
    _kill_when_stalled(first, marker)
    assert not [e for e in os.listdir(tmp_path / "cache" / "dace-lib") if not e.startswith(".")]
    r = subprocess.run([sys.executable, str(script), "conc_killed"], env=child_env(tmp_path), cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.split()[-1] == "ok", r.stderr[-3000:]
    no_cmake(tmp_path)
    assert compiles(tmp_path, "conc_killed.cpp") == 2  # the killed one and the one that finished
    assert leftovers(tmp_path / "cache" / "dace-lib") == []


# ---- a library that calls MPI, loaded in a process without MPI ----

MPI_FIXTURE = os.path.join(REPO, "fixtures", "mpi", "allreduce_sum.sdfg")


@pytest.fixture(scope="module")
def unlinked_mpi_library(tmp_path_factory):
    """liballreduce_sum.so compiled with MPI's headers but without its
    libraries (as `g++ -shared` builds it), and one that links a libmpi
    that is gone."""
    if not shutil.which("mpicxx"):
        pytest.skip("needs mpicxx (MPI's headers)")
    tmp_path = tmp_path_factory.mktemp("unlinked-mpi")
    out = tmp_path / "gen"
    subprocess.run([sdfgc.binary(), MPI_FIXTURE, "-o", str(out)], check=True)
    includes = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True).stdout.split()
    base = ["g++", "-std=c++17", "-O0", "-fPIC", "-shared", *includes, str(out / "allreduce_sum.cpp")]
    unlinked = out / "liballreduce_sum.so"
    subprocess.run([*base, "-o", str(unlinked)], check=True)
    fake = tmp_path / "fake-mpi"
    fake.mkdir()
    (fake / "empty.c").write_text("int sdfgc_fake_mpi;\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libmpi.so.99", str(fake / "empty.c"), "-o",
                    str(fake / "libmpi.so")], check=True)
    gone = tmp_path / "gone" / "liballreduce_sum.so"
    gone.parent.mkdir()
    subprocess.run([*base, "-o", str(gone), "-Wl,--no-as-needed", f"-L{fake}", "-lmpi"], check=True)
    shutil.rmtree(fake)
    return unlinked, gone


LOAD_WITHOUT_MPI = textwrap.dedent("""\
    import sys, sdfgc
    for path in sys.argv[1:]:
        try:
            sdfgc.load_library(path, "allreduce_sum")
            print("LOADED")
        except sdfgc.MpiLoadError as e:
            print("MPI-ERROR", e)
        except OSError as e:
            print("OSERROR", e)
    """)


def test_loading_an_mpi_library_without_mpi_names_program_and_remedy(unlinked_mpi_library, tmp_path):
    unlinked, gone = unlinked_mpi_library
    env = child_env(tmp_path)  # a fresh process: nothing has loaded MPI
    r = subprocess.run([sys.executable, "-c", LOAD_WITHOUT_MPI, str(unlinked), str(gone)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.strip().splitlines()
    assert first.startswith("MPI-ERROR"), first
    for words in ("allreduce_sum", "calls MPI", "not linked with MPI", "Open MPI", "mpicxx", "mpi4py",
                  "LD_PRELOAD", "mpirun", "undefined symbol"):
        assert words in first, (words, first)
    assert second.startswith("MPI-ERROR") and "libmpi.so.99" in second and "LD_LIBRARY_PATH" in second, second


def test_daces_compiled_sdfg_of_an_unlinked_mpi_library(unlinked_mpi_library, tmp_path):
    # Through the switch, DaCe's CompiledSDFG (its loader stub hides the
    # loader's message) raises sdfgc's message instead of DaCe's.
    unlinked, _ = unlinked_mpi_library
    code = textwrap.dedent(f"""\
        import dace, sdfgc, sdfgc.dace
        from dace.codegen import compiler
        sdfgc.dace.enable()
        sdfgc.dace._stub({str(unlinked.parent)!r}, "allreduce_sum")
        sdfg = dace.SDFG.from_file({MPI_FIXTURE!r})
        try:
            compiler.get_program_handle({str(unlinked)!r}, sdfg)
            print("LOADED")
        except sdfgc.MpiLoadError as e:
            print("MPI-ERROR", e)
        """)
    env = child_env(tmp_path)
    env.pop("SDFGC_DACE")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("MPI-ERROR") and "program 'allreduce_sum'" in r.stdout and "mpicxx" in r.stdout, \
        r.stdout


def test_a_library_that_calls_no_mpi_keeps_the_loaders_message(tmp_path):
    from sdfgc._load import mpi_needs

    broken = tmp_path / "libbroken.so"
    (tmp_path / "b.c").write_text("extern int not_defined_anywhere; int f(void) { return not_defined_anywhere; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", str(tmp_path / "b.c"), "-o", str(broken)], check=True)
    assert mpi_needs(str(broken)) is None
    with pytest.raises(OSError, match="not_defined_anywhere"):
        sdfgc.load_library(str(broken))


def test_a_forked_child_does_not_keep_a_lock(tmp_path):
    # multiprocessing's `fork` copies the lock's descriptor into the child;
    # a flock lasts while any copy is open, so the child closes its copy.
    import multiprocessing

    from sdfgc._locks import FileLock

    held = FileLock(str(tmp_path / "x.lock"))
    held.acquire()
    child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(5,))
    child.start()
    try:
        held.release()
        other = FileLock(str(tmp_path / "x.lock"))
        deadline = time.time() + 3  # the child closes its copy right after the fork
        while not other.acquire(blocking=False):
            assert time.time() < deadline, "the forked child holds the lock"
            time.sleep(0.02)
        other.release()
    finally:
        child.terminate()
        child.join()
