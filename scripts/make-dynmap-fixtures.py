#!/usr/bin/env python3
"""Makes fixtures/corpus/dyn_map_csr/: dynamic map inputs (a map's range
read from memory), as in a CSR matrix-vector product.

Run with DaCe 1.0.2:

    build/venv-dace/bin/python scripts/make-dynmap-fixtures.py [OUTDIR]

Built with DaCe's SDFG API as DaCe's frontend and its CSRMV expansion make
them: an outer map over the rows, and an inner map over a row's nonzeros
whose range `row_begin:row_end` uses two input connectors of its entry not
named `IN_*` (dynamic map inputs), fed by `rowptr[i]` and `rowptr[i + 1]`
from the outer map. A second state has an inner map whose range mixes a
dynamic input with a symbol (the first K nonzeros of each row, scaled).
Saved as `program.sdfg` and `program.gpu.sdfg` (the same with GPU_Global
arguments, GPU_Device outer maps and sequential inner maps, so the dynamic
inputs are defined inside the kernels; DaCe's CUDA code generation is
checked, not compiled).

Check: the outputs are scipy.sparse's; DaCe's generated CPU code is built
with g++ against DaCe's runtime headers and run through
fixtures/corpus/run_case.py on the stored inputs; it must reproduce them.
"""
import os
import tempfile

import numpy as np

os.environ.setdefault("DACE_compiler_cuda_backend", "cuda")
os.environ.setdefault("DACE_default_build_folder", os.path.join(tempfile.gettempdir(), "dacecache-dynmap-fixtures"))
import dace  # noqa: E402
from dace import dtypes  # noqa: E402
from dace.memlet import Memlet  # noqa: E402

from fixturelib import (arglist_abi, array_arg, generator_info, out_dir, output_entry, run_dace_cpu_code,  # noqa: E402
                        write_json)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
NAME = "dyn_map_csr"


def csr_state(sdfg, st, out, scale, outer, inner, bounded):
    """out[i] += scale * sum of val[j] * x[col[j]] over the nonzeros j of row
    i (with `bounded`: only the first K of them)."""
    rowptr, col, val, x = (st.add_read(n) for n in ("rowptr", "col", "val", "x"))
    y = st.add_write(out)
    me, mx = st.add_map(f"{st.label}_rows", dict(i="0:N"), schedule=outer)
    end = "Min(row_end, row_begin + K)" if bounded else "row_end"
    ie, ix = st.add_map(f"{st.label}_nonzeros", dict(j=f"row_begin:{end}"), schedule=inner)
    t = st.add_tasklet(f"{st.label}_product", {"v", "c", "xs"}, {"o"}, f"o = {scale} * v * xs[c]")
    me.add_in_connector("IN_rowptr")
    me.add_out_connector("OUT_rowptr")
    st.add_edge(rowptr, None, me, "IN_rowptr", Memlet("rowptr[0:N + 1]"))
    for conn, index in (("row_begin", "i"), ("row_end", "i + 1")):
        ie.add_in_connector(conn)
        st.add_edge(me, "OUT_rowptr", ie, conn, Memlet(f"rowptr[{index}]"))
    st.add_memlet_path(val, me, ie, t, dst_conn="v", memlet=Memlet("val[j]"))
    st.add_memlet_path(col, me, ie, t, dst_conn="c", memlet=Memlet("col[j]"))
    st.add_memlet_path(x, me, ie, t, dst_conn="xs", memlet=Memlet("x[0:M]"))
    st.add_memlet_path(t, ix, mx, y, src_conn="o", memlet=Memlet(f"{out}[i]", wcr="lambda a, b: a + b"))


def build(gpu=False):
    """The CPU program, or with `gpu` the same with GPU_Global arguments,
    GPU_Device outer maps and sequential inner maps."""
    N, M, NNZ = dace.symbol("N"), dace.symbol("M"), dace.symbol("NNZ")
    dace.symbol("K")
    sdfg = dace.SDFG(NAME)
    storage = dtypes.StorageType.GPU_Global if gpu else dtypes.StorageType.Default
    outer = dtypes.ScheduleType.GPU_Device if gpu else dtypes.ScheduleType.Default
    inner = dtypes.ScheduleType.Sequential
    sdfg.add_symbol("K", dace.int32)
    sdfg.add_array("rowptr", [N + 1], dace.int32, storage=storage)
    sdfg.add_array("col", [NNZ], dace.int32, storage=storage)
    sdfg.add_array("val", [NNZ], dace.float64, storage=storage)
    sdfg.add_array("x", [M], dace.float64, storage=storage)
    sdfg.add_array("y", [N], dace.float64, storage=storage)
    sdfg.add_array("z", [N], dace.float64, storage=storage)
    st = sdfg.add_state("spmv")
    csr_state(sdfg, st, "y", "1.0", outer, inner, False)
    st2 = sdfg.add_state_after(st, "first_k")
    csr_state(sdfg, st2, "z", "0.5", outer, inner, True)
    return sdfg


def main():
    from scipy.sparse import csr_matrix

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
    n, m, nnz, k = 11, 8, 30, 2
    rng = np.random.default_rng(20261203)
    rowptr = np.sort(rng.integers(0, nnz + 1, size=n + 1)).astype(np.int32)
    rowptr[0], rowptr[-1] = 0, nnz
    col = rng.integers(0, m, size=nnz).astype(np.int32)
    val = rng.standard_normal(nnz)
    x = rng.standard_normal(m)
    y0 = rng.standard_normal(n)
    z0 = rng.standard_normal(n)
    y = y0 + csr_matrix((val, col, rowptr), shape=(n, m)) @ x
    # The first K nonzeros of each row (scipy: the row's CSR slice cut at K).
    first = np.zeros(nnz)
    for i in range(n):
        b = rowptr[i]
        first[b:min(rowptr[i + 1], b + k)] = val[b:min(rowptr[i + 1], b + k)]
    z = z0 + 0.5 * (csr_matrix((first, col, rowptr), shape=(n, m)) @ x)
    args, outputs = [], []
    for name, value in (("rowptr", rowptr), ("col", col), ("val", val), ("x", x)):
        np.ascontiguousarray(value).tofile(os.path.join(d, f"{name}.in.bin"))
        args.append(array_arg(name, value, "in", f"{name}.in.bin"))
    for name, before, after in (("y", y0, y), ("z", z0, z)):
        before.tofile(os.path.join(d, f"{name}.in.bin"))
        after.tofile(os.path.join(d, f"{name}.out.bin"))
        args.append(array_arg(name, before, "inout", f"{name}.in.bin"))
        outputs.append(output_entry(name, after, (1e-10, 1e-12), f"{name}.out.bin"))
    case = {
        "name": NAME,
        "description": "dynamic map inputs: CSR products whose inner maps range over "
                       "rowptr[i]:rowptr[i+1] (input connectors not named IN_*), one "
                       "also bounded by a symbol",
        "symbols": {"N": n, "M": m, "NNZ": nnz, "K": k},
        "args": args,
        "outputs": outputs,
        "default_variant": "program.sdfg",
        "abi": {"program.sdfg": arglist_abi(sdfg, code), "program.gpu.sdfg": arglist_abi(gpu, gcode)},
        "features": ["dynamic_map_input", "indirection", "wcr_sum", "map"],
        "variants": {"program.sdfg": True, "program.gpu.sdfg": True},
        "gpu_status": {"program.gpu.sdfg": "ok: DaCe code generation (CUDA backend); not compiled (no GPU)"},
        "sdfg_name": sdfg.name,
        "generator": generator_info("scripts/make-dynmap-fixtures.py"),
    }
    write_json(os.path.join(d, "case.json"), case)
    run_dace_cpu_code(code, d, ROOT)
    print(f"{NAME}: {d}")


if __name__ == "__main__":
    main()
