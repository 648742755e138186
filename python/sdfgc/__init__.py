"""sdfgc from Python: compile DaCe SDFGs with sdfgc.

`sdfgc.dace.enable()` makes DaCe's own `SDFG.compile()` (which gt4py calls)
generate its code with sdfgc; DaCe's build folder, CMake build, cache and
`CompiledSDFG` loader stay as they are. `SDFGC_DACE=1` in the environment
does the same in every Python process that imports `sitecustomize` from
`sdfgc/_startup` (see README).
"""

import os
import shutil

__all__ = ["binary", "SdfgcError"]


class SdfgcError(RuntimeError):
    """sdfgc refused an SDFG; the message is sdfgc's (file and JSON pointer)."""


def binary() -> str:
    """The sdfgc executable: `$SDFGC`, else the one on PATH, else the
    repository's release build."""
    env = os.environ.get("SDFGC")
    if env:
        return env
    found = shutil.which("sdfgc")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.join(here, "..", "..", "target", "release", "sdfgc")
    if os.path.exists(repo):
        return os.path.abspath(repo)
    raise SdfgcError("sdfgc executable not found: set $SDFGC or put sdfgc on PATH")
