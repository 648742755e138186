"""Shared helpers: the corpus fixtures and a small ctypes caller for them."""
import ctypes
import json
import os

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(REPO, "fixtures", "corpus")

NP = {"float64": "float64", "float32": "float32", "int32": "int32", "int64": "int64", "uint32": "uint32"}
CT = {"float64": ctypes.c_double, "float32": ctypes.c_float, "int32": ctypes.c_int32, "int64": ctypes.c_int64}


@pytest.fixture
def cache(tmp_path):
    """A fresh build cache for each test."""
    return str(tmp_path / "cache")


def case(name):
    """(folder, case.json) of a corpus case (or of `fixtures/<family>/<case>`)."""
    folder = os.path.join(REPO, "fixtures", name) if "/" in name else os.path.join(CORPUS, name)
    with open(os.path.join(folder, "case.json")) as fh:
        return folder, json.load(fh)


def run_case(lib_path, name, variant="program.sdfg", workspace=None):
    """Runs a corpus case's library with ctypes: init, the workspace (an
    sdfgc.Workspace, attached through the checked setter), the program, exit;
    asserts its outputs equal the reference files. Returns the library handle."""
    import numpy as np
    folder, meta = case(name)
    abi = meta["abi"][variant]
    lib = ctypes.CDLL(lib_path)
    sym = meta["symbols"]
    init_args = [CT[p["dtype"]](sym[p["name"]]) for p in abi["init"]["params"]]
    init = getattr(lib, abi["init"]["symbol"])
    init.restype = ctypes.c_void_p
    state = ctypes.c_void_p(init(*init_args))
    if workspace is not None:
        try:
            workspace.attach(abi["sdfg_name"], *init_args, lib=lib, handle=state)
        except Exception:
            getattr(lib, f"__dace_exit_{abi['sdfg_name']}")(state)
            raise
    args, arrays = {a["name"]: a for a in meta["args"]}, {}
    call = []
    for p in abi["program"]["params"]:
        if p["kind"] == "state":
            call.append(state)
        elif p["kind"] == "array":
            a = args[p["name"]]
            path = os.path.join(folder, a["file"]) if a.get("file") else None
            arr = np.fromfile(path, dtype=NP[a["dtype"]]) if path and os.path.exists(path) else \
                np.zeros(int(np.prod(a["shape"])), dtype=NP[a["dtype"]])
            arrays[p["name"]] = arr
            call.append(arr.ctypes.data_as(ctypes.c_void_p))
        elif p["kind"] == "scalar":
            call.append(CT[p["dtype"]](args[p["name"]]["value"]))
        else:
            call.append(CT[p["dtype"]](sym[p["name"]]))
    getattr(lib, abi["program"]["symbol"])(*call)
    for out in meta["outputs"]:
        ref = np.fromfile(os.path.join(folder, out["file"]), dtype=NP[out["dtype"]])
        assert np.allclose(arrays[out["name"]], ref, rtol=out.get("rtol", 1e-8), atol=out.get("atol", 1e-10)), \
            f"{name}: {out['name']} differs"
    if workspace is not None:
        workspace.detach(state)  # before exit frees the state
    exit_ = getattr(lib, f"__dace_exit_{abi['sdfg_name']}")
    exit_(state)
    return lib
