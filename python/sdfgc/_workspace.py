"""`sdfgc.Workspace`: one buffer per storage for every program it serves.

An sdfgc library built in the external mode keeps its transients in a
workspace the application hands it (README, "The workspace protocol"):

    n  = __dace_get_external_memory_size_<S>(state, symbols...)
    rc = __sdfgc_set_workspace_<S>(state, buf, nbytes, symbols...)   # 0 or __sdfgc_error_string(rc)

A `Workspace` asks each program it is attached to for its size, grows its
buffer to the largest (re-handing the new buffer to the programs it already
serves), and hands it over through the checked setter, so a buffer that is
too small, misaligned or on the wrong device raises with the library's own
message. Its size can be planned up front with `sdfgc plan` (`plan`), and
drawn with `sdfgc plan --svg` (`Workspace.svg`, `svg`).
"""

import ctypes
import json
import os
import subprocess
import tempfile
import weakref

from ._binary import SdfgcError, binary

_DEFAULT_ALIGN = {"CPU_Heap": 64, "GPU_Global": 256}


class WorkspaceError(SdfgcError):
    """A library refused the workspace (its message), or none could be made."""


def plan(sdfgs, target="cpp", mode="external", symbols=None, sdfgc_args=()) -> dict:
    """`sdfgc plan --json` over SDFG files: per storage, each program's
    workspace bytes (formula and, with `symbols`, value) and the maximum."""
    if isinstance(sdfgs, (str, bytes)) or not hasattr(sdfgs, "__iter__"):
        sdfgs = [sdfgs]
    cmd = [binary(), "plan", *map(str, sdfgs), "--target", target, "--json"]
    if mode:
        cmd += ["--mode", mode]
    for k, v in (symbols or {}).items():
        cmd += ["--symbol", f"{k}={v}"]
    cmd += list(sdfgc_args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SdfgcError(r.stderr.strip() or f"sdfgc plan exited with {r.returncode}")
    return json.loads(r.stdout)


def svg(sdfgs, path=None, target="cpp", mode="external", symbols=None, file_symbols=None,
        sdfgc_args=()) -> str:
    """`sdfgc plan --svg` over SDFG files: the picture of every program's
    workspace (each transient's live range at its offset, packed beside
    DaCe's sequential layout) under the size to allocate per storage.
    Returns the SVG text and, with `path`, writes it there. `symbols`: values
    for every file; `file_symbols`: {sdfg file: {symbol: value}} for one
    file each (`--symbols-json`), which win. `mode=None` keeps the
    lifetimes stored in the SDFGs."""
    if isinstance(sdfgs, (str, bytes, os.PathLike)) or not hasattr(sdfgs, "__iter__"):
        sdfgs = [sdfgs]
    sdfgs = [os.fspath(f) for f in sdfgs]
    with tempfile.TemporaryDirectory(prefix="sdfgc-svg-") as tmp:
        out = os.fspath(path) if path is not None else os.path.join(tmp, "plan.svg")
        cmd = [binary(), "plan", *sdfgs, "--target", target, "--svg", out]
        if mode:
            cmd += ["--mode", mode]
        for k, v in (symbols or {}).items():
            cmd += ["--symbol", f"{k}={int(v)}"]
        if file_symbols:
            per_file = os.path.join(tmp, "symbols.json")
            with open(per_file, "w") as fh:
                json.dump({os.fspath(f): {k: int(v) for k, v in values.items()}
                           for f, values in file_symbols.items()}, fh)
            cmd += ["--symbols-json", per_file]
        cmd += list(sdfgc_args)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SdfgcError(r.stderr.strip() or f"sdfgc plan --svg exited with {r.returncode}")
        with open(out, encoding="utf-8") as fh:
            return fh.read()


def numpy_allocator(nbytes, alignment):
    """A host buffer of `nbytes` aligned to `alignment` (numpy if installed,
    else ctypes)."""
    try:
        import numpy as np
    except ImportError:
        return _CtypesBuffer(nbytes, alignment)
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    off = (-raw.ctypes.data) % alignment
    return raw[off:off + nbytes]  # the view keeps `raw` alive


def cupy_allocator(nbytes, alignment):
    """A device buffer of `nbytes` aligned to `alignment` (cupy)."""
    try:
        import cupy as cp
    except ImportError as e:
        raise WorkspaceError("a GPU_Global workspace needs cupy or an allocator (nbytes, alignment) -> buffer") from e
    raw = cp.empty(nbytes + alignment, dtype=cp.uint8)
    off = (-raw.data.ptr) % alignment
    return raw[off:off + nbytes]


class _CtypesBuffer:
    def __init__(self, nbytes, alignment):
        self._raw = (ctypes.c_char * (nbytes + alignment))()
        base = ctypes.addressof(self._raw)
        self.ptr = base + (-base) % alignment
        self.nbytes = nbytes


def _address(buf) -> int:
    """The address of a buffer: `__cuda_array_interface__`,
    `__array_interface__`, a `ptr` attribute (cupy's memory pointers) or an int."""
    for attr in ("__cuda_array_interface__", "__array_interface__"):
        iface = getattr(buf, attr, None)
        if iface is not None:
            return int(iface["data"][0])
    if hasattr(buf, "ptr"):
        return int(buf.ptr)
    if isinstance(buf, int):
        return buf
    raise WorkspaceError(f"cannot take the address of a {type(buf).__name__} workspace buffer")


def _nbytes(buf, asked: int) -> int:
    n = getattr(buf, "nbytes", None)
    return int(n) if n is not None else asked


class _Symbols:
    """Functions of a loaded library: DaCe's ReloadableDLL or a ctypes.CDLL."""

    def __init__(self, lib):
        self._lib = lib

    def get(self, name, restype):
        if hasattr(self._lib, "get_symbol"):  # dace's ReloadableDLL
            return self._lib.get_symbol(name, restype)
        try:
            fn = getattr(self._lib, name)
        except AttributeError as e:
            raise KeyError(name) from e
        fn.restype = restype
        return fn


class Workspace:
    """One workspace of a storage ("CPU_Heap" or "GPU_Global") shared by every
    program attached to it. `allocator(nbytes, alignment) -> buffer`
    (default: numpy for CPU_Heap, cupy for GPU_Global) makes the buffer; it
    grows to the largest program served. `nbytes` reserves a size up front
    (see `plan`)."""

    def __init__(self, storage="CPU_Heap", allocator=None, nbytes=0):
        if storage not in _DEFAULT_ALIGN:
            raise ValueError(f"storage must be CPU_Heap or GPU_Global, not {storage!r}")
        self.storage = storage
        self.allocator = allocator or (numpy_allocator if storage == "CPU_Heap" else cupy_allocator)
        self.alignment = _DEFAULT_ALIGN[storage]
        self.nbytes = 0  # what the current buffer holds
        self.buffer = None
        self._programs = []  # (alive() -> bool, set(workspace) -> None)
        self._handles = set()  # states attached by `lib=`/`handle=` and not detached
        self._planned = None  # the arguments of the last `plan`, for `svg`
        if nbytes:
            self.reserve(nbytes)

    @property
    def address(self) -> int:
        return _address(self.buffer) if self.buffer is not None else 0

    def reserve(self, nbytes, alignment=None):
        """Grows the buffer to at least `nbytes` (aligned to `alignment`);
        programs already attached get the new buffer."""
        alignment = max(self.alignment, alignment or 0)
        if self.buffer is not None and nbytes <= self.nbytes and self.address % alignment == 0:
            return
        buf = self.allocator(max(nbytes, self.nbytes, 1), alignment)
        self.buffer, self.nbytes, self.alignment = buf, _nbytes(buf, max(nbytes, self.nbytes, 1)), alignment
        self._programs = [p for p in self._programs if p[0]()]
        for _, set_ in self._programs:
            set_(self)

    def plan(self, sdfgs, symbols=None, target=None, mode="external", sdfgc_args=()) -> int:
        """Reserves the largest workspace of this storage that `sdfgc plan`
        computes for the SDFG files with these symbol values; returns it."""
        target = target or ("cpp" if self.storage == "CPU_Heap" else "cuda")
        self._planned = dict(sdfgs=sdfgs, symbols=symbols, target=target, mode=mode, sdfgc_args=sdfgc_args)
        report = plan(sdfgs, target=target, mode=mode, symbols=symbols, sdfgc_args=sdfgc_args).get(self.storage)
        if not report:
            return 0
        if report.get("max_bytes") is None:
            raise WorkspaceError(f"sdfgc plan gives the {self.storage} workspace as {report.get('max')}: "
                                 "pass every symbol in `symbols`")
        self.reserve(int(report["max_bytes"]))
        return int(report["max_bytes"])

    def svg(self, sdfgs=None, path=None, symbols=None, file_symbols=None, target=None, mode="external",
            sdfgc_args=()) -> str:
        """The picture of the workspace of these SDFG files (default: those
        of the last `plan`, with its symbols): `sdfgc plan --svg`, every
        program's transients packed beside DaCe's layout, under the size to
        allocate. Returns the SVG text; with `path`, also writes it there."""
        if sdfgs is None:
            if self._planned is None:
                raise WorkspaceError("no SDFG files to draw: pass `sdfgs` or call `plan` first")
            args = dict(self._planned)
        else:
            args = dict(sdfgs=sdfgs, symbols=symbols, mode=mode, sdfgc_args=sdfgc_args,
                        target=target or ("cpp" if self.storage == "CPU_Heap" else "cuda"))
        if symbols is not None:
            args["symbols"] = symbols
        return svg(path=path, file_symbols=file_symbols, **args)

    def attach(self, program, *init_args, lib=None, handle=None):
        """Hands the workspace to a program: an initialized DaCe
        `CompiledSDFG` (its init arguments are DaCe's), or a library (`lib`:
        ctypes.CDLL or DaCe's ReloadableDLL, `program`: the SDFG name,
        `handle`: the state `__dace_init_<name>` returned, `init_args`: its
        arguments as ctypes values). Returns `program`."""
        if lib is None:  # a CompiledSDFG
            csdfg = program
            if not csdfg._initialized:
                raise WorkspaceError("initialize the CompiledSDFG (call it or .initialize(...)) before attaching")
            ref = weakref.ref(csdfg)
            syms, name = _Symbols(csdfg._lib), csdfg._sdfg.name
            args = tuple(csdfg._lastargs[1]) if init_args == () and csdfg._lastargs else tuple(init_args)
            at = _handle_value(csdfg._libhandle)
            handle_of = lambda: csdfg_handle(ref)  # noqa: E731
            # DaCe's finalize() frees the state: never hand a buffer to it again
            alive = lambda: ref() is not None and ref()._initialized and _handle_value(ref()._libhandle) == at  # noqa: E731
        else:
            syms, name, args = _Symbols(lib), program, tuple(init_args)
            at = _handle_value(handle)
            handle_of = lambda: handle  # noqa: E731
            alive = lambda: at in self._handles  # noqa: E731
        s = self.storage
        try:
            size_fn = syms.get(f"__dace_get_external_memory_size_{s}", ctypes.c_size_t)
            align_fn = syms.get(f"__sdfgc_workspace_alignment_{s}", ctypes.c_size_t)
            setter = syms.get(f"__sdfgc_set_workspace_{s}", ctypes.c_int)
            message = syms.get("__sdfgc_error_string", ctypes.c_char_p)
        except KeyError as e:
            raise WorkspaceError(f"program '{name}' has no checked {s} workspace setter: build it with sdfgc "
                                 f"in the external mode ({e})") from e

        def set_(ws):
            rc = setter(handle_of(), ctypes.c_void_p(ws.address), ctypes.c_size_t(ws.nbytes), *args)
            if rc != 0:
                raise WorkspaceError(f"{s} workspace of '{name}': {message(rc).decode()}")

        needed = size_fn(handle_of(), *args)
        self.reserve(needed, align_fn())
        set_(self)
        self._programs.append((alive, set_))
        self._handles.add(at)
        return program

    def follow(self, alive, set_):
        """Registers a program through its own setter (`set_(workspace)`,
        e.g. DaCe's `CompiledSDFG.set_workspace` for a library DaCe built,
        which has no checked setter): it gets the buffer now and again after
        every growth while `alive()` is true."""
        set_(self)
        self._programs.append((alive, set_))

    def detach(self, handle):
        """Forgets a program attached with `lib=`/`handle=` (call it before
        `__dace_exit_<name>` frees the state): a later growth no longer
        hands it the new buffer. CompiledSDFGs are forgotten by themselves
        when DaCe finalizes them."""
        self._handles.discard(_handle_value(getattr(handle, "_libhandle", handle)))
        self._programs = [p for p in self._programs if p[0]()]


def _handle_value(handle) -> int:
    return int(handle.value or 0) if isinstance(handle, ctypes.c_void_p) else int(handle or 0)


def csdfg_handle(ref):
    csdfg = ref()
    if csdfg is None:
        raise WorkspaceError("the CompiledSDFG is gone")
    return csdfg._libhandle
