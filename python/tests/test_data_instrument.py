"""DaCe's data instrumentation through sdfgc (fixtures/instrument, made by
scripts/make-instrument-fixtures.py): the library built from save.sdfg
writes the report that DaCe's own reader (`InstrumentedDataReport`, what
`SDFG.get_instrumented_data()` returns) reads, and the one built from
restore.sdfg reads it back through `__dace_set_instrumented_data_report`."""
import ctypes
import json
import os
import subprocess

import numpy as np
import pytest

import sdfgc
from conftest import REPO

FIXTURES = os.path.join(REPO, "fixtures", "instrument")
N = 5
CT = {"double *": ctypes.c_void_p, "int64_t": ctypes.c_int64, "int": ctypes.c_int}


def build(kind, tmp_path, data_folder):
    """sdfgc's C++ of fixtures/instrument/<kind>.sdfg, built warning-free."""
    out = tmp_path / kind
    subprocess.run([sdfgc.binary(), os.path.join(FIXTURES, f"{kind}.sdfg"), "-o", str(out),
                    "--data-folder", str(data_folder)], check=True)
    lib = out / "libdinstr.so"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-fPIC", "-shared",
                    str(out / "dinstr.cpp"), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib))


def run(lib, A, B, before_call=None):
    """init, the program on A and B, exit (arguments by the exported signature)."""
    sig = lib.__sdfgc_signature_dinstr
    sig.restype = ctypes.c_char_p
    sig = json.loads(sig().decode())
    values = {"A": A.ctypes.data, "B": B.ctypes.data, "N": N}
    init = lib.__dace_init_dinstr
    init.restype = ctypes.c_void_p
    state = ctypes.c_void_p(init(*[CT[t](values[n]) for n, t in sig["init"]]))
    if before_call:
        before_call(state)
    lib.__program_dinstr(state, *[CT[t](values[n]) for n, t in sig["program"]])
    assert lib.__dace_exit_dinstr(state) == 0


def test_save_writes_dace_report_and_restore_reads_it(tmp_path):
    dace = pytest.importorskip("dace")
    from dace.codegen.instrumentation.data.data_report import InstrumentedDataReport

    data = tmp_path / "data"
    A = np.arange(N, dtype=np.float64) + 0.5
    B = np.full(N, -1.0)
    run(build("save", tmp_path, data), A, B)
    (stamp,) = os.listdir(data)  # one report, named by the init's time in ms
    assert stamp.isdigit()
    report = InstrumentedDataReport(dace.SDFG.from_file(os.path.join(FIXTURES, "save.sdfg")), str(data / stamp))
    assert set(report.keys()) == {"A", "tmp", "__tmp1", "__tmp2", "B", "N", "i"}
    assert np.array_equal(report["A"], A)
    # tmp: after its state, then in the loop's state when i == 1 only
    assert [f.rsplit("/", 1)[1] for f in report.files["tmp"]] == ["0_0_4_0.bin", "0_3_0_0.bin"]
    for t in report["tmp"]:
        assert np.array_equal(t, A + 1)
    expected_b = np.full(N, -1.0)
    expected_b[:2] = 2 * (A[:2] + 1)
    assert np.array_equal(report["B"], expected_b)
    assert report["__tmp2"].shape == (1,) and report["__tmp2"][0] == 2 * (A[1] + 1)
    # symbols, each state: the start (0), the loop's guard once before the
    # loop (1), the body per iteration (3), the end (2); i is 0 before the loop
    assert [int(v) for v in report["i"]] == [0, 0, 3, 0, 1, 2]
    assert [int(v) for v in report["N"]] == [N] * 6

    # the report's A (modified by DaCe's reader) restored into a call on zeros
    report["A"][:] = A * 10
    report.update_report()
    A0, B0 = np.zeros(N), np.zeros(N)
    lib = build("restore", tmp_path, tmp_path / "unused")
    lib.__dace_set_instrumented_data_report.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    run(lib, A0, B0, lambda s: lib.__dace_set_instrumented_data_report(s, str(data / stamp).encode()))
    assert np.array_equal(A0, A * 10)
    assert np.array_equal(B0[:3], 2 * (A[:3] * 10 + 1)) and np.array_equal(B0[3:], np.zeros(N - 3))
    assert not (tmp_path / "unused").exists()  # restoring saves nothing
