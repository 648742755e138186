"""Put this folder on PYTHONPATH with SDFGC_DACE=1: every Python process,
spawned workers included, compiles DaCe SDFGs through sdfgc."""
import os

if os.environ.get("SDFGC_DACE") == "1":
    import sdfgc.dace

    sdfgc.dace.enable_from_environment()
