"""Imported at interpreter start-up by the installed `sdfgc-dace-switch.pth`
(or the source checkout's sitecustomize) when `SDFGC_DACE=1`: once DaCe is
imported in this process (gt4py's spawned build workers included), its
`SDFG.compile()` generates through sdfgc. A process that never imports DaCe
pays nothing: the switch waits for DaCe's import."""
import importlib.abc
import importlib.util
import sys


def _enable():
    import sdfgc.dace

    sdfgc.dace.enable_from_environment()


class _AfterDaceImport(importlib.abc.MetaPathFinder):
    """Calls `_enable()` right after the `dace` package has been imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "dace":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("dace")
        if spec is None or spec.loader is None:
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            _enable()

        spec.loader.exec_module = exec_module
        return spec


if "dace" in sys.modules:
    _enable()
elif not any(isinstance(f, _AfterDaceImport) for f in sys.meta_path):
    sys.meta_path.insert(0, _AfterDaceImport())
