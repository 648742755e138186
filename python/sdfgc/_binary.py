"""Finding the sdfgc executable and its version."""

import os
import shutil
import subprocess
import sys
import sysconfig


class SdfgcError(RuntimeError):
    """sdfgc refused an SDFG (the message is sdfgc's: file and JSON pointer),
    or a library built from its output could not be used."""


def _scripts_dirs():
    yield sysconfig.get_path("scripts")
    if sys.version_info >= (3, 10):
        yield sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user"))
    else:
        yield sysconfig.get_path("scripts", f"{os.name}_user")


def binary() -> str:
    """The sdfgc executable: `$SDFGC`; else the one this package was installed
    with (the wheel puts it in the environment's scripts folder, as ruff and
    uv do); else `sdfgc` on PATH; else a build in the source checkout
    (target/release, then target/debug)."""
    env = os.environ.get("SDFGC")
    if env:
        return env
    exe = "sdfgc" + (sysconfig.get_config_var("EXE") or "")
    for folder in _scripts_dirs():
        path = os.path.join(folder, exe)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = shutil.which("sdfgc")
    if found:
        return found
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target")
    for profile in ("release", "debug"):
        path = os.path.join(repo, profile, exe)
        if os.path.exists(path):
            return os.path.abspath(path)
    raise SdfgcError("sdfgc executable not found: `pip install sdfgc`, set $SDFGC or put sdfgc on PATH")


_versions = {}


def version(exe=None) -> str:
    """`sdfgc --version` of `exe` (default `binary()`), e.g. "sdfgc 0.1.0";
    asked once per executable and modification time."""
    exe = exe or binary()
    try:
        key = (exe, os.stat(exe).st_mtime_ns)
    except OSError:
        key = (exe, None)
    if key not in _versions:
        r = subprocess.run([exe, "--version"], capture_output=True, text=True)
        if r.returncode != 0:
            raise SdfgcError(f"{exe} --version failed: {r.stderr.strip()}")
        _versions[key] = r.stdout.strip()
    return _versions[key]


_digests = {}


def identity(exe=None) -> str:
    """`sdfgc --version` plus a digest of the executable: what the build
    cache keys on (two builds of one version from different sources differ)."""
    import hashlib

    exe = exe or binary()
    st = os.stat(exe)
    key = (exe, st.st_mtime_ns, st.st_size)
    if key not in _digests:
        h = hashlib.sha256()
        with open(exe, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        _digests[key] = h.hexdigest()[:16]
    return f"{version(exe)} ({_digests[key]})"
