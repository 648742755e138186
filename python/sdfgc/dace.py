"""DaCe integration: DaCe's `SDFG.compile()` generates its code with sdfgc.

    import sdfgc.dace
    sdfgc.dace.enable(mode="external")   # every later SDFG.compile() goes through sdfgc
    sdfgc.dace.disable()

DaCe still writes the build folder, runs its CMake build and loads the
library with its own `CompiledSDFG` (so its cache, `compiler.use_cache` and
the loader stub behave as always); only the code it compiles is sdfgc's.
A refused SDFG raises `sdfgc.SdfgcError` with sdfgc's message: there is no
silent fallback to DaCe's generator. Every library DaCe loads while the
switch is on is checked: the parameter lists it states must be the ones
`CompiledSDFG` passes (`check_abi`).
"""

import os
import subprocess
import tempfile

from . import SdfgcError, binary

_original = None
_original_init = None
_original_initialize = None
_options = {}


class SdfgcAbiError(SdfgcError):
    """A library's stated parameter lists differ from what DaCe passes."""


def check_abi(csdfg) -> bool:
    """Compares the parameter lists an sdfgc library states
    (`__sdfgc_signature_<name>`) with what DaCe's `CompiledSDFG` will pass:
    `sdfg.arglist()` to the program, and those of its entries that are free
    symbols to init. Raises `SdfgcAbiError` with both lists on a mismatch;
    returns False for a library that states none (not built by sdfgc)."""
    import ctypes
    import json

    sdfg = csdfg._sdfg
    try:
        stated_fn = csdfg._lib.get_symbol(f"__sdfgc_signature_{sdfg.name}", ctypes.c_char_p)
    except KeyError:
        return False
    stated = json.loads(stated_fn().decode())
    arglist = list(sdfg.arglist().keys())
    free = set(map(str, sdfg.free_symbols))
    want = {"program": arglist, "init": [a for a in arglist if a in free]}
    got = {k: [p[0] for p in stated[k]] for k in ("program", "init")}
    for k in ("program", "init"):
        if got[k] != want[k]:
            raise SdfgcAbiError(
                f"library of SDFG '{sdfg.name}' takes other {k} parameters than DaCe passes:\n"
                f"  library: {got[k]}\n  DaCe:    {want[k]}")
    return True


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
        # DaCe's own generator expands library nodes on this very object,
        # and CompiledSDFG later takes its arglist() from it: do the same
        # (after saving: sdfgc expands the nodes itself), so the argument
        # list DaCe passes is the one DaCe's own library would take.
        from dace.sdfg import infer_types

        infer_types.infer_connector_types(sdfg)
        infer_types.set_default_schedule_and_storage_types(sdfg, None)
        sdfg.expand_library_nodes()
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


def _sdfg_external_storages(sdfg):
    """Storages of the SDFG's own External transients (DaCe's CompiledSDFG
    and gt4py manage those workspaces)."""
    from dace import dtypes

    out = set()
    for sd in sdfg.all_sdfgs_recursive():
        for desc in sd.arrays.values():
            if desc.transient and desc.lifetime == dtypes.AllocationLifetime.External:
                out.add(desc.storage.name)
    return out


def _own_workspaces(csdfg, argtuple):
    """Gives an sdfgc library built in the external mode, whose SDFG has no
    External transients of its own (so DaCe never sets a workspace), one
    CPU_Heap workspace per CompiledSDFG, through the checked setter."""
    import ctypes

    import numpy as np

    lib, sdfg = csdfg._lib, csdfg._sdfg
    managed = _sdfg_external_storages(sdfg)
    for storage in ("CPU_Heap",):
        if storage in managed or (storage == "CPU_Heap" and "Default" in managed):
            continue
        try:
            size = lib.get_symbol(f"__dace_get_external_memory_size_{storage}", ctypes.c_size_t)
            align = lib.get_symbol(f"__sdfgc_workspace_alignment_{storage}", ctypes.c_size_t)()
            setter = lib.get_symbol(f"__sdfgc_set_workspace_{storage}", ctypes.c_int)
            message = lib.get_symbol("__sdfgc_error_string", ctypes.c_char_p)
        except KeyError:
            continue
        nbytes = size(csdfg._libhandle, *argtuple)
        raw = np.empty(nbytes + align, dtype=np.uint8)
        offset = (-raw.ctypes.data) % align
        rc = setter(csdfg._libhandle, ctypes.c_void_p(raw.ctypes.data + offset), ctypes.c_size_t(nbytes), *argtuple)
        if rc != 0:
            raise SdfgcError(f"{storage} workspace of '{sdfg.name}': {message(rc).decode()}")
        workspaces = getattr(csdfg, "_sdfgc_workspaces", {})
        workspaces[storage] = raw
        csdfg._sdfgc_workspaces = workspaces


def enable(mode=None, target="cpp", extra_args=()):
    """Makes every later `dace.SDFG.compile()` in this process generate its
    code with sdfgc (`mode`: None, "scoped", "persistent", "pool" or
    "external"; `target`: "cpp", "cuda" or "hip")."""
    global _original, _original_init
    from dace.codegen import codegen
    from dace.codegen.compiled_sdfg import CompiledSDFG

    _options.update(mode=mode, target=target, extra_args=tuple(extra_args))
    if _original is None:
        _original = codegen.generate_code
        codegen.generate_code = _generate_code
    if _original_init is None:
        _original_init = CompiledSDFG.__init__

        def init(self, *args, **kwargs):
            _original_init(self, *args, **kwargs)
            check_abi(self)

        CompiledSDFG.__init__ = init
    global _original_initialize
    if _original_initialize is None:
        _original_initialize = CompiledSDFG._initialize

        def initialize(self, argtuple):
            _original_initialize(self, argtuple)
            if self._initialized:
                _own_workspaces(self, argtuple)

        CompiledSDFG._initialize = initialize


def disable():
    """Restores DaCe's own code generator."""
    global _original, _original_init
    if _original is not None:
        from dace.codegen import codegen

        codegen.generate_code = _original
        _original = None
    if _original_init is not None:
        from dace.codegen.compiled_sdfg import CompiledSDFG

        CompiledSDFG.__init__ = _original_init
        _original_init = None
    global _original_initialize
    if _original_initialize is not None:
        from dace.codegen.compiled_sdfg import CompiledSDFG

        CompiledSDFG._initialize = _original_initialize
        _original_initialize = None


def enable_from_environment():
    """`enable()` if `SDFGC_DACE=1` (options: `SDFGC_MODE`, `SDFGC_TARGET`)."""
    if os.environ.get("SDFGC_DACE") == "1":
        enable(mode=os.environ.get("SDFGC_MODE") or None, target=os.environ.get("SDFGC_TARGET", "cpp"))
