"""pytest plugin: ICON4Py's stencil tests with gt4py's DaCe CPU backend in
each of gt4py's transient memory modes, through DaCe's generator or sdfgc
(`SDFGC_DACE=1`), EXTERNAL with one workspace for the whole session.

    SDFGC_DACE=1 python -m pytest -p sdfgc.icon4py_modes --backend=dace_cpu_external \\
        --grid=simple ... model/atmosphere/dycore/tests/dycore/stencil_tests

It adds four backends to ICON4Py's `--backend` names, `dace_cpu_scoped`,
`dace_cpu_persistent`, `dace_cpu_pool` and `dace_cpu_external`: ICON4Py's
`dace_cpu` (its factory, its per-program options) with
`optimization_args["transient_memory_mode"]` set, through gt4py 1.2.1's
`make_dace_backend`.

EXTERNAL: every program of the session gets the same `external_workspace`
({DeviceType.CPU: buffer}), backed by one `sdfgc.Workspace`: before a
program's first call (gt4py's `_configure_external_workspace`, after the
library's `__dace_init_*`) the workspace grows to the program's
`__dace_get_external_memory_size_CPU_Heap`, and every program served so far
is handed the new buffer (DaCe's `CompiledSDFG.set_workspace`, the
`__dace_set_external_memory_CPU_Heap` every library has, DaCe's or
sdfgc's). Every buffer is poisoned (0xFF bytes: NaN doubles, -1 integers)
before its first use, so a program that reads a transient before writing it
reads garbage; after that, programs run in it in any order on what the
others left there. `--workspace-report FILE` writes the programs served with their sizes
and tests and the workspace's size (after every program and at the end of
the session
; JSON; under pytest-xdist one file per worker, FILE.gw0, ...: each
worker process has its own shared workspace), and at the end of the session
FILE.svg, the picture of every program's workspace (`sdfgc plan --svg`,
each program at the symbol values of its largest call; its SDFG saved
under FILE.sdfgs/).

Not part of ICON4Py: load it with `-p sdfgc.icon4py_modes`.
"""

import glob
import hashlib
import json
import os
import weakref

import pytest

from ._workspace import Workspace, numpy_allocator

# --grid=torus:NxM and --levels K (python/sdfgc/icon4py_grid.py) come with this plugin.
pytest_plugins = ["sdfgc.icon4py_grid"]

MODES = ("scoped", "persistent", "pool", "external")
POISON = 0xFF

_workspace = None
_served = []  # (program name, bytes asked, test)
_pictured = {}  # program name -> (saved SDFG, symbol values, bytes) of its largest call
_report = None  # --workspace-report's file (this process's)


def _poisoned(nbytes, alignment):
    buf = numpy_allocator(nbytes, alignment)
    buf[...] = POISON
    return buf


class _WorkspaceView:
    """The dict value gt4py checks and DaCe reads: the shared workspace's
    current buffer (its `__array_interface__` and `nbytes`)."""

    def __init__(self, ws):
        self._ws = ws

    @property
    def __array_interface__(self):
        return self._ws.buffer.__array_interface__

    @property
    def nbytes(self):
        return self._ws.nbytes


def shared_workspace():
    """The session's one CPU_Heap workspace (made on first use, poisoned)."""
    global _workspace
    if _workspace is None:
        _workspace = Workspace("CPU_Heap", allocator=_poisoned, nbytes=64)
    return _workspace


def _install_growth_hook():
    """Before gt4py validates and installs the workspace of a program, grow
    the shared one to that program's size (re-pointing the others)."""
    import dace
    from gt4py.next.program_processors.runners.dace.workflow import compilation

    cls = compilation.CompiledDaceProgram
    if getattr(cls, "_sdfgc_shared_workspace", False):
        return
    original = cls._configure_external_workspace

    def configure(self, **kwargs):
        csdfg = self.sdfg_program
        csdfg.initialize(**kwargs)
        sizes = csdfg.get_workspace_sizes()
        need = sizes.get(dace.StorageType.CPU_Heap, 0)
        if need:
            ws = shared_workspace()
            ws.reserve(need)
            test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
            _served.append((csdfg.sdfg.name, int(need), test))
            _keep_for_picture(csdfg, int(need), kwargs)
            _write_report()
        original(self, **kwargs)
        if need:
            ref = weakref.ref(csdfg)
            at = csdfg._libhandle

            def alive():
                c = ref()
                return c is not None and c._initialized and c._libhandle is at

            # gt4py installed it; later growths re-point it.
            ws.follow(alive, lambda w: ref().set_workspace(dace.StorageType.CPU_Heap, _WorkspaceView(w)))

    cls._configure_external_workspace = configure
    cls._sdfgc_shared_workspace = True


def _factory(original):
    """ICON4Py's `make_custom_dace_backend` with one more key of the backend
    descriptor, `sdfgc_mode`: the transient memory mode (and for EXTERNAL the
    session's workspace). ICON4Py's per-program options (`get_dace_options`,
    which it applies only to descriptors whose factory is its own, looked
    up at call time) still apply."""
    from gt4py._core import definitions as core_defs
    from gt4py.next.program_processors.runners import dace as gtx_dace
    from gt4py.next.program_processors.runners.dace.transformations import TransientMemoryMode

    def make_custom_dace_backend(*, sdfgc_mode=None, sdfgc_gpu=False, **descriptor):
        if sdfgc_mode is None:
            return original(**descriptor)
        tmm = TransientMemoryMode[sdfgc_mode.upper()]
        args = dict(descriptor.get("optimization_args") or {})
        args["transient_memory_mode"] = tmm
        if sdfgc_gpu:
            return _gpu_backend(args, descriptor)
        external = None
        if tmm is TransientMemoryMode.EXTERNAL:
            _install_growth_hook()
            external = {core_defs.DeviceType.CPU: _WorkspaceView(shared_workspace())}
        # As ICON4Py's factory, plus the mode and the workspace.
        return gtx_dace.make_dace_backend(
            gpu=False,
            auto_optimize=descriptor.get("auto_optimize", True),
            async_sdfg_call=descriptor.get("async_sdfg_call", True),
            optimization_args=args,
            external_workspace=external,
            unstructured_horizontal_has_unit_stride=True,
            use_metrics=descriptor.get("use_metrics", True),
            use_zero_origin=descriptor.get("use_zero_origin", False),
            use_max_domain_range_on_unstructured_shift=descriptor.get(
                "use_max_domain_range_on_unstructured_shift"),
        )

    make_custom_dace_backend.sdfgc_original = original
    return make_custom_dace_backend


def _gpu_backend(args, descriptor):
    """gt4py's DaCe GPU backend (CUDA) with the mode in `args`. Without cupy
    (no GPU) gt4py still lowers the programs to its GPU SDFGs, but fields,
    calls and the workspace stay on the host: run with `NVCC` set to
    `scripts/emu-nvcc`, the libraries run on the project's emulated GPU
    runtime (with a real nvcc and no GPU, their init fails)."""
    from gt4py._core import definitions as core_defs
    from gt4py.next import common as gtx_common
    from gt4py.next.program_processors.runners.dace.transformations import TransientMemoryMode
    from gt4py.next.program_processors.runners.dace.workflow import backend as dace_backend

    gpu = core_defs.CUPY_DEVICE_TYPE
    external = None
    if args["transient_memory_mode"] is TransientMemoryMode.EXTERNAL:
        # gt4py sizes and installs it per program (from the GPU_Global size).
        buf = _poisoned(1 << 20, 256)
        external = {gpu or core_defs.DeviceType.CUDA: buf if gpu else _HostAsDeviceBuffer(buf)}
    args = args | {"unit_strides_kind": gtx_common.DimensionKind.HORIZONTAL}  # as make_dace_backend sets it
    options = dict(
        auto_optimize=descriptor.get("auto_optimize", True),
        external_workspace=external,
        otf_workflow__bare_translation__async_sdfg_call=descriptor.get("async_sdfg_call", True),
        otf_workflow__bare_translation__auto_optimize_args=args,
        otf_workflow__bare_translation__unstructured_horizontal_has_unit_stride=True,
        otf_workflow__bare_translation__use_metrics=descriptor.get("use_metrics", True),
        otf_workflow__bare_translation__disable_field_origin_on_program_arguments=descriptor.get(
            "use_zero_origin", False),
        otf_workflow__bare_translation__use_max_domain_range_on_unstructured_shift=descriptor.get(
            "use_max_domain_range_on_unstructured_shift"),
    )
    if gpu:
        return dace_backend.DaCeBackendFactory(gpu=True, **options)
    # GPU SDFGs (translation for CUDA), host fields and calls.
    _host_arrays_as_device_arrays()
    return dace_backend.DaCeBackendFactory(
        gpu=False, name_device="gpu", otf_workflow__bare_translation__device_type=core_defs.DeviceType.CUDA,
        **options)


class _HostAsDeviceBuffer:
    """Without a GPU, a host buffer that gt4py and DaCe take for a GPU_Global
    workspace (its `__cuda_array_interface__` is the buffer's own)."""

    def __init__(self, buf):
        self._buf = buf

    @property
    def __cuda_array_interface__(self):
        return dict(self._buf.__array_interface__, version=3, strides=None)

    @property
    def nbytes(self):
        return self._buf.nbytes


def _host_arrays_as_device_arrays():
    """Without cupy, DaCe takes a GPU_Global argument's (or workspace's)
    pointer from a NumPy array's `__array_interface__` (the emulated GPU
    runtime's kernels and copies read host memory), and gt4py finds the
    GPU_Global workspace under `DeviceType.CUDA`."""
    from dace import dtypes

    original = dtypes.array_interface_ptr
    if getattr(original, "_sdfgc_host", False):
        return

    def array_interface_ptr(array, storage):
        if storage == dtypes.StorageType.GPU_Global and not hasattr(array, "__cuda_array_interface__") \
                and hasattr(array, "__array_interface__"):
            return array.__array_interface__["data"][0]
        return original(array, storage)

    array_interface_ptr._sdfgc_host = True
    dtypes.array_interface_ptr = array_interface_ptr

    # gt4py finds a GPU_Global workspace under cupy's device type.
    from gt4py._core import definitions as core_defs
    from gt4py.next.program_processors.runners.dace.workflow import compilation

    to_device = compilation._map_storage_to_device

    def map_storage_to_device(storage):
        if storage == dtypes.StorageType.GPU_Global and core_defs.CUPY_DEVICE_TYPE is None:
            return core_defs.DeviceType.CUDA
        return to_device(storage)

    compilation._map_storage_to_device = map_storage_to_device


def register():
    """Adds `dace_cpu_<mode>` to ICON4Py's backends (`--backend=dace_cpu_external`)."""
    from icon4py.model.common import model_backends

    original = getattr(model_backends.make_custom_dace_backend, "sdfgc_original", None)
    if original is None:
        original = model_backends.make_custom_dace_backend
        wrapped = _factory(original)
        model_backends.make_custom_dace_backend = wrapped
        for desc in model_backends.BACKENDS.values():
            if isinstance(desc, dict) and desc.get("backend_factory") is original:
                desc["backend_factory"] = wrapped
    wrapped = model_backends.make_custom_dace_backend
    for mode in MODES:
        model_backends.BACKENDS[f"dace_cpu_{mode}"] = {
            "backend_factory": wrapped, "device": model_backends.CPU, "sdfgc_mode": mode}
        # GPU SDFGs; without cupy the fields are host arrays (see _gpu_backend)
        model_backends.BACKENDS[f"dace_gpu_{mode}"] = {
            "backend_factory": wrapped, "device": model_backends.GPU or model_backends.CPU,
            "sdfgc_mode": mode, "sdfgc_gpu": True}


def pytest_addoption(parser):
    group = parser.getgroup("sdfgc")
    group.addoption("--workspace-report", default=None,
                    help="EXTERNAL: write the shared workspace's programs and size here (JSON)")


def pytest_configure(config):
    register()
    backend = config.getoption("--backend", default=None) or ""
    for prefix in ("dace_cpu_", "dace_gpu_"):
        if backend.startswith(prefix):
            config._sdfgc_mode = backend[len(prefix):]
            config._sdfgc_target = "cuda" if prefix == "dace_gpu_" else "cpp"


def pytest_report_header(config):
    mode = getattr(config, "_sdfgc_mode", None)
    if mode:
        return f"sdfgc.icon4py_modes: dace_cpu with transient_memory_mode={mode.upper()}"
    return None


def _write_report():
    """Rewritten after every program served (a run stopped early keeps what
    it served) and at the end of the session."""
    if _report is None:
        return
    path, mode = _report[:2]
    ws = _workspace
    with open(path + ".tmp", "w") as f:
        json.dump({
            "mode": mode,
            "worker": os.environ.get("PYTEST_XDIST_WORKER"),
            "workspace_bytes": ws.nbytes if ws else 0,
            "programs": [{"name": n, "bytes": b, "test": t} for n, b, t in _served],
        }, f, indent=1)
    os.replace(path + ".tmp", path)


def _int(v):
    """A symbol value as gt4py passes it (int, numpy or ctypes scalar)."""
    return int(getattr(v, "value", v))


def _keep_for_picture(csdfg, need, kwargs):
    """With --workspace-report, saves the program's SDFG under FILE.sdfgs/
    with the symbol values of its largest call, for FILE.svg."""
    if _report is None or need <= _pictured.get(csdfg.sdfg.name, (None, None, -1))[2]:
        return
    folder = _report[0] + ".sdfgs"
    path = os.path.join(folder, csdfg.sdfg.name + ".sdfg")
    try:
        os.makedirs(folder, exist_ok=True)
        csdfg.sdfg.save(path)
    except Exception as e:  # noqa: BLE001 - the picture must not fail a test
        import warnings
        warnings.warn(f"sdfgc.icon4py_modes: {csdfg.sdfg.name} left out of the picture: {e}")
        return
    names = getattr(csdfg, "_free_symbols", None) or csdfg.sdfg.free_symbols
    symbols = {}
    for name in map(str, names):
        try:
            symbols[name] = _int(kwargs[name])
        except (KeyError, TypeError, ValueError):
            pass
    _pictured[csdfg.sdfg.name] = (path, symbols, need)


def _write_picture():
    """FILE.svg: `sdfgc plan --svg` over the programs served, each with its
    own symbol values, in the lifetimes they were built with. A failure is
    a warning: the JSON report stands."""
    if _report is None or not _pictured:
        return
    from ._workspace import svg
    entries = sorted(_pictured.values())
    try:
        svg([p for p, _, _ in entries], path=_report[0] + ".svg", mode=None, target=_report[2],
            file_symbols={p: values for p, values, _ in entries})
    except Exception as e:  # noqa: BLE001 - the session's result must not depend on the picture
        import warnings
        warnings.warn(f"sdfgc.icon4py_modes: no {_report[0]}.svg: {e}")


_keep = None  # (SDFGC_DACE_KEEP as given, this process's incoming folder)


def _keep_variants():
    """`SDFGC_DACE_KEEP` saves an SDFG as `<name>.sdfg`, so a program built
    twice (a test's parametrisations, other tests) keeps only its last
    SDFG. This process saves into its own folder instead, and after every
    test each new SDFG moves to `<keep>/<name>~<sha1 of its text, 8>.sdfg`:
    every distinct SDFG of the session, once."""
    if _keep is None:
        return
    final, incoming = _keep
    for path in glob.glob(os.path.join(incoming, "*.sdfg")):
        with open(path, "rb") as f:
            digest = hashlib.sha1(f.read()).hexdigest()[:8]
        stem = os.path.basename(path)[: -len(".sdfg")]
        os.replace(path, os.path.join(final, f"{stem}~{digest}.sdfg"))


def pytest_runtest_teardown(item, nextitem):
    _keep_variants()


def pytest_sessionstart(session):
    global _report, _keep
    keep = os.environ.get("SDFGC_DACE_KEEP")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if keep and (worker or session.config.getoption("dist", default="no") == "no"):
        incoming = os.path.join(keep, f".incoming-{worker or 'main'}")
        os.makedirs(incoming, exist_ok=True)
        _keep = (keep, incoming)
        os.environ["SDFGC_DACE_KEEP"] = incoming  # read by sdfgc.dace at every build
    path = session.config.getoption("--workspace-report")
    if not path:
        return
    # Under pytest-xdist every worker has its own workspace (one process,
    # one session's workspace) and writes FILE.<worker id>; the controller,
    # which runs no test, writes nothing.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        path = f"{path}.{worker}"
    elif session.config.getoption("dist", default="no") != "no":
        return
    _report = (path, getattr(session.config, "_sdfgc_mode", None),
               getattr(session.config, "_sdfgc_target", "cpp"))


def pytest_sessionfinish(session):
    _keep_variants()
    _write_report()
    _write_picture()
