"""For a source checkout (no pip install): put this folder on PYTHONPATH with
SDFGC_DACE=1 and every Python process, spawned workers included, compiles
DaCe SDFGs through sdfgc. The installed package does the same with its
`sdfgc-dace-switch.pth`."""
import os

if os.environ.get("SDFGC_DACE") == "1":
    import sdfgc._startup.hook  # noqa: F401
