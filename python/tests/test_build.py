"""sdfgc.build: sdfgc + the C++ compiler, the cache, errors."""
import json
import os

import pytest

import sdfgc
from conftest import CORPUS, run_case


def test_build_runs_and_the_second_build_is_a_cache_hit(cache):
    path = os.path.join(CORPUS, "jacobi_2d", "program.sdfg")
    first = sdfgc.build(path, build_dir=cache)
    assert not first.cached and first.name == "cases_dev_jacobi_2d" and os.path.exists(first)
    again = sdfgc.build(path, build_dir=cache)
    assert again.cached and again == first
    run_case(again, "jacobi_2d")


def test_cache_key_holds_options_and_sdfgc_version(cache, monkeypatch):
    path = os.path.join(CORPUS, "jacobi_2d", "program.sdfg")
    base = sdfgc.build(path, build_dir=cache)
    external = sdfgc.build(path, mode="external", build_dir=cache)
    assert not external.cached and external != base
    flagged = sdfgc.build(path, build_dir=cache, extra_flags=["-DSDFGC_TEST_FLAG"])
    assert not flagged.cached and flagged != base
    # another sdfgc version is another entry
    monkeypatch.setitem(sdfgc._binary._versions, (sdfgc.binary(), os.stat(sdfgc.binary()).st_mtime_ns),
                        "sdfgc 99.0.0")
    assert not sdfgc.build(path, build_dir=cache).cached
    assert sdfgc.version().startswith("sdfgc 99")


def test_compiler_from_the_environment_and_flags_override(cache, tmp_path, monkeypatch):
    log = tmp_path / "cxx.log"
    wrapper = tmp_path / "cxx"
    wrapper.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec g++ \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("CXX", str(wrapper))
    path = os.path.join(CORPUS, "elementwise_chain_1d", "program.sdfg")
    lib = sdfgc.build(path, build_dir=cache, flags=["-std=c++17", "-O1", "-fopenmp", "-fPIC", "-shared"])
    assert "-O1" in log.read_text() and "-O2" not in log.read_text()
    run_case(lib, "elementwise_chain_1d")


def test_refusal_carries_sdfgcs_message_with_file_and_pointer(cache, tmp_path):
    with open(os.path.join(CORPUS, "jacobi_2d", "program.sdfg")) as fh:
        data = json.load(fh)
    data["nodes"][0]["nodes"].append({"type": "NoSuchNode", "label": "x", "attributes": {}, "id": 999})
    bad = tmp_path / "bad.sdfg"
    bad.write_text(json.dumps(data))
    with pytest.raises(sdfgc.SdfgcError) as err:
        sdfgc.build(str(bad), build_dir=cache)
    msg = str(err.value)
    assert str(bad) in msg and "/nodes/0/nodes/" in msg, msg
    assert not [e for e in os.listdir(cache) if not e.startswith(("dacestub", ".locks"))]  # nothing half-built is left


def test_compiler_failure_raises(cache):
    path = os.path.join(CORPUS, "jacobi_2d", "program.sdfg")
    with pytest.raises(sdfgc.CompilerError, match="no-such-flag"):
        sdfgc.build(path, build_dir=cache, extra_flags=["--no-such-flag"])


def test_binary_is_found_and_states_its_version():
    assert os.access(sdfgc.binary(), os.X_OK)
    assert sdfgc.version().startswith("sdfgc ")


def test_installed_package_finds_its_own_binary(monkeypatch):
    import sysconfig

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.dirname(os.path.dirname(os.path.abspath(sdfgc.__file__))) == here:
        pytest.skip("a source checkout, not the installed package")
    monkeypatch.delenv("SDFGC", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert sdfgc.binary() == os.path.join(sysconfig.get_path("scripts"), "sdfgc")


def test_concurrent_builds_of_one_program_agree(cache):
    from concurrent.futures import ThreadPoolExecutor

    path = os.path.join(CORPUS, "jacobi_1d", "program.sdfg")
    with ThreadPoolExecutor(3) as pool:
        libs = list(pool.map(lambda _: sdfgc.build(path, build_dir=cache), range(3)))
    assert len(set(libs)) == 1 and os.path.exists(libs[0])
    assert [e for e in os.listdir(cache) if not e.startswith(".")] == [os.path.basename(libs[0].folder)]
    assert not [e for e in os.listdir(cache) if e.startswith(".") and e != ".locks"]  # no work folder left behind
    run_case(libs[0], "jacobi_1d")


def test_offload_with_host_or_device_arguments(cache, tmp_path):
    # A stand-in for nvcc that only creates the library file: what is
    # checked is the CUDA source sdfgc wrote for each `offload` value.
    fake = tmp_path / "fake-nvcc"
    fake.write_text('#!/bin/sh\neval last=\\${$#}\ntouch "$last"\n')
    fake.chmod(0o755)
    path = os.path.join(CORPUS, "jacobi_2d", "program.sdfg")

    def source(offload):
        lib = sdfgc.build(path, target="cuda", offload=offload, compiler=str(fake), build_dir=cache)
        with open(os.path.join(lib.folder, f"{lib.name}.cu")) as fh:
            return fh.read()

    host, device = source(True), source("device-args")
    assert "cudaMemcpyHostToDevice" in host and "<<<" in host
    assert "cudaMemcpyHostToDevice" not in device and "<<<" in device
    assert source("host-args") == host
    with pytest.raises(ValueError, match="offload must be"):
        sdfgc.build(path, target="cuda", offload="devices", compiler=str(fake), build_dir=cache)


def test_dace_cublas_calls_link_cublas(cache, tmp_path):
    # NPBench's k2mm as DaCe auto-optimized it for the GPU keeps DaCe's cuBLAS
    # calls: the CUDA library links cuBLAS without blas="cublas".
    log = tmp_path / "nvcc.log"
    fake = tmp_path / "nvcc"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n")
    fake.chmod(0o755)
    path = os.path.join(CORPUS, "..", "npbench", "k2mm", "program.gpu.autoopt.sdfg")
    sdfgc.build(path, target="cuda", compiler=str(fake), build_dir=cache)
    assert log.read_text().split()[-1] == "-lcublas", log.read_text()
