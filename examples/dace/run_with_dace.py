#!/usr/bin/env python3
"""The drop-in proof: a library that sdfgc built, loaded and called through
DaCe's own ``CompiledSDFG`` the way gt4py does it.

Steps: sdfgc generates ``<name>.cpp`` from a fixture SDFG, g++ builds
``lib<name>.so`` (plus DaCe's loader stub ``libdacestub_<name>.so``, which
``ReloadableDLL`` needs next to the library); then, with DaCe 1.0.2:

    csdfg = CompiledSDFG(sdfg, ReloadableDLL(lib_path, sdfg.name))
    csdfg.initialize(**kwargs)
    for storage, nbytes in csdfg.get_workspace_sizes().items():
        csdfg.set_workspace(storage, <nbytes, aligned>)
    argtuple, initargs = csdfg._construct_args(kwargs)   # gt4py caches these
    csdfg.fast_call(argtuple, initargs, do_gpu_check=True)

and the outputs are compared with the fixture's expected outputs (case.json
tolerances). A second call reuses the cached arguments with the inputs
restored in place and the workspace filled with 0xFF first.

Usage (needs DaCe: ``bash scripts/install-test-tools.sh`` makes build/venv-dace):

    build/venv-dace/bin/python examples/dace/run_with_dace.py \
        --case fixtures/corpus/seed_external_2d [--variant program.sdfg] \
        [--sdfgc target/release/sdfgc] [--mode external] [--workdir DIR]

The variant must have External transients (``program.external.sdfg``, or an
SDFG that already has them): DaCe's CompiledSDFG only queries the workspace of
storages with External data in the SDFG it was given. Prints one JSON line;
exit status 0 iff every output matches.
"""

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import dace
from dace.codegen.compiled_sdfg import CompiledSDFG, ReloadableDLL
from dace.sdfg import infer_types


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stdout}")


def build_library(args, sdfg_path, name, workdir):
    """sdfgc + g++: returns the path of lib<name>.so (and builds DaCe's stub beside it)."""
    cmd = [args.sdfgc, sdfg_path, "--target", "cpp", "-o", workdir]
    if args.mode:
        cmd += ["--mode", args.mode]
    run(cmd)
    lib = os.path.join(workdir, f"lib{name}.so")
    run(["g++", "-std=c++17", "-O2", "-fopenmp", "-fPIC", "-shared",
         os.path.join(workdir, f"{name}.cpp"), "-o", lib])
    stub_src = os.path.join(os.path.dirname(dace.__file__), "codegen", "tools", "dacestub.cpp")
    run(["g++", "-std=c++14", "-O2", "-fopenmp", "-fPIC", "-shared", stub_src,
         "-o", os.path.join(workdir, f"libdacestub_{name}.so"), "-ldl"])
    return lib


def load_arguments(case_dir, case):
    """Keyword arguments of the program: arrays from the fixture's .in.bin files, scalars, symbols."""
    kwargs = {}
    for a in case["args"]:
        dtype = np.dtype(a["dtype"])
        if a["kind"] == "array":
            if "file" in a and a.get("role") != "out":
                data = np.fromfile(os.path.join(case_dir, a["file"]), dtype=dtype)
                kwargs[a["name"]] = data.reshape(a["shape"]).copy()
            else:
                kwargs[a["name"]] = np.zeros(a["shape"], dtype=dtype)
        else:
            if "value" in a:
                kwargs[a["name"]] = dtype.type(a["value"])
            else:
                kwargs[a["name"]] = np.fromfile(os.path.join(case_dir, a["file"]), dtype=dtype)[0]
    for k, v in case.get("symbols", {}).items():
        kwargs[k] = v
    return kwargs


def compare(case_dir, case, kwargs):
    """Per output: (ok, max abs error) against the fixture's expected values."""
    results = {}
    for o in case["outputs"]:
        expected = np.fromfile(os.path.join(case_dir, o["file"]), dtype=np.dtype(o["dtype"]))
        got = np.asarray(kwargs[o["name"]]).reshape(-1)
        ok = got.shape == expected.shape and bool(
            np.allclose(got, expected, rtol=o.get("rtol", 1e-7), atol=o.get("atol", 0.0)))
        err = float(np.max(np.abs(got - expected))) if got.shape == expected.shape else None
        results[o["name"]] = {"ok": ok, "max_abs_err": err}
    return results


def aligned_buffer(nbytes, align):
    """A numpy uint8 array of nbytes whose data pointer is a multiple of align."""
    raw = np.empty(nbytes + align, dtype=np.uint8)
    offset = (-raw.ctypes.data) % align
    return raw[offset:offset + nbytes]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", required=True, help="fixture directory with case.json")
    ap.add_argument("--variant", default="program.external.sdfg", help="SDFG file in the case directory")
    ap.add_argument("--sdfgc", default=shutil.which("sdfgc") or "sdfgc", help="the sdfgc executable")
    ap.add_argument("--mode", help="sdfgc --mode (default: the lifetimes stored in the SDFG)")
    ap.add_argument("--workdir", help="where to build (default: a temporary directory)")
    args = ap.parse_args()

    case_dir = os.path.abspath(args.case)
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    sdfg_path = os.path.join(case_dir, args.variant)
    sdfg = dace.SDFG.from_file(sdfg_path)
    # What DaCe's code generation does to the SDFG before it builds a CompiledSDFG
    # (gt4py holds the SDFG in this state): Default storages become concrete
    # (CPU_Heap), which names the workspace functions CompiledSDFG looks up.
    infer_types.infer_connector_types(sdfg)
    infer_types.set_default_schedule_and_storage_types(sdfg, None)
    workdir = args.workdir or tempfile.mkdtemp(prefix="sdfgc-dace-")
    os.makedirs(workdir, exist_ok=True)
    lib = build_library(args, sdfg_path, sdfg.name, workdir)

    # DaCe's own loader around sdfgc's library.
    csdfg = CompiledSDFG(sdfg, ReloadableDLL(lib, sdfg.name))
    kwargs = load_arguments(case_dir, case)
    pristine = {k: v.copy() for k, v in kwargs.items() if isinstance(v, np.ndarray)}

    csdfg.initialize(**kwargs)
    sizes = csdfg.get_workspace_sizes()
    if not sizes:
        sys.exit(f"error: {args.variant} has no External transients: DaCe queries no workspace")
    workspaces = {}
    for storage, nbytes in sizes.items():
        # sdfgc exports the alignment it needs; DaCe's own libraries do not (64 is safe for CPU).
        align_fn = csdfg.get_exported_function(f"__sdfgc_workspace_alignment_{storage.name}", ctypes.c_size_t)
        align = align_fn() if align_fn is not None else 64
        ws = aligned_buffer(max(int(nbytes), 1), int(align))
        csdfg.set_workspace(storage, ws)
        workspaces[storage.name] = {"bytes": int(nbytes), "alignment": int(align), "buffer": ws}

    # gt4py's fast path: construct (and cache) the C arguments once, then fast_call.
    argtuple, initargtuple = csdfg._construct_args(kwargs)
    csdfg.fast_call(argtuple, initargtuple, do_gpu_check=True)
    first = compare(case_dir, case, kwargs)

    # Again with the cached arguments: inputs restored in place, workspace poisoned.
    for k, v in pristine.items():
        np.copyto(kwargs[k], v)
    for w in workspaces.values():
        w["buffer"].fill(0xFF)
    csdfg.fast_call(argtuple, initargtuple, do_gpu_check=True)
    second = compare(case_dir, case, kwargs)
    csdfg.finalize()

    ok = all(r["ok"] for r in first.values()) and all(r["ok"] for r in second.values())
    print(json.dumps({
        "case": case["name"],
        "sdfg": sdfg.name,
        "dace": dace.__version__,
        "library": lib,
        "workspaces": {k: {"bytes": v["bytes"], "alignment": v["alignment"]} for k, v in workspaces.items()},
        "dace_workspace_bytes": case.get("dace_workspace_bytes"),
        "outputs": first,
        "outputs_second_call": second,
        "status": "ok" if ok else "mismatch",
    }))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
