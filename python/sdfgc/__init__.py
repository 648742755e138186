"""sdfgc from Python: compile DaCe SDFGs with sdfgc.

    import sdfgc
    lib = sdfgc.build("program.sdfg", target="cpp", mode="external")   # cached
    ws = sdfgc.Workspace("CPU_Heap")                                    # one buffer for many programs

    import sdfgc.dace
    sdfgc.dace.enable()               # DaCe's SDFG.compile() (which gt4py calls) builds through sdfgc
    csdfg = sdfgc.dace.load(sdfg)     # DaCe's CompiledSDFG of sdfgc's library, built with g++ directly

`SDFGC_DACE=1` in the environment enables `sdfgc.dace` in every Python
process of an environment where the package is installed (its `.pth` file),
gt4py's spawned build workers included. No dependency beyond the standard
library; numpy, DaCe, gt4py and cupy are used where installed.
"""

from ._binary import SdfgcError, binary, version
from ._build import BuildResult, CompilerError, build, default_cache_dir, default_compiler, default_flags
from ._load import MpiLoadError, load_library
from ._workspace import Workspace, plan

__all__ = ["binary", "version", "build", "BuildResult", "SdfgcError", "CompilerError", "Workspace", "plan",
           "default_cache_dir", "default_compiler", "default_flags", "load_library", "MpiLoadError"]
