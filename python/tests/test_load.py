"""sdfgc.dace.load: DaCe's CompiledSDFG for sdfgc.build's library (DaCe 1.0.2 and 2.x)."""
import os

import pytest

import dace  # noqa: E402  (required: a missing DaCe fails these tests)
import numpy as np  # noqa: E402
import sdfgc  # noqa: E402
import sdfgc.dace  # noqa: E402


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SDFGC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SDFGC_DACE_LOG", str(tmp_path / "sdfgc.log"))
    dace.Config.set("default_build_folder", value=str(tmp_path / "dacecache"))
    yield tmp_path
    sdfgc.dace.disable()


def chain_sdfg(name):
    N = dace.symbol("N")

    @dace.program
    def prog(a: dace.float64, x: dace.float64[N], y: dace.float64[N]):
        t = a * x
        y[:] = t + y

    sdfg = prog.to_sdfg()
    sdfg.name = name
    return sdfg


def test_load_returns_daces_compiled_sdfg_and_caches():
    from dace.codegen.compiled_sdfg import CompiledSDFG

    sdfg = chain_sdfg("load_chain")
    csdfg = sdfgc.dace.load(sdfg)
    assert type(csdfg) is CompiledSDFG and sdfgc.dace.check_abi(csdfg)
    x, y = np.arange(5.0), np.ones(5)
    csdfg(a=3.0, x=x, y=y, N=5)
    assert np.allclose(y, 3 * np.arange(5.0) + 1)
    cache = os.environ["SDFGC_CACHE_DIR"]
    entries = [e for e in os.listdir(cache) if os.path.exists(os.path.join(cache, e, "library.json"))]
    assert len(entries) == 1
    assert sdfgc.build(os.path.join(cache, entries[0], "program.sdfg")).cached  # what load built is cached
    again = sdfgc.dace.load(sdfg)  # a second load is a cache hit too: the same library file
    assert again.filename.startswith(csdfg.filename)  # DaCe loads a second copy under another name


def test_load_external_mode_shares_one_workspace():
    ws = sdfgc.Workspace("CPU_Heap")
    progs = [sdfgc.dace.load(chain_sdfg(f"load_ws_{i}"), mode="external", workspace=ws) for i in range(2)]
    for n, p in zip((8, 4000), progs):
        x, y = np.arange(float(n)), np.zeros(n)
        p(a=2.0, x=x, y=y, N=n)
        assert np.allclose(y, 2 * np.arange(float(n)))
    assert ws.nbytes >= 4000 * 8  # grew to the larger call
    assert all(p._sdfgc_workspaces["CPU_Heap"] is ws for p in progs)


def while_sdfg(name):
    """A tasklet with a `while` loop: DaCe compiles it, sdfgc refuses it."""
    sdfg = dace.SDFG(name)
    sdfg.add_array("a", [4], dace.float64)
    st = sdfg.add_state()
    t = st.add_tasklet("t", {}, {"o"}, "s = 0.0\nwhile s < 3:\n    s = s + 1\no = s")
    st.add_edge(t, "o", st.add_write("a"), None, dace.Memlet("a[0]"))
    return sdfg


def test_refusal_raises_with_sdfgcs_message_never_falls_back(isolated):
    with pytest.raises(sdfgc.SdfgcError, match="/attributes/code.*'while' statement"):
        sdfgc.dace.load(while_sdfg("load_refused"))
    assert "refused" not in (isolated / "dacecache").as_posix() and not (isolated / "dacecache").exists()


def test_explicit_fallback_uses_daces_generator_and_logs(isolated):
    csdfg = sdfgc.dace.load(while_sdfg("load_fallback"), fallback=True)
    a = np.zeros(4)
    csdfg(a=a)
    assert a[0] == 3
    assert "fallback load_fallback: " in (isolated / "sdfgc.log").read_text()
    assert not sdfgc.dace.check_abi(csdfg)  # DaCe's own library


def test_fallback_in_enable_logs_every_fallback(isolated):
    sdfgc.dace.enable(fallback=True)
    a = np.zeros(4)
    while_sdfg("enable_fallback").compile()(a=a)
    assert a[0] == 3
    assert "fallback enable_fallback: " in (isolated / "sdfgc.log").read_text()


def test_load_with_blas_calls_and_links_openblas(isolated):
    M, N = dace.symbol("M"), dace.symbol("N")

    @dace.program
    def mm(A: dace.float64[M, N], B: dace.float64[N, M], C: dace.float64[M, M]):
        C[:] = A @ B

    sdfg = mm.to_sdfg()
    sdfg.name = "load_blas_mm"
    csdfg = sdfgc.dace.load(sdfg, blas="openblas")
    with open(os.path.join(os.path.dirname(csdfg.filename), "load_blas_mm.cpp")) as fh:
        assert "cblas_dgemm" in fh.read()
    A, B, C = np.random.rand(5, 3), np.random.rand(3, 5), np.zeros((5, 5))
    csdfg(A=A, B=B, C=C, M=5, N=3)
    assert np.allclose(C, A @ B)
    with pytest.raises(ValueError, match="blas must be one of"):
        sdfgc.build(os.path.join(isolated, "nothing.sdfg"), blas="mkl")


def _folder_modes():
    try:  # DaCe 2.x: "development" (build/ with sources) or "production" (gt4py's: the library on top)
        dace.Config.get("compiler", "build_folder_mode")
        return ["development", "production"]
    except KeyError:
        return [None]  # DaCe 1.x: one layout


@pytest.mark.parametrize("folder_mode", _folder_modes())
def test_enable_builds_without_cmake_as_gt4py_compiles(isolated, monkeypatch, folder_mode):
    # gt4py: compile(return_program_handle=False) in its build folder, then
    # get_program_handle on get_binary_name's path; later sessions hit
    # compiler.use_cache. A `cmake` that fails must change nothing.
    from dace.codegen import compiler

    bin_dir = isolated / "failing-bin"
    bin_dir.mkdir()
    (bin_dir / "cmake").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "cmake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    saved = {k: dace.Config.get("compiler", k) for k in ("use_cache", *(["build_folder_mode"] if folder_mode else []))}
    try:
        if folder_mode:
            dace.Config.set("compiler", "build_folder_mode", value=folder_mode)
        sdfgc.dace.enable()
        name = f"enable_gt4py_{folder_mode or 'dace1'}"
        sdfg = chain_sdfg(name)
        sdfg.build_folder = str(isolated / "gt4py-build" / name)
        sdfg.compile(validate=False, return_program_handle=False)
        folder = sdfg.build_folder
        if folder_mode:
            lib = compiler.get_binary_name(object_folder=folder, sdfg_name=name)
        else:
            lib = compiler.get_binary_name(folder, name)
        assert os.path.isfile(lib)
        assert os.path.isfile(os.path.join(os.path.dirname(lib), f"libdacestub_{name}.so"))
        files = [f for _, _, fs in os.walk(folder) for f in fs]
        assert "CMakeCache.txt" not in files and "cmake_configure.sh" not in files
        if folder_mode == "production":
            assert os.path.dirname(str(lib)) == str(folder)
            assert not any(os.path.exists(os.path.join(folder, d)) for d in ("src", "build", "dace_files.csv"))
        elif folder_mode == "development":
            assert os.path.isfile(os.path.join(folder, "src", "cpu", f"{name}.cpp"))
        csdfg = compiler.get_program_handle(lib, sdfg)
        x, y = np.arange(5.0), np.ones(5)
        csdfg(a=2.0, x=x, y=y, N=5)
        assert np.allclose(y, 2 * np.arange(5.0) + 1)
        assert sdfgc.dace.check_abi(csdfg)
        stamp = os.stat(lib).st_mtime_ns
        dace.Config.set("compiler", "use_cache", value=True)
        again = chain_sdfg(name)
        again.build_folder = folder
        again.compile(validate=False, return_program_handle=False)
        assert os.stat(lib).st_mtime_ns == stamp
        assert (isolated / "sdfgc.log").read_text().count(f"compiled {name}") == 1
    finally:
        for k, v in saved.items():
            dace.Config.set("compiler", k, value=v)
