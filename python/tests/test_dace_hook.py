"""sdfgc.dace: DaCe's SDFG.compile() generating through sdfgc (DaCe 1.0.2 or 2.x)."""
import ctypes
import json
import os

import numpy as np
import pytest

import dace  # noqa: E402  (required: a missing DaCe fails these tests)
import sdfgc  # noqa: E402
import sdfgc.dace  # noqa: E402


@pytest.fixture(autouse=True)
def build_folder(tmp_path, monkeypatch):
    log = tmp_path / "sdfgc.log"
    monkeypatch.setenv("SDFGC_DACE_LOG", str(log))
    dace.Config.set("default_build_folder", value=str(tmp_path / "dacecache"))
    yield log
    sdfgc.dace.disable()


def axpy_sdfg(name):
    N = dace.symbol("N")

    @dace.program
    def prog(a: dace.float64, x: dace.float64[N], y: dace.float64[N]):
        y[:] = a * x + y

    sdfg = prog.to_sdfg()
    sdfg.name = name
    return sdfg


@pytest.mark.parametrize("mode", [None, "external", "persistent"])
def test_compile_goes_through_sdfgc(build_folder, mode):
    sdfgc.dace.enable(mode=mode)
    sdfg = axpy_sdfg(f"hook_axpy_{mode or 'default'}")
    lib = sdfg.compile()
    x, y = np.arange(10.0), np.ones(10)
    lib(a=2.0, x=x, y=y, N=10)
    assert np.allclose(y, 2 * np.arange(10.0) + 1)
    assert f"compiled {sdfg.name}" in build_folder.read_text()
    # DaCe loaded sdfgc's library: it states its parameter lists.
    assert sdfgc.dace.check_abi(lib) is True


def test_refused_sdfg_raises_with_sdfgcs_message():
    sdfgc.dace.enable()
    sdfg = dace.SDFG("hook_refused")
    sdfg.add_array("a", [4], dace.float64)
    st = sdfg.add_state()
    t = st.add_tasklet("t", {}, {"o"}, "o = 1", language=dace.Language.CPP)
    t.environments = {"dace.libraries.blas.environments.cublas.cuBLAS"}
    st.add_edge(t, "o", st.add_write("a"), None, dace.Memlet("a[0]"))
    with pytest.raises(sdfgc.SdfgcError, match="library environment 'cuBLAS'"):
        sdfg.compile()


def test_abi_mismatch_raises_with_both_lists(build_folder):
    sdfgc.dace.enable()
    lib = axpy_sdfg("hook_abi").compile()

    class Stated:  # a library that states a stray stride symbol
        def get_symbol(self, name, restype=ctypes.c_int):
            return lambda: b'{"program":[["x","double *"],["y","double *"],["N","int"],["__x_stride","int"],' \
                           b'["a","double"]],"init":[["N","int"]]}'

    real, lib._lib = lib._lib, Stated()
    try:
        with pytest.raises(sdfgc.dace.SdfgcAbiError, match="__x_stride"):
            sdfgc.dace.check_abi(lib)
    finally:
        lib._lib = real


def test_disable_restores_daces_generator(build_folder):
    sdfgc.dace.enable()
    sdfgc.dace.disable()
    axpy_sdfg("hook_disabled").compile()
    assert not build_folder.exists() or "compiled hook_disabled" not in build_folder.read_text()


def test_library_built_before_disable_still_gets_its_workspace(build_folder):
    # An external-mode library's workspace is set on its first call, which
    # may come after the switch is turned off again.
    sdfgc.dace.enable(mode="external")
    lib = axpy_sdfg("hook_disable_then_call").compile()
    sdfgc.dace.disable()
    x, y = np.arange(6.0), np.ones(6)
    lib(a=3.0, x=x, y=y, N=6)
    assert np.allclose(y, 3 * np.arange(6.0) + 1)
    assert sdfgc.dace.check_abi(lib) is True


def test_switch_from_environment_in_a_spawned_child(tmp_path):
    import subprocess
    import sys

    code = ("import dace, numpy as np\n"
            "N = dace.symbol('N')\n"
            "@dace.program\n"
            "def p(x: dace.float64[N]):\n"
            "    x[:] = x + 1\n"
            "s = p.to_sdfg(); s.name = 'hook_child'\n"
            "x = np.zeros(3); s.compile()(x=x, N=3); assert (x == 1).all()\n")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, SDFGC_DACE="1", SDFGC_DACE_LOG=str(tmp_path / "child.log"),
               DACE_default_build_folder=str(tmp_path / "cache"))
    if os.path.dirname(os.path.dirname(os.path.abspath(sdfgc.__file__))) == here:
        # a source checkout: its sitecustomize does what the installed .pth does
        env["PYTHONPATH"] = os.pathsep.join([here, os.path.join(here, "sdfgc", "_startup")])
    else:  # pip-installed: SDFGC_DACE=1 alone switches the child (sdfgc-dace-switch.pth)
        env.pop("PYTHONPATH", None)
    script = tmp_path / "child.py"  # DaCe's frontend reads the program's source
    script.write_text(code)
    subprocess.run([sys.executable, str(script)], env=env, check=True, cwd=tmp_path)
    assert "compiled hook_child" in (tmp_path / "child.log").read_text()


def test_switch_in_spawn_workers(tmp_path):
    # gt4py compiles in multiprocessing `spawn` workers: the switch must hold there
    import subprocess
    import sys

    script = tmp_path / "spawner.py"
    script.write_text(
        "import multiprocessing as mp\n"
        "def probe(_):\n"
        "    import sdfgc.dace\n"
        "    before = sdfgc.dace.enabled()\n"
        "    import dace  # noqa: F401  (the switch waits for DaCe's import)\n"
        "    return before, sdfgc.dace.enabled()\n"
        "if __name__ == '__main__':\n"
        "    with mp.get_context('spawn').Pool(1) as pool:\n"
        "        print(pool.map(probe, [0]))\n")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, SDFGC_DACE="1")
    if os.path.dirname(os.path.dirname(os.path.abspath(sdfgc.__file__))) == here:
        env["PYTHONPATH"] = os.pathsep.join([here, os.path.join(here, "sdfgc", "_startup")])
    else:
        env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[(False, True)]"


def compile_and_check_gemv(name):
    """Compiles y = A @ x (a MatMul library node) through DaCe's compile()
    and checks one call; returns the generated C++."""
    M, N = dace.symbol("M"), dace.symbol("N")

    @dace.program
    def gemv(A: dace.float64[M, N], x: dace.float64[N], y: dace.float64[M]):
        y[:] = A @ x

    sdfg = gemv.to_sdfg()
    sdfg.name = name
    lib = sdfg.compile()
    A, x, y = np.arange(12.0).reshape(4, 3).copy(), np.arange(3.0), np.zeros(4)
    lib(A=A, x=x, y=y, M=4, N=3)
    assert np.allclose(y, A @ x)
    with open(os.path.join(sdfg.build_folder, "src", "cpu", f"{name}.cpp")) as fh:
        return fh.read()


def test_library_node_arguments_match_daces(build_folder):
    # DaCe's generator expands library nodes on the SDFG that CompiledSDFG
    # later takes its argument list from; the expansion of A @ x uses M.
    sdfgc.dace.enable()
    assert "cblas_" not in compile_and_check_gemv("hook_gemv")


def test_blas_calls_link_through_daces_own_environment(build_folder):
    # `--blas openblas` code calls cblas_*: the build must link
    # OpenBLAS (its own environment), or the library would not load.
    sdfgc.dace.enable(blas="openblas")
    assert "cblas_dgemv" in compile_and_check_gemv("hook_blas_gemv")


@pytest.fixture
def no_cmake(tmp_path, monkeypatch):
    """A `cmake` on PATH that fails when called, and a fresh library cache."""
    bin_dir = tmp_path / "failing-bin"
    bin_dir.mkdir()
    (bin_dir / "cmake").write_text("#!/bin/sh\necho 'cmake must not run' >&2\nexit 1\n")
    (bin_dir / "cmake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SDFGC_CACHE_DIR", str(tmp_path / "sdfgc-cache"))
    return tmp_path


def library_path(sdfg):
    from dace.codegen import compiler

    try:
        return str(compiler.get_binary_name(sdfg.build_folder, sdfg.name))
    except TypeError:  # DaCe 2.x names the parameter sdfg_name
        return str(compiler.get_binary_name(object_folder=sdfg.build_folder, sdfg_name=sdfg.name))


def test_enable_builds_without_cmake(build_folder, no_cmake):
    sdfgc.dace.enable()
    sdfg = axpy_sdfg("hook_nocmake")
    lib = sdfg.compile()
    x, y = np.arange(7.0), np.ones(7)
    lib(a=2.0, x=x, y=y, N=7)
    assert np.allclose(y, 2 * np.arange(7.0) + 1)
    assert sdfgc.dace.check_abi(lib) is True
    folder = sdfg.build_folder
    found = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs]
    assert not [f for f in found if os.path.basename(f) in ("CMakeCache.txt", "cmake_configure.sh")], found
    # what DaCe's loader and cache look for: the library at get_binary_name's
    # path, the loader stub next to it, the sources where DaCe keeps them
    assert os.path.isfile(library_path(sdfg))
    assert os.path.isfile(os.path.join(os.path.dirname(library_path(sdfg)), "libdacestub_hook_nocmake.so"))
    assert os.path.isfile(os.path.join(folder, "src", "cpu", "hook_nocmake.cpp"))


def test_relative_cache_dir(build_folder, no_cmake, monkeypatch):
    # `SDFGC_CACHE_DIR=cache`, relative to where the session runs: the
    # compiler runs in a folder of its own, where a relative precompiled
    # header or library path would name nothing.
    monkeypatch.chdir(no_cmake)
    monkeypatch.setenv("SDFGC_CACHE_DIR", "relative-cache")
    sdfgc.dace.enable()
    lib = axpy_sdfg("hook_relative_cache").compile()
    x, y = np.arange(5.0), np.zeros(5)
    lib(a=3.0, x=x, y=y, N=5)
    assert np.allclose(y, 3 * np.arange(5.0))
    assert os.listdir(no_cmake / "relative-cache" / "dace-lib")


def test_use_cache_reuses_the_library_in_the_build_folder(build_folder, no_cmake):
    sdfgc.dace.enable()
    first = axpy_sdfg("hook_use_cache")
    first.compile(return_program_handle=False)
    path = library_path(first)
    stamp = os.stat(path).st_mtime_ns
    dace.Config.set("compiler", "use_cache", value=True)
    try:
        again = axpy_sdfg("hook_use_cache")
        lib = again.compile()
    finally:
        dace.Config.set("compiler", "use_cache", value=False)
    assert os.stat(path).st_mtime_ns == stamp  # nothing rebuilt or rewritten
    assert build_folder.read_text().count("compiled hook_use_cache") == 1  # sdfgc ran once
    x, y = np.arange(4.0), np.zeros(4)
    lib(a=1.0, x=x, y=y, N=4)
    assert np.allclose(y, np.arange(4.0))


def test_library_cache_is_shared_by_processes_and_build_folders(tmp_path, no_cmake):
    # Two processes, two build folders, one sdfgc cache: the second copies
    # the first one's library instead of compiling.
    import subprocess
    import sys

    script = tmp_path / "child.py"
    script.write_text(
        "import sys, numpy as np, dace, sdfgc.dace\n"
        "from sdfgc import _dace_build\n"
        "dace.Config.set('default_build_folder', value=sys.argv[1])\n"
        "sdfgc.dace.enable()\n"
        "N = dace.symbol('N')\n"
        "@dace.program\n"
        "def p(x: dace.float64[N]):\n"
        "    x[:] = x * 2\n"
        "s = p.to_sdfg(); s.name = 'hook_two_procs'\n"
        "x = np.ones(3); s.compile()(x=x, N=3); assert (x == 2).all()\n"
        "print('hit' if _dace_build.timings[-1]['hit'] else 'built')\n")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    if os.path.dirname(os.path.dirname(os.path.abspath(sdfgc.__file__))) == here:
        env["PYTHONPATH"] = here
    runs = [subprocess.run([sys.executable, str(script), str(tmp_path / f"folder{i}")], env=env, cwd=tmp_path,
                           capture_output=True, text=True) for i in range(2)]
    assert [r.returncode for r in runs] == [0, 0], [r.stderr[-2000:] for r in runs]
    assert [r.stdout.split()[-1] for r in runs] == ["built", "hit"]


def test_environment_link_flags_without_cmake(build_folder, no_cmake):
    # `--blas openblas`: the library links OpenBLAS (sdfgc's table for
    # DaCe's OpenBLAS environment) with no CMake to find it.
    sdfgc.dace.enable(blas="openblas")
    assert "cblas_dgemv" in compile_and_check_gemv("hook_blas_nocmake")
    cache = os.path.join(os.environ["SDFGC_CACHE_DIR"], "dace-lib")
    commands = []
    for entry in os.listdir(cache):
        if entry.startswith("."):  # .locks
            continue
        with open(os.path.join(cache, entry, "library.json")) as fh:
            commands.append(json.load(fh)["command"])
    assert len(commands) == 1 and "-lopenblas" in commands[0], commands


def test_flags_of_an_environment_class(no_cmake):
    from sdfgc import _dace_build

    @dace.library.environment
    class SdfgcTestEnv:
        cmake_minimum_version = None
        cmake_packages = []
        cmake_variables = {}
        cmake_includes = ["/opt/sdfgc-test/include"]
        cmake_libraries = ["m", "/opt/sdfgc-test/lib/libx.so"]
        cmake_compile_flags = ["-DSDFGC_TEST_ENV=1"]
        cmake_link_flags = ["-Wl,--as-needed", "${SOME_CMAKE_VAR}"]
        cmake_files = []
        headers = []
        state_fields = []
        init_code = ""
        finalize_code = ""
        dependencies = []

    @dace.library.environment
    class SdfgcPackageEnv:
        cmake_minimum_version = None
        cmake_packages = ["SomePackage"]
        cmake_variables = {}
        cmake_includes = []
        cmake_libraries = []
        cmake_compile_flags = []
        cmake_link_flags = []
        cmake_files = []
        headers = []
        state_fields = []
        init_code = ""
        finalize_code = ""
        dependencies = []

    name = SdfgcTestEnv.full_class_path()
    cflags, lflags = _dace_build.environment_flags({name, "dace.libraries.blas.environments.openblas.OpenBLAS"})
    assert cflags == ["-I/opt/sdfgc-test/include", "-DSDFGC_TEST_ENV=1"]
    assert lflags == ["-lopenblas", "-lm", "/opt/sdfgc-test/lib/libx.so", "-Wl,--as-needed"]
    with pytest.raises(sdfgc.SdfgcError, match="SdfgcPackageEnv.*SomePackage"):
        _dace_build.environment_flags({SdfgcPackageEnv.full_class_path()})


def test_refused_sdfg_raises_without_cmake(no_cmake):
    sdfgc.dace.enable()
    sdfg = dace.SDFG("hook_refused_nocmake")
    sdfg.add_array("a", [4], dace.float64)
    st = sdfg.add_state()
    t = st.add_tasklet("t", {}, {"o"}, "o = 1", language=dace.Language.CPP)
    t.environments = {"dace.libraries.blas.environments.cublas.cuBLAS"}
    st.add_edge(t, "o", st.add_write("a"), None, dace.Memlet("a[0]"))
    with pytest.raises(sdfgc.SdfgcError, match="library environment 'cuBLAS'"):
        sdfg.compile()


def test_gpu_sdfgs_get_daces_gpu_backend_without_a_target(monkeypatch):
    """gt4py's GPU backend hands DaCe GPU SDFGs: with no `target` given, they
    are generated for DaCe's `compiler.cuda.backend`, CPU SDFGs for the CPU."""
    from dace.codegen import codegen

    monkeypatch.setenv("NVCC", "true")  # generation only: the compile it starts is not awaited
    sdfgc.dace.enable()
    cpu = axpy_sdfg("hook_target_cpu")
    gpu = axpy_sdfg("hook_target_gpu")
    gpu.apply_gpu_transformations()
    assert sdfgc.dace._target_for(cpu, {}) == "cpp"
    assert sdfgc.dace._target_for(gpu, {}) == "cuda"
    assert sdfgc.dace._target_for(cpu, {"offload": True}) == "cuda"
    assert sdfgc.dace._target_for(gpu, {"target": "hip"}) == "hip"
    # GPU storage alone, no GPU map (a device-to-device copy: gt4py's
    # copy_cell_kdim_field_to_vp); DaCe 2.x's GPU_STORAGES omits GPU_Global.
    copy = dace.SDFG("hook_target_copy")
    copy.add_array("a", [4], dace.float64, storage=dace.StorageType.GPU_Global)
    copy.add_array("b", [4], dace.float64, storage=dace.StorageType.GPU_Global)
    st = copy.add_state()
    st.add_nedge(st.add_read("a"), st.add_write("b"), dace.Memlet("a[0:4]"))
    assert sdfgc.dace._target_for(copy, {}) == "cuda"
    with dace.config.set_temporary("compiler", "cuda", "backend", value="hip"):
        assert sdfgc.dace._target_for(gpu, {}) == "hip"
    # The whole hook (no compiler needed): sdfgc's CUDA translation unit.
    objs = codegen.generate_code(gpu)
    main = [o for o in objs if o.name == gpu.name and o.language == "cu"]
    assert main and "__global__" in main[0].clean_code, [(o.name, o.language) for o in objs]


def test_generating_gpu_code_needs_no_gpu_compiler(monkeypatch):
    """DaCe's `generate_code` never compiles: through sdfgc it works where
    nvcc cannot be run (DaCe's own tests generate GPU code on CPU machines);
    the compile step names the missing compiler."""
    from dace.codegen import codegen

    monkeypatch.setenv("NVCC", "/nonexistent/nvcc")
    sdfgc.dace.enable()
    gpu = axpy_sdfg("hook_no_nvcc")
    gpu.apply_gpu_transformations()
    objs = codegen.generate_code(gpu)
    assert any(o.language == "cu" and "__global__" in o.clean_code for o in objs)
    with pytest.raises(sdfgc.CompilerError, match="nvcc"):
        gpu.compile()
