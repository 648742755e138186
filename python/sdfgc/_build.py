"""`sdfgc.build`: SDFG -> sdfgc -> g++/nvcc/hipcc -> shared library, cached.

The cache key is the SDFG file's bytes, every option that changes the
library (target, mode, offload, extra sdfgc arguments, compiler and flags)
and `sdfgc --version` with a digest of the executable; a hit returns the library built before without
running anything. Any number of processes may build into one cache: each
entry is built by one process under a file lock (`<cache>/.locks/<key>.lock`)
in a private folder renamed into place; the others wait and reuse it, and a
process killed halfway leaves nothing that looks finished (`_locks`).
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

from ._binary import SdfgcError, binary, identity
from ._locks import lock_for, publish_folder, remove_stale

_EXT = {"cpp": "cpp", "cuda": "cu", "hip": "hip"}
_COMPILER_ENV = {"cpp": ("CXX", "g++"), "cuda": ("NVCC", "nvcc"), "hip": ("HIPCC", "hipcc")}
_DEFAULT_FLAGS = {
    "cpp": ["-std=c++17", "-O2", "-fopenmp", "-fPIC", "-shared"],
    "cuda": ["-std=c++17", "-O2", "-Xcompiler", "-fPIC,-fopenmp", "-shared"],
    "hip": ["-std=c++17", "-O2", "-fPIC", "-shared", "-fopenmp"],
}
# What a library built with `sdfgc --blas X` links (after its source file).
BLAS_LIBS = {"openblas": ["-lopenblas"], "cublas": ["-lcublas"], "hipblas": ["-lhipblas"]}
# The headers of the GPU libraries sdfgc's CUDA files call through DaCe's
# environments, and their link flags.
GPU_LIB_HEADERS = (("cusolverDn.h", "-lcusolver"), ("cusparse.h", "-lcusparse"), ("cufft.h", "-lcufft"))


class CompilerError(SdfgcError):
    """The C++/CUDA/HIP compiler failed on sdfgc's output."""


def mpi_flags(compiler: str):
    """(compile flags, link flags) of MPI for a file that calls it (DaCe's MPI
    library nodes): none when `compiler` is an MPI wrapper (mpicxx, mpic++,
    mpiCC), else those the wrapper `$MPICXX` (default mpicxx) reports (Open
    MPI's `--showme:compile`/`--showme:link`, MPICH's `-compile_info`/`-link_info`)."""
    if os.path.basename(compiler.split()[0]) in ("mpicxx", "mpic++", "mpiCC"):
        return [], []
    wrapper = os.environ.get("MPICXX") or "mpicxx"
    for compile_arg, link_arg in (("--showme:compile", "--showme:link"), ("-compile_info", "-link_info")):
        try:
            c = subprocess.run([wrapper, compile_arg], capture_output=True, text=True)
            k = subprocess.run([wrapper, link_arg], capture_output=True, text=True)
        except OSError as e:
            raise CompilerError(f"the program calls MPI, but MPI's compiler wrapper '{wrapper}' cannot be run "
                                f"(install MPI, e.g. Debian's openmpi-bin libopenmpi-dev, or set $MPICXX): {e}") from e
        if c.returncode == 0 and k.returncode == 0:
            cflags, lflags = c.stdout.split(), k.stdout.split()
            if compile_arg == "-compile_info":  # MPICH prints the whole command: keep the flags
                cflags = [f for f in cflags[1:] if f.startswith(("-I", "-D", "-pthread"))]
                lflags = [f for f in lflags[1:] if f.startswith(("-L", "-l", "-Wl", "-pthread"))]
            return cflags, lflags
    raise CompilerError(f"the program calls MPI, but '{wrapper}' reports no MPI flags "
                        "(install MPI, e.g. Debian's openmpi-bin libopenmpi-dev, or set $MPICXX)")


def default_cache_dir() -> str:
    """`$SDFGC_CACHE_DIR`, else `$XDG_CACHE_HOME/sdfgc`, else `~/.cache/sdfgc`,
    absolute (a relative one is taken from the current folder: the compiler
    runs in a build folder of its own, where a relative path names nothing)."""
    env = os.environ.get("SDFGC_CACHE_DIR")
    if env:
        return os.path.abspath(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.abspath(os.path.join(base, "sdfgc"))


def default_compiler(target: str) -> str:
    """`$CXX`/`$NVCC`/`$HIPCC` for the target, else g++/nvcc/hipcc."""
    var, fallback = _COMPILER_ENV[target]
    return os.environ.get(var) or fallback


def default_flags(target: str) -> list:
    """The compiler flags `build` uses when `flags` is not given."""
    return list(_DEFAULT_FLAGS[target])


def _sdfg_bytes(sdfg_or_path) -> bytes:
    if isinstance(sdfg_or_path, (str, os.PathLike)):
        with open(sdfg_or_path, "rb") as fh:
            return fh.read()
    if hasattr(sdfg_or_path, "to_json"):  # a dace.SDFG
        return json.dumps(sdfg_or_path.to_json()).encode()
    raise TypeError(f"build() takes an SDFG file path or a dace.SDFG, not {type(sdfg_or_path).__name__}")


class BuildResult(str):
    """The library path (a `str`), with `cached` (True on a cache hit),
    `name` (the SDFG's name) and `folder` (sources, header, library)."""

    cached: bool
    name: str
    folder: str


def offload_args(offload) -> list:
    """sdfgc's arguments for `offload`: False/None, True, "host-args" or
    "device-args"."""
    if not offload:
        return []
    if offload is True:
        return ["--offload"]
    if offload in ("host-args", "device-args"):
        return [f"--offload={offload}"]
    raise ValueError(f"offload must be True, False, 'host-args' or 'device-args', not {offload!r}")


def build(sdfg_or_path, target="cpp", mode=None, offload=False, build_dir=None, compiler=None, flags=None,
          extra_flags=(), sdfgc_args=(), blas=None, cache=True) -> BuildResult:
    """Compiles an SDFG (a `.sdfg` file or a `dace.SDFG`) with sdfgc and then
    with the target's compiler; returns the shared library's path.

    `target`: "cpp", "cuda" or "hip"; `mode`: None (the SDFG's lifetimes),
    "scoped", "persistent", "pool" or "external"; `offload`: sdfgc's
    `--offload` (True or "host-args": host arrays, copied in and out;
    "device-args": arrays already on the device); `build_dir`: the cache folder (default `default_cache_dir()`);
    `compiler`: default `$CXX`/`$NVCC`/`$HIPCC`, else g++/nvcc/hipcc; `flags`
    replace `default_flags(target)`, `extra_flags` are appended; `blas`:
    sdfgc's `--blas` ("openblas", "cublas", "hipblas"; BLAS library nodes call
    it, and the library links it); `sdfgc_args` go to sdfgc as they are. A refusal raises `SdfgcError` with sdfgc's
    message (file and JSON pointer), a compiler failure `CompilerError`."""
    if target not in _EXT:
        raise ValueError(f"target must be one of {sorted(_EXT)}, not {target!r}")
    if blas is not None and blas not in BLAS_LIBS:
        raise ValueError(f"blas must be one of {sorted(BLAS_LIBS)} or None, not {blas!r}")
    data = _sdfg_bytes(sdfg_or_path)
    exe = binary()
    cc = compiler or default_compiler(target)
    cflags = (default_flags(target) if flags is None else list(flags)) + list(extra_flags)
    args = ["--target", target]
    if mode:
        args += ["--mode", mode]
    args += offload_args(offload)
    if blas:
        args += ["--blas", blas]
    args += list(sdfgc_args)
    libs = BLAS_LIBS[blas] if blas else []
    key = hashlib.sha256()
    key.update(data)
    key.update(json.dumps({"sdfgc": identity(exe), "args": args, "cc": cc, "flags": cflags, "libs": libs}).encode())
    digest = key.hexdigest()[:24]
    root = os.path.abspath(build_dir or default_cache_dir())
    final = os.path.join(root, digest)
    if cache:
        found = _finished(final)
        if found:
            return found
    os.makedirs(root, exist_ok=True)
    # One builder per entry: the others wait here, then find it finished.
    with lock_for(root, digest):
        if cache:
            found = _finished(final)
            if found:
                return found
        remove_stale(root, f".{digest}-")  # what a killed builder of this entry left
        work = tempfile.mkdtemp(prefix=f".{digest}-", dir=root)
        try:
            name, lib_name = _compile(work, data, exe, args, cc, cflags, libs, target, sdfg_or_path)
            publish_folder(work, final)
            return _result(os.path.join(final, lib_name), False, name, final)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise


def _finished(final):
    """The result of a finished cache entry, or None (absent, or not whole)."""
    try:
        with open(os.path.join(final, "library.json")) as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        return None
    lib = os.path.join(final, meta["library"])
    return _result(lib, True, meta["name"], final) if os.path.exists(lib) else None


def _compile(work, data, exe, args, cc, cflags, libs, target, given):
    """sdfgc, then the compiler, in the private folder `work`; writes
    `library.json` last. Returns (program name, library file name)."""
    src_sdfg = os.path.join(work, "program.sdfg")
    with open(src_sdfg, "wb") as fh:
        fh.write(data)
    r = subprocess.run([exe, src_sdfg, *args, "-o", work], capture_output=True, text=True)
    if r.returncode != 0:
        raise SdfgcError(_located(r.stderr, given, src_sdfg) or f"sdfgc exited with {r.returncode}")
    sources = [f for f in os.listdir(work) if f.endswith("." + _EXT[target])]
    if len(sources) != 1:
        raise SdfgcError(f"sdfgc wrote {sources} for one SDFG in {work}")
    name = sources[0][: -len(_EXT[target]) - 1]
    lib_name = f"lib{name}.so"
    with open(os.path.join(work, sources[0])) as fh:
        code = fh.read()
    if "\n#include <cublas_v2.h>\n" in code and "-lcublas" not in libs:  # DaCe's own cuBLAS calls, kept
        libs = [*libs, "-lcublas"]
    for header, lib in GPU_LIB_HEADERS:  # cuSOLVER, cuSPARSE, cuFFT calls (DaCe's environments)
        if f"\n#include <{header}>\n" in code and lib not in libs:
            libs = [*libs, lib]
    calls_mpi = "\n#include <mpi.h>\n" in code
    cflags_mpi, libs_mpi = (mpi_flags(cc) if calls_mpi else ([], []))
    cmd = [*cc.split(), *cflags, *cflags_mpi, sources[0], "-o", lib_name, *libs, *libs_mpi]
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if r.returncode != 0:
        raise CompilerError(f"{' '.join(cmd)} failed in {work}:\n{r.stderr.strip()}")
    meta = {"name": name, "library": lib_name, "command": cmd, "sdfgc": [exe, *args], "mpi": calls_mpi}
    with open(os.path.join(work, "library.json"), "w") as fh:
        json.dump(meta, fh)
    return name, lib_name


def _located(stderr: str, given, copy: str) -> str:
    """sdfgc's message, naming the caller's file instead of the private copy."""
    msg = stderr.strip()
    if isinstance(given, (str, os.PathLike)):
        msg = msg.replace(copy, os.fspath(given))
    return msg


def _result(lib: str, cached: bool, name: str, folder: str) -> BuildResult:
    out = BuildResult(lib)
    out.cached, out.name, out.folder = cached, name, folder
    return out
