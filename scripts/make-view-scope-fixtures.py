#!/usr/bin/env python3
"""Makes fixtures/corpus/view_in_map_scope/: views inside a map whose data
arrives through the map's scope connectors.

Run with DaCe 1.0.2:

    /work/venv-dace1/bin/python scripts/make-view-scope-fixtures.py [OUTDIR]

Built with DaCe's SDFG API as gt4py's lowering and DaCe's auto-optimizer
place such views: a View access node inside a map, fed from the map entry
(`A[i, 0:M]`, a row; `A[0:N, j]`, a strided column) through its `views`
connector, or writing out through the map exit (`B[i, 0:M]`), with an inner
map reading / writing the view. Their offsets depend on the outer map's
parameter, so they exist per iteration. Saved as `program.sdfg` and
`program.gpu.sdfg` (the same with GPU_Global arguments and GPU_Device outer
maps, so the views live inside the kernels; DaCe's CUDA code generation is
checked, not compiled).

Check: DaCe's generated CPU code is built with g++ against DaCe's runtime
headers and run through fixtures/corpus/run_case.py on the stored inputs;
it must reproduce the numpy outputs.
"""
import os
import tempfile

import numpy as np

os.environ.setdefault("DACE_compiler_cuda_backend", "cuda")
os.environ.setdefault("DACE_default_build_folder", os.path.join(tempfile.gettempdir(), "dacecache-view-fixtures"))
import dace  # noqa: E402
from dace import dtypes  # noqa: E402
from dace.memlet import Memlet  # noqa: E402

from fixturelib import (arglist_abi, array_arg, generator_info, out_dir, output_entry, run_dace_cpu_code,  # noqa: E402
                        write_json)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
NAME = "view_in_map_scope"


def build(gpu=False):
    """The CPU program, or with `gpu` the same with GPU_Global arguments and
    GPU_Device outer maps (so the views live inside the kernels)."""
    N, M = dace.symbol("N"), dace.symbol("M")
    sdfg = dace.SDFG(NAME)
    storage = dtypes.StorageType.GPU_Global if gpu else dtypes.StorageType.Default
    outer = dtypes.ScheduleType.GPU_Device if gpu else dtypes.ScheduleType.Default
    inner = dtypes.ScheduleType.Sequential if gpu else dtypes.ScheduleType.Default
    sdfg.add_array("A", [N, M], dace.float64, storage=storage)
    sdfg.add_array("B", [N, M], dace.float64, storage=storage)
    sdfg.add_array("colsum", [M], dace.float64, storage=storage)
    sdfg.add_view("rowA", [M], dace.float64, strides=[1], storage=storage)
    sdfg.add_view("rowB", [M], dace.float64, strides=[1], storage=storage)
    sdfg.add_view("colA", [N], dace.float64, strides=[M], storage=storage)

    # State 1: B[i, :] = 2 * A[i, :] + 1 through a row view in and a row view out.
    st = sdfg.add_state("rows")
    A = st.add_read("A")
    B = st.add_write("B")
    me, mx = st.add_map("rows", dict(i="0:N"), schedule=outer)
    ra = st.add_access("rowA")
    rb = st.add_access("rowB")
    ie, ix = st.add_map("inner", dict(j="0:M"), schedule=inner)
    t = st.add_tasklet("scale", {"a"}, {"b"}, "b = 2.0 * a + 1.0")
    st.add_memlet_path(A, me, ra, dst_conn="views", memlet=Memlet("A[i, 0:M]"))
    st.add_memlet_path(ra, ie, t, dst_conn="a", memlet=Memlet("rowA[j]"))
    st.add_memlet_path(t, ix, rb, src_conn="b", memlet=Memlet("rowB[j]"))
    st.add_memlet_path(rb, mx, B, src_conn="views", memlet=Memlet("B[i, 0:M]"))

    # State 2: colsum[j] = sum over k of A[k, j] * (k + 1), through a strided column view.
    st2 = sdfg.add_state_after(st, "columns")
    A2 = st2.add_read("A")
    C = st2.add_write("colsum")
    me2, mx2 = st2.add_map("cols", dict(j="0:M"), schedule=outer)
    ca = st2.add_access("colA")
    ke, kx = st2.add_map("down", dict(k="0:N"), schedule=dtypes.ScheduleType.Sequential)
    t2 = st2.add_tasklet("weigh", {"x"}, {"y"}, "y = x * (k + 1)")
    st2.add_memlet_path(A2, me2, ca, dst_conn="views", memlet=Memlet("A[0:N, j]"))
    st2.add_memlet_path(ca, ke, t2, dst_conn="x", memlet=Memlet("colA[k]"))
    st2.add_memlet_path(t2, kx, mx2, C, src_conn="y", memlet=Memlet("colsum[j]", wcr="lambda a, b: a + b"))
    return sdfg


def main():
    out = out_dir(os.path.join(ROOT, "fixtures", "corpus"))
    d = os.path.join(out, NAME)
    os.makedirs(d, exist_ok=True)
    sdfg = build()
    sdfg.validate()
    code = sdfg.generate_code()[0].clean_code
    gpu = build(gpu=True)
    gpu.validate()
    gcode = "\n".join(c.clean_code for c in gpu.generate_code())
    assert "__global__" in gcode
    sdfg.save(os.path.join(d, "program.sdfg"))
    gpu.save(os.path.join(d, "program.gpu.sdfg"))
    n, m = 13, 9
    rng = np.random.default_rng(20261202)
    a = rng.standard_normal((n, m))
    values = {"A": (a, "in"), "B": (2.0 * a + 1.0, "out"),
              "colsum": ((a * np.arange(1, n + 1)[:, None]).sum(axis=0), "out")}
    args, outputs = [], []
    for name, (value, role) in values.items():
        file = f"{name}.{'out' if role == 'out' else 'in'}.bin"
        np.ascontiguousarray(value).tofile(os.path.join(d, file))
        args.append(array_arg(name, value, role, file))
        if role == "out":
            outputs.append(output_entry(name, value, (1e-10, 1e-12), file))
    case = {
        "name": NAME,
        "description": "views inside maps fed from the map entry (a row, a strided column) and "
                       "written out through the map exit, read and written by inner maps",
        "symbols": {"N": n, "M": m},
        "args": args,
        "outputs": outputs,
        "default_variant": "program.sdfg",
        "abi": {"program.sdfg": arglist_abi(sdfg, code), "program.gpu.sdfg": arglist_abi(gpu, gcode)},
        "features": ["view", "view_in_map_scope", "views_connector", "strided_view", "wcr_sum", "map"],
        "variants": {"program.sdfg": True, "program.gpu.sdfg": True},
        "gpu_status": {"program.gpu.sdfg": "ok: DaCe code generation (CUDA backend); not compiled (no GPU)"},
        "sdfg_name": sdfg.name,
        "generator": generator_info("scripts/make-view-scope-fixtures.py"),
    }
    write_json(os.path.join(d, "case.json"), case)
    run_dace_cpu_code(code, d, ROOT)
    print(f"{NAME}: {d}")


if __name__ == "__main__":
    main()
