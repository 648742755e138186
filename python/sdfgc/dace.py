"""DaCe integration: DaCe's `SDFG.compile()` generates its code with sdfgc.

    import sdfgc.dace
    sdfgc.dace.enable(mode="external")   # every later SDFG.compile() goes through sdfgc
    sdfgc.dace.disable()

DaCe still writes the build folder, runs its CMake build and loads the
library with its own `CompiledSDFG` (so its cache, `compiler.use_cache` and
the loader stub behave as always); only the code it compiles is sdfgc's.
A refused SDFG raises `sdfgc.SdfgcError` with sdfgc's message: there is no
silent fallback to DaCe's generator.
"""

import os
import subprocess
import tempfile

from . import SdfgcError, binary

_original = None
_options = {}


def _log(line: str) -> None:
    path = os.environ.get("SDFGC_DACE_LOG")
    if path:
        with open(path, "a") as fh:
            fh.write(line + "\n")


def _generate_code(sdfg, validate=True):
    """Replacement of `dace.codegen.codegen.generate_code`: sdfgc's files as
    DaCe code objects (the translation unit, its header and a sample main)."""
    from dace.codegen.codeobject import CodeObject
    from dace.codegen.targets import cpu

    if validate:
        sdfg.validate()
    target = _options.get("target", "cpp")
    with tempfile.TemporaryDirectory(prefix="sdfgc-") as tmp:
        path = os.path.join(tmp, sdfg.name + ".sdfg")
        sdfg.save(path)
        keep = os.environ.get("SDFGC_DACE_KEEP")
        if keep:  # a copy of every SDFG handed to sdfgc, for debugging
            os.makedirs(keep, exist_ok=True)
            sdfg.save(os.path.join(keep, sdfg.name + ".sdfg"))
        cmd = [binary(), path, "--target", target, "--emit-sample", "-o", tmp]
        if _options.get("mode"):
            cmd += ["--mode", _options["mode"]]
        cmd += list(_options.get("extra_args", ()))
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            _log(f"refused {sdfg.name}: {r.stderr.strip()}")
            raise SdfgcError(r.stderr.strip() or f"sdfgc exited with {r.returncode}")
        ext = {"cpp": "cpp", "cuda": "cu", "hip": "hip"}[target]
        with open(os.path.join(tmp, f"{sdfg.name}.{ext}")) as fh:
            code = fh.read()
        with open(os.path.join(tmp, f"{sdfg.name}.h")) as fh:
            header = fh.read()
        with open(os.path.join(tmp, f"{sdfg.name}_main.cpp")) as fh:
            sample = fh.read()
    _log(f"compiled {sdfg.name}")
    if target == "cpp":
        obj = CodeObject(sdfg.name, code, "cpp", cpu.CPUCodeGen, "Frame", environments=set(), sdfg=sdfg)
    else:
        from dace.codegen.targets import cuda
        obj = CodeObject(sdfg.name, code, "cu", cuda.CUDACodeGen, "CUDA", environments=set(), sdfg=sdfg)
    head = CodeObject(sdfg.name, header, "h", cpu.CPUCodeGen, "CallHeader", target_type="../../include",
                      linkable=False)
    # DaCe writes (and in its production folder mode deletes) a sample main.
    main = CodeObject(sdfg.name + "_main", sample, "cpp", cpu.CPUCodeGen, "SampleMain",
                      target_type="../../sample", linkable=False)
    return [obj, head, main]


def enable(mode=None, target="cpp", extra_args=()):
    """Makes every later `dace.SDFG.compile()` in this process generate its
    code with sdfgc (`mode`: None, "scoped", "persistent", "pool" or
    "external"; `target`: "cpp", "cuda" or "hip")."""
    global _original
    from dace.codegen import codegen

    _options.update(mode=mode, target=target, extra_args=tuple(extra_args))
    if _original is None:
        _original = codegen.generate_code
        codegen.generate_code = _generate_code


def disable():
    """Restores DaCe's own code generator."""
    global _original
    if _original is not None:
        from dace.codegen import codegen

        codegen.generate_code = _original
        _original = None


def enable_from_environment():
    """`enable()` if `SDFGC_DACE=1` (options: `SDFGC_MODE`, `SDFGC_TARGET`)."""
    if os.environ.get("SDFGC_DACE") == "1":
        enable(mode=os.environ.get("SDFGC_MODE") or None, target=os.environ.get("SDFGC_TARGET", "cpp"))
