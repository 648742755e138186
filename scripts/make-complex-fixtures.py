#!/usr/bin/env python3
"""Makes the complex-data fixture fixtures/corpus/complex_arith/.

Run with DaCe 1.0.2:

    /work/venv-dace1/bin/python scripts/make-complex-fixtures.py [OUTDIR]

A `@dace.program` over complex128 and complex64 arrays and a complex128
scalar argument (passed by value): tasklets with complex literals (`1j`),
products, `conj`, `exp`, integer times complex, write-conflict sums into
complex accumulators, and numpy's `real` / `imag` / `abs` on complex arrays
(DaCe's `real(x)`, `imag(x)`, `abs(x)` tasklets). Saved as `program.sdfg`
(simplified) and `program.gpu.sdfg` (`apply_gpu_transformations()` +
`simplify()`; DaCe's CUDA code generation is checked, not compiled).

Complex arrays are described in case.json as the corpus describes them
(fixtures/npbench/README.md): `dtype` float64 / float32 with a trailing
dimension of 2 (interleaved real, imaginary parts) and `complex_dtype`; the
complex scalar is `kind: scalar` with shape [2] and `complex_dtype`.

Check: DaCe's own generated CPU code is built with g++ against DaCe's
runtime headers and run through fixtures/corpus/run_case.py on the stored
inputs; it must reproduce the numpy outputs.
"""
import os
import tempfile

import numpy as np

os.environ.setdefault("DACE_compiler_cuda_backend", "cuda")
os.environ.setdefault("DACE_default_build_folder", os.path.join(tempfile.gettempdir(), "dacecache-complex-fixtures"))
import dace

from fixturelib import arglist_abi, generator_info, out_dir, run_dace_cpu_code, write_json  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
N = dace.symbol("N")


@dace.program
def complex_arith(a: dace.complex128[N], b: dace.complex128[N], c: dace.complex64[N], s: dace.complex128,
                  out: dace.complex128[N], out32: dace.complex64[N], re: dace.float64[N],
                  total: dace.complex128[1], total32: dace.complex64[1]):
    for i in dace.map[0:N]:
        with dace.tasklet:
            x << a[i]
            y << b[i]
            k << s
            o >> out[i]
            t >> total(1, lambda p, q: p + q)[0]
            o = x * conj(y) + 1j * exp(x) * k
            t = x * y
    for i in dace.map[0:N]:
        with dace.tasklet:
            z << c[i]
            o2 >> out32[i]
            t2 >> total32(1, lambda p, q: p + q)[0]
            o2 = z * z - conj(z) + 2 * z
            t2 = z
    re[:] = np.real(a) * np.abs(b) + np.imag(c)


def reference(n, seed=20261201):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    b = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    c = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    s = np.complex128(0.5 - 0.25j)
    ins = {"a": a, "b": b, "c": c, "s": s}
    outs = {
        "out": a * np.conj(b) + 1j * np.exp(a) * s,
        "out32": (c * c - np.conj(c) + 2 * c).astype(np.complex64),
        "re": a.real * np.abs(b) + c.imag.astype(np.float64),
        "total": np.array([np.sum(a * b)]),
        "total32": np.array([np.sum(c)], dtype=np.complex64),
    }
    return ins, outs


def describe(name, value, role, file):
    """A case.json entry; complex values as interleaved (real, imag) pairs."""
    value = np.asarray(value)
    entry = {"name": name}
    if np.iscomplexobj(value):
        part = np.float64 if value.dtype == np.complex128 else np.float32
        entry.update({"dtype": np.dtype(part).name, "shape": list(value.shape) + [2],
                      "complex_dtype": value.dtype.name})
    else:
        entry.update({"dtype": value.dtype.name, "shape": list(value.shape)})
    entry.update({"kind": "scalar" if value.ndim == 0 else "array", "role": role, "file": file})
    return entry


def main():
    out = out_dir(os.path.join(ROOT, "fixtures", "corpus"))
    d = os.path.join(out, "complex_arith")
    os.makedirs(d, exist_ok=True)
    n = 37
    sdfg = complex_arith.to_sdfg(simplify=True)
    sdfg.name = "complex_arith"
    sdfg.validate()
    code = sdfg.generate_code()[0].clean_code
    gpu = complex_arith.to_sdfg(simplify=True)
    gpu.name = "complex_arith"
    gpu.apply_gpu_transformations()
    gpu.simplify()
    gpu.validate()
    gcode = "\n".join(c.clean_code for c in gpu.generate_code())
    assert "thrust" in gcode or "dace::complex128" in gcode
    sdfg.save(os.path.join(d, "program.sdfg"))
    gpu.save(os.path.join(d, "program.gpu.sdfg"))
    ins, outs = reference(n)
    args, outputs = [], []
    for name in ["a", "b", "c", "s"]:
        file = f"{name}.in.bin"
        np.asarray(ins[name]).tofile(os.path.join(d, file))
        args.append(describe(name, ins[name], "in", file))
    for name, value in outs.items():
        file = f"{name}.out.bin"
        np.ascontiguousarray(value).tofile(os.path.join(d, file))
        args.append(describe(name, value, "out", file))
        e = describe(name, value, "out", file)
        single = e["dtype"] == "float32"
        outputs.append({"name": name, "file": file, "dtype": e["dtype"], "shape": e["shape"],
                        **({"complex_dtype": e["complex_dtype"]} if "complex_dtype" in e else {}),
                        "rtol": 1e-5 if single else 1e-10, "atol": 1e-5 if single else 1e-12})
    signature = arglist_abi(sdfg, code, scalars=True)
    case = {
        "name": "complex_arith",
        "description": "complex128 and complex64 tasklet arithmetic (1j, conj, exp, int * complex), "
                       "complex write-conflict sums, real/imag/abs of complex arrays, a complex scalar argument",
        "symbols": {"N": n},
        "args": args,
        "outputs": outputs,
        "default_variant": "program.sdfg",
        "abi": {"program.sdfg": signature, "program.gpu.sdfg": arglist_abi(gpu, gcode, scalars=True)},
        "features": ["complex128", "complex64", "complex_scalar_argument", "complex_literal", "conj", "exp",
                     "real_imag_abs", "wcr_sum_complex", "map"],
        "variants": {"program.sdfg": True, "program.gpu.sdfg": True},
        "gpu_status": {"program.gpu.sdfg": "ok: DaCe code generation (CUDA backend); not compiled (no GPU)"},
        "sdfg_name": sdfg.name,
        "generator": generator_info("scripts/make-complex-fixtures.py"),
    }
    write_json(os.path.join(d, "case.json"), case)
    # DaCe's own library must reproduce the numpy outputs.
    run_dace_cpu_code(code, d, ROOT)
    print(f"complex_arith: {d}")


if __name__ == "__main__":
    main()
