"""Imported at interpreter start-up by the installed `sdfgc-dace-switch.pth`
when `SDFGC_DACE=1`: DaCe's `SDFG.compile()` then generates through sdfgc in
this process (gt4py's spawned build workers included)."""
import sdfgc.dace

sdfgc.dace.enable_from_environment()
