"""Where a gt4py session's time goes, by phase, for `scripts/bench-session.py
--phases` (not part of the sdfgc package). With `SDFGC_PHASES_DIR` set, every
Python process of the session (gt4py's build workers included) adds up the
seconds spent in:

- `translate`: gt4py's translation step (its lowering of the program to an
  SDFG, DaCe's transformations and the SDFG's JSON);
- `compile_step`: gt4py's DaCe compilation step, all of it (the SDFG read
  back from JSON, `SDFG.compile()`, gt4py's cache folder and lock);
- within `SDFG.compile()`: `deepcopy`, `generate_code` (DaCe's code
  generator, or sdfgc's), `program_folder` (DaCe writing the build folder),
  `configure_and_compile` (CMake, or sdfgc's direct compiler call) and
  `load` (the library loaded);

and rewrites `<pid>.json` there after each call (per phase, the seconds of
each call). Phases nest: `compile_step`
holds the `SDFG.compile()` phases. Run the session with
`GT4PY_BUILD_JOBS_MODE=serial` to make the phases parts of the wall clock.
This file is a `sitecustomize`: `--phases` puts its folder on PYTHONPATH
(the sdfgc switch comes from its own `.pth` file, imported before this).
"""
import functools
import importlib.abc
import importlib.util
import json
import os
import sys
import time

_DIR = os.environ.get("SDFGC_PHASES_DIR")
_TOTALS = {}
_TRIGGER = "gt4py.next.program_processors.runners.dace.workflow.compilation"


def _dump():
    path = os.path.join(_DIR, f"{os.getpid()}.json")
    with open(path + ".tmp", "w") as fh:
        json.dump(_TOTALS, fh)
    os.replace(path + ".tmp", path)


def _timed(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _TOTALS.setdefault(name, []).append(round(time.perf_counter() - t0, 4))
            _dump()

    return wrapper


def _install():
    """Wraps the phases once gt4py's DaCe workflow is imported (DaCe and the
    sdfgc switch are in place by then)."""
    import dace
    from dace.codegen import codegen, compiler
    from gt4py.next.program_processors.runners.dace.workflow import compilation, translation

    translation.DaCeTranslator.__call__ = _timed("translate", translation.DaCeTranslator.__call__)
    compilation.DaCeCompiler.__call__ = _timed("compile_step", compilation.DaCeCompiler.__call__)
    dace.SDFG.__deepcopy__ = _timed("deepcopy", dace.SDFG.__deepcopy__)
    codegen.generate_code = _timed("generate_code", codegen.generate_code)
    compiler.generate_program_folder = _timed("program_folder", compiler.generate_program_folder)
    compiler.configure_and_compile = _timed("configure_and_compile", compiler.configure_and_compile)
    compiler.load_precompiled_sdfg = _timed("load", compiler.load_precompiled_sdfg)


class _AfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != _TRIGGER:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            _install()

        spec.loader.exec_module = exec_module
        return spec


if _DIR:
    os.makedirs(_DIR, exist_ok=True)
    sys.meta_path.insert(0, _AfterImport())
