"""pytest plugin of scripts/dace-tests.py: one JSON line per test event.

Loaded with `-p dace_tests_plugin` (scripts/ on PYTHONPATH) when
`DTESTS_RECORD` names a file. Each test appends
  {"ev": "start", "id": ..., "t": ...}                  before its setup
  {"ev": "end", "id": ..., "outcome": ..., "seconds": ..., "programs": ...,
   "log": [...], "longrepr": ...}                          after its teardown
and the file is flushed at once, so when a test kills the interpreter
(segfault, abort, a sanitizer report) the runner sees which test started
and did not end. `programs` is the number of build folders the test made in
DaCe's build folder (DACE_cache=unique: one per compiled SDFG); `log` the
lines it added to SDFGC_DACE_LOG (sdfgc's compiled/refused/checked lines).
With `DTESTS_KEEP` set, sdfgc keeps the SDFGs each test hands it in
DTESTS_KEEP/<test id>/ (SDFGC_DACE_KEEP is read at every build). With
`DTESTS_PRELOAD_ONLY_HERE` set, LD_PRELOAD (libasan) is dropped from the
environment of the processes the tests start (CMake, g++, sdfgc).
"""

import json
import os
import re
import time

_PATH = os.environ.get("DTESTS_RECORD")
_state = {}
if os.environ.get("DTESTS_PRELOAD_ONLY_HERE"):
    # libasan is loaded into this interpreter; the compilers DaCe starts run without it (faster).
    os.environ.pop("LD_PRELOAD", None)


def _write(obj):
    with open(_PATH, "a") as fh:
        fh.write(json.dumps(obj) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _build_dirs():
    folder = os.environ.get("DACE_default_build_folder")
    try:
        return set(os.listdir(folder)) if folder else set()
    except FileNotFoundError:
        return set()


def _log_size():
    path = os.environ.get("SDFGC_DACE_LOG")
    return os.path.getsize(path) if path and os.path.exists(path) else 0


def _log_since(offset):
    path = os.environ.get("SDFGC_DACE_LOG")
    if not path or not os.path.exists(path):
        return []
    with open(path, errors="replace") as fh:
        fh.seek(offset)
        return [line.rstrip("\n")[:2000] for line in fh]


def _short(text, limit=12000):
    """Head and tail of a long failure text."""
    return text if len(text) <= limit else text[:limit // 3] + "\n[...]\n" + text[-2 * limit // 3:]


def pytest_runtest_logstart(nodeid, location):
    if not _PATH:
        return
    keep = os.environ.get("DTESTS_KEEP")
    if keep:
        os.environ["SDFGC_DACE_KEEP"] = os.path.join(keep, re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid)[:200])
    _state.clear()
    _state.update(t=time.time(), dirs=_build_dirs(), log=_log_size(), outcome="passed", longrepr="")
    _write({"ev": "start", "id": nodeid, "t": _state["t"]})


def pytest_runtest_logreport(report):
    if not _PATH or not _state:
        return
    if hasattr(report, "wasxfail"):
        _state["outcome"] = "xpassed" if report.passed else "xfailed"
    elif report.failed:
        if _state["outcome"] != "failed":  # the first failure (call, else setup/teardown) says why
            _state["outcome"] = "failed"
            _state["longrepr"] = _short(str(report.longrepr))
            _state["when"] = report.when
    elif report.skipped and _state["outcome"] == "passed":
        _state["outcome"] = "skipped"
        _state["longrepr"] = str(report.longrepr)[:500]


def pytest_runtest_logfinish(nodeid, location):
    if not _PATH or not _state:
        return
    _write({"ev": "end", "id": nodeid, "outcome": _state["outcome"], "when": _state.get("when"),
            "seconds": round(time.time() - _state["t"], 3), "programs": len(_build_dirs() - _state["dirs"]),
            "log": _log_since(_state["log"]), "longrepr": _state["longrepr"]})
    _state.clear()
