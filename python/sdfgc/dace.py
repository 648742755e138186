"""DaCe integration: DaCe's `SDFG.compile()` generates its code with sdfgc.

    import sdfgc.dace
    sdfgc.dace.enable(mode="external")   # every later SDFG.compile() goes through sdfgc
    sdfgc.dace.disable()
    csdfg = sdfgc.dace.load(sdfg)        # DaCe's CompiledSDFG of sdfgc.build()'s library

With `enable()`, DaCe writes its build folder as always and sdfgc builds
it without CMake: DaCe's compile step (`compiler.configure_and_compile`)
runs the compiler once on sdfgc's translation unit with DaCe's configured
flags and leaves the library where `compiler.get_binary_name` says, the
loader stub next to it and the sources in `src/` (`_dace_build`), so DaCe's
cache, `compiler.use_cache`, the folder layouts and `CompiledSDFG` behave as
always. Libraries are cached by content across processes and build folders;
the compiler starts as soon as sdfgc's code exists. `load()` skips DaCe's
folder too: `sdfgc.build` (sdfgc, then g++/nvcc/hipcc, cached) and DaCe's
`CompiledSDFG` on the result. A refused SDFG raises `sdfgc.SdfgcError` with
sdfgc's message: there is no silent fallback to DaCe's generator
(`fallback=True` falls back explicitly and logs every fallback). Every
library loaded while the switch is on, and every `load()`, is checked: the
parameter lists it states must be the ones `CompiledSDFG` passes
(`check_abi`).

Any number of processes (MPI ranks that all compile, pytest-xdist workers,
gt4py's build pools) may compile into one build folder and one cache:
DaCe's writes to a program folder hold its lock, the library is built once
under the cache entry's lock, and whether a folder holds sdfgc's code is
decided from what this process generated, never from a file another process
may be rewriting (`_dace_build`). A library that calls MPI and cannot be
loaded (not linked with MPI, none loaded in the process) raises
`sdfgc.MpiLoadError` naming the program and how to build or load it.
"""

import copy
import ctypes
import json
import logging
import os
import subprocess
import tempfile

from . import SdfgcError, _dace_build, binary
from ._build import build, offload_args
from ._load import MpiLoadError, diagnose
from ._locks import folder_lock
from ._workspace import Workspace

log = logging.getLogger("sdfgc.dace")

_original = None
_original_compile = None  # DaCe's compiler.configure_and_compile (its CMake build)
_original_folder = None  # DaCe's compiler.generate_program_folder
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
    log.info(line)
    path = os.environ.get("SDFGC_DACE_LOG")
    if path:
        with open(path, "a") as fh:
            fh.write(line + "\n")


def _prepare_like_dace(sdfg):
    """What DaCe's own generator does to the SDFG object that `CompiledSDFG`
    later takes its argument list from: connector types, default schedules
    and storages, library nodes expanded."""
    from dace.sdfg import infer_types

    infer_types.infer_connector_types(sdfg)
    infer_types.set_default_schedule_and_storage_types(sdfg, None)
    sdfg.expand_library_nodes()


# Packages whose library nodes sdfgc expands itself (or refuses by name).
_LIBRARY_PACKAGES = ("dace", "gt4py")
# ... except these modules of theirs, whose nodes expand by their own Python
# as user nodes do: DaCe's Stencil node (its "pure" expansion, maps and
# tasklets, is what DaCe's generator compiles on the CPU).
_PYTHON_EXPANDED = ("dace.libraries.stencil",)


def _expand_user_library_nodes(sdfg):
    """Library nodes of the program's own classes (a `LibraryNode` or
    `CodeLibraryNode` subclass defined by the user, an expansion registered
    with `dace.library.register_expansion`) expand by running their Python:
    DaCe's generator expands them in place, and so does this, before sdfgc
    sees the SDFG (a class that sdfgc cannot know of would be refused). The
    nodes of DaCe's and gt4py's libraries stay for sdfgc, but for
    `_PYTHON_EXPANDED`'s (DaCe's Stencil). An expansion that
    fails raises as it does under DaCe's generator."""
    from dace.sdfg import nodes

    def user(node):
        module = type(node).__module__
        return isinstance(node, nodes.LibraryNode) and (
            module.split(".")[0] not in _LIBRARY_PACKAGES
            or any(module == m or module.startswith(m + ".") for m in _PYTHON_EXPANDED))

    while True:  # an expansion may make further user nodes
        found = [(n, st) for n, st in sdfg.all_nodes_recursive() if user(n)]
        if not found:
            return
        for node, state in found:
            owner = getattr(state, "sdfg", None) or state.parent
            node.expand(owner, state)


def _target_for(sdfg, options):
    """The target `enable()` was given; without one, as DaCe's generator
    decides: an SDFG with GPU storage or GPU schedules anywhere (or any SDFG
    with `offload`) is built for DaCe's `compiler.cuda.backend` ("cuda" or
    "hip"), others for the CPU."""
    if options.get("target"):
        return options["target"]
    from dace.config import Config
    from dace.sdfg import nodes

    # By name: DaCe 2.x's `dtypes.GPU_STORAGES` lists GPU_Shared only.
    gpu = options.get("offload") or any(
        d.storage.name.startswith("GPU_") for _, _, d in sdfg.arrays_recursive()) or any(
        isinstance(n, nodes.MapEntry) and n.map.schedule.name.startswith("GPU_")
        for n, _ in sdfg.all_nodes_recursive())
    if not gpu:
        return "cpp"
    backend = str(Config.get("compiler", "cuda", "backend") or "cuda").lower()
    return "hip" if backend == "hip" else "cuda"


def _sdfgc_command(path, out, options, target):
    cmd = [binary(), path, "--target", target, "--emit-sample", "-o", out]
    if options.get("mode"):
        cmd += ["--mode", options["mode"]]
    cmd += offload_args(options.get("offload"))
    if options.get("blas"):
        cmd += ["--blas", options["blas"]]
    return cmd + list(options.get("extra_args", ()))


# The line of a file that calls MPI (DaCe's MPI library nodes), and DaCe's
# environment that builds and links such a file with MPI.
_MPI_INCLUDE = "\n#include <mpi.h>\n"
_MPI_ENVIRONMENT = "dace.libraries.mpi.environments.mpi.MPI"

# DaCe's environment (its CMake link line) for each library `--blas` calls.
_BLAS_ENVIRONMENTS = {
    "openblas": "dace.libraries.blas.environments.openblas.OpenBLAS",
    "cublas": "dace.libraries.blas.environments.cublas.cuBLAS",
}


def _save_compact(sdfg, path):
    """The SDFG's JSON for sdfgc: `SDFG.save` without its hash and
    indentation (each costs about as much as a second serialization)."""
    from dace import serialize

    with open(path, "w") as fh:
        json.dump(sdfg.to_json(), fh, default=serialize.to_json)


def _generate_code(sdfg, validate=True):
    """Replacement of `dace.codegen.codegen.generate_code`: sdfgc's files as
    DaCe code objects (the translation unit, its header and a sample main)."""
    from dace.codegen.codeobject import CodeObject
    from dace.codegen.targets import cpu

    if validate:
        sdfg.validate()
    _expand_user_library_nodes(sdfg)
    target = _target_for(sdfg, _options)
    with tempfile.TemporaryDirectory(prefix="sdfgc-") as tmp:
        path = os.path.join(tmp, sdfg.name + ".sdfg")
        _save_compact(sdfg, path)
        keep = os.environ.get("SDFGC_DACE_KEEP")
        if keep:  # a copy of every SDFG handed to sdfgc, for debugging
            os.makedirs(keep, exist_ok=True)
            sdfg.save(os.path.join(keep, sdfg.name + ".sdfg"))
        cmd = _sdfgc_command(path, tmp, _options, target)
        # Data instrumentation saves where DaCe's report reader looks
        # (`SDFG.get_instrumented_data()`): the build folder's `data`.
        cmd += ["--data-folder", os.path.abspath(os.path.join(sdfg.build_folder, "data"))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            message = r.stderr.strip() or f"sdfgc exited with {r.returncode}"
            if _options.get("fallback"):
                _log(f"fallback {sdfg.name}: {message}")
                return _original(sdfg, validate=validate)
            _log(f"refused {sdfg.name}: {message}")
            raise SdfgcError(message)
        ext = {"cpp": "cpp", "cuda": "cu", "hip": "hip"}[target]
        with open(os.path.join(tmp, f"{sdfg.name}.{ext}")) as fh:
            code = fh.read()
        with open(os.path.join(tmp, f"{sdfg.name}.h")) as fh:
            header = fh.read()
        with open(os.path.join(tmp, f"{sdfg.name}_main.cpp")) as fh:
            sample = fh.read()
    _log(f"compiled {sdfg.name}")
    blas = _options.get("blas")
    envs = set()
    if blas:
        import dace.libraries.blas  # noqa: F401 (registers DaCe's BLAS environments)
        envs.add(_BLAS_ENVIRONMENTS[blas])
    if _MPI_INCLUDE in code:  # MPI library nodes: DaCe's MPI environment (its CMake MPI package)
        import dace.libraries.mpi  # noqa: F401 (registers DaCe's MPI environment)
        envs.add(_MPI_ENVIRONMENT)
    if target == "cpp":
        obj = CodeObject(sdfg.name, code, "cpp", cpu.CPUCodeGen, "Frame", environments=envs, sdfg=sdfg)
    else:
        from dace.codegen.targets import cuda
        obj = CodeObject(sdfg.name, code, "cu", cuda.CUDACodeGen, "CUDA", environments=envs, sdfg=sdfg)
    # The compiler starts on the code DaCe is about to write, while DaCe
    # prepares the SDFG and writes its program folder; DaCe's compile step
    # (`_configure_and_compile`) then waits for it.
    _dace_build.start_build(obj.clean_code.encode(), target, sdfg.name, envs)
    # DaCe's own generator expands library nodes on this very object,
    # and CompiledSDFG later takes its arglist() from it: do the same
    # (after saving: sdfgc expands the nodes itself), so the argument
    # list DaCe passes is the one DaCe's own library would take.
    _prepare_like_dace(sdfg)
    head = CodeObject(sdfg.name, header, "h", cpu.CPUCodeGen, "CallHeader", target_type="../../include",
                      linkable=False)
    # DaCe writes (and in its production folder mode deletes) a sample main.
    main = CodeObject(sdfg.name + "_main", sample, "cpp", cpu.CPUCodeGen, "SampleMain",
                      target_type="../../sample", linkable=False)
    return [obj, head, main]


def _generate_program_folder(sdfg, code_objects, out_path, *args, **kwargs):
    """Replacement of `dace.codegen.compiler.generate_program_folder`: DaCe
    writes the folder holding its lock (another process compiling the same
    program reads none of its files half-written), and this process
    remembers what it wrote there (`_dace_build.remember`)."""
    os.makedirs(out_path, exist_ok=True)
    with folder_lock(out_path):
        folder = _original_folder(sdfg, code_objects, out_path, *args, **kwargs)
    _dace_build.remember(folder if folder is not None else out_path, code_objects)
    return folder


def _configure_and_compile(program_folder, program_name=None, output_stream=None, **kwargs):
    """Replacement of `dace.codegen.compiler.configure_and_compile`: sdfgc's
    translation unit is compiled directly, without CMake (`_dace_build`);
    DaCe's own code (an explicit fallback) goes to DaCe's CMake build. Which
    of the two a folder holds is what this process generated there."""
    name = program_name or os.path.basename(os.path.abspath(program_folder))
    found = _dace_build.find_program(program_folder, name)
    if found is None:
        _log(f"cmake {name}: not sdfgc's code, DaCe's CMake build")
    return _dace_build.configure_and_compile(_original_compile, program_folder, program_name, output_stream,
                                             found=found if found is not None else False, **kwargs)


def _load_failure(error, library, program):
    """sdfgc's message for a library that calls MPI and failed to load, or
    None (the original error stands)."""
    message = diagnose(library, program)
    return MpiLoadError(message) if message else None


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


def _hand_workspaces(csdfg, argtuple, workspaces):
    """Hands an sdfgc library built in the external mode, whose SDFG has no
    External transients of its own (so DaCe never sets a workspace), its
    workspaces through the checked setter: the given `Workspace` of each
    storage, else one of its own per CompiledSDFG."""
    lib, sdfg = csdfg._lib, csdfg._sdfg
    managed = _sdfg_external_storages(sdfg)
    for storage in ("CPU_Heap", "GPU_Global"):
        if storage in managed or (storage == "CPU_Heap" and "Default" in managed):
            continue
        try:
            lib.get_symbol(f"__sdfgc_set_workspace_{storage}", ctypes.c_int)
        except KeyError:
            continue
        ws = (workspaces or {}).get(storage) or Workspace(storage)
        ws.attach(csdfg, *argtuple)
        held = getattr(csdfg, "_sdfgc_workspaces", {})
        held[storage] = ws
        csdfg._sdfgc_workspaces = held


def _workspaces(workspace):
    if workspace is None:
        return {}
    if isinstance(workspace, Workspace):
        return {workspace.storage: workspace}
    return dict(workspace)


def enable(mode=None, target=None, offload=False, extra_args=(), fallback=False, workspace=None, blas=None):
    """Makes every later `dace.SDFG.compile()` in this process generate its
    code with sdfgc (`mode`: None, "scoped", "persistent", "pool" or
    "external"; `target`: "cpp", "cuda" or "hip", default as DaCe decides
    (GPU SDFGs for `compiler.cuda.backend`, others "cpp"); `offload`: sdfgc's
    `--offload`; `blas`: sdfgc's `--blas`, linked through DaCe's own BLAS
    environment; `extra_args`: more sdfgc arguments). `fallback=True` lets
    DaCe's generator compile what sdfgc refuses, logging each fallback;
    `workspace`: a `sdfgc.Workspace` (or a dict storage -> Workspace) that
    every external-mode library gets (default: one of its own each).
    DaCe's cache is untouched: with `compiler.use_cache` (or an unchanged
    SDFG in an existing build folder) DaCe reuses the library in its build
    folder, whichever generator built it."""
    global _original, _original_compile, _original_folder, _original_init, _original_initialize
    from dace.codegen import codegen, compiler
    from dace.codegen.compiled_sdfg import CompiledSDFG

    _options.clear()
    if blas is not None and blas not in _BLAS_ENVIRONMENTS:
        raise ValueError(f"blas must be one of {sorted(_BLAS_ENVIRONMENTS)} or None, not {blas!r}")
    _options.update(mode=mode, target=target, offload=offload, blas=blas, extra_args=tuple(extra_args), fallback=fallback,
                    workspaces=_workspaces(workspace))
    if _original is None:
        _original = codegen.generate_code
        codegen.generate_code = _generate_code
    if _original_compile is None:
        _original_compile = compiler.configure_and_compile
        compiler.configure_and_compile = _configure_and_compile
    if _original_folder is None:
        _original_folder = compiler.generate_program_folder
        compiler.generate_program_folder = _generate_program_folder
    if _original_init is None:
        _original_init = CompiledSDFG.__init__

        def init(self, *args, **kwargs):
            _init_checked_load(self, *args, **kwargs)
            if check_abi(self):
                _log(f"checked {self._sdfg.name}")
            else:  # DaCe's cache or an explicit fallback
                _log(f"foreign {self._sdfg.name}: {self._lib._library_filename} was not built by sdfgc")

        CompiledSDFG.__init__ = init
    if _original_initialize is None:
        _original_initialize = CompiledSDFG._initialize

        def initialize(self, argtuple):
            _original_initialize(self, argtuple)
            if self._initialized:
                _hand_workspaces(self, argtuple, _options.get("workspaces"))

        CompiledSDFG._initialize = initialize


def disable():
    """Restores DaCe's own code generator. The load-time wrappers stay: a
    library sdfgc built before still gets its ABI check and, on its first
    call, its workspace (they do nothing for DaCe's own libraries)."""
    global _original, _original_compile, _original_folder
    if _original is not None:
        from dace.codegen import codegen

        codegen.generate_code = _original
        _original = None
    if _original_compile is not None:
        from dace.codegen import compiler

        compiler.configure_and_compile = _original_compile
        _original_compile = None
    if _original_folder is not None:
        from dace.codegen import compiler

        compiler.generate_program_folder = _original_folder
        _original_folder = None


def enabled() -> bool:
    """Whether `enable()` is in effect."""
    return _original is not None


def enable_from_environment():
    """`enable()` if `SDFGC_DACE=1` (options: `SDFGC_MODE`, `SDFGC_TARGET`,
    `SDFGC_OFFLOAD=1|host-args|device-args`, `SDFGC_FALLBACK=1`, `SDFGC_BLAS`)."""
    if os.environ.get("SDFGC_DACE") == "1":
        enable(mode=os.environ.get("SDFGC_MODE") or None, target=os.environ.get("SDFGC_TARGET") or None,
               offload={"1": True, "host-args": "host-args", "device-args": "device-args"}.get(
                   os.environ.get("SDFGC_OFFLOAD", "")), fallback=os.environ.get("SDFGC_FALLBACK") == "1",
               blas=os.environ.get("SDFGC_BLAS") or None)


def _init_checked_load(csdfg, *args, **kwargs):
    """DaCe's `CompiledSDFG.__init__(sdfg, lib, ...)` (which loads the
    library), with sdfgc's message when the library calls MPI and cannot be
    loaded."""
    from dace.codegen.compiled_sdfg import CompiledSDFG

    try:
        (_original_init or CompiledSDFG.__init__)(csdfg, *args, **kwargs)
    except (OSError, RuntimeError) as e:
        sdfg = kwargs.get("sdfg", args[0] if args else None)
        lib = kwargs.get("lib", args[1] if len(args) > 1 else None)
        better = _load_failure(e, getattr(lib, "_library_filename", None), getattr(sdfg, "name", None))
        if better is None:
            raise
        _log(f"unloadable {getattr(sdfg, 'name', '?')}: {better}")
        raise better from e


def _stub(folder, name, compiler=None):
    """DaCe's loader stub next to a library (see `_dace_build.stub`)."""
    return _dace_build.stub(folder, name, compiler)


def load(sdfg, target="cpp", mode=None, offload=False, build_dir=None, compiler=None, flags=None, extra_flags=(),
         sdfgc_args=(), blas=None, workspace=None, fallback=False, validate=True):
    """DaCe's own `CompiledSDFG` for an SDFG built by `sdfgc.build` (sdfgc,
    then g++/nvcc/hipcc; cached by content, options and sdfgc version),
    without DaCe's code generator or CMake build. The options are
    `sdfgc.build`'s; `workspace` as in `enable`. The library's stated
    parameter lists are checked against DaCe's before it is returned. A
    refusal raises `SdfgcError`; `fallback=True` returns DaCe's own
    `sdfg.compile()` instead and logs it."""
    from dace.codegen import compiled_sdfg as csd

    if validate:
        sdfg.validate()
    try:
        with tempfile.TemporaryDirectory(prefix="sdfgc-") as tmp:
            path = os.path.join(tmp, sdfg.name + ".sdfg")
            sdfg.save(path)
            lib = build(path, target=target, mode=mode, offload=offload, build_dir=build_dir, compiler=compiler,
                        flags=flags, extra_flags=extra_flags, sdfgc_args=sdfgc_args, blas=blas)
    except SdfgcError as e:
        if not fallback:
            raise
        _log(f"fallback {sdfg.name}: {e}")
        was = dict(_options) if enabled() else None
        disable()
        try:
            return sdfg.compile()
        finally:
            if was is not None:
                ws = was.pop("workspaces")
                enable(workspace=ws, **was)
    _log(f"compiled {sdfg.name}")
    prog = copy.deepcopy(sdfg)
    _prepare_like_dace(prog)
    _stub(lib.folder, lib.name, compiler if target == "cpp" else None)
    try:
        dll = csd.ReloadableDLL(str(lib), prog.name)  # DaCe 1.x
    except TypeError:
        dll = csd.ReloadableDLL(str(lib))  # DaCe 2.x: the stub is found from the library's name
    csdfg = csd.CompiledSDFG.__new__(csd.CompiledSDFG)
    _init_checked_load(csdfg, prog, dll, prog.arg_names)
    if not check_abi(csdfg):
        raise SdfgcAbiError(f"{lib} states no parameter lists (__sdfgc_signature_{prog.name})")
    workspaces = _workspaces(workspace)
    original = _original_initialize or type(csdfg)._initialize  # DaCe's, not enable()'s

    def initialize(argtuple):
        original(csdfg, argtuple)
        if csdfg._initialized:
            _hand_workspaces(csdfg, argtuple, workspaces)

    csdfg._initialize = initialize
    return csdfg
