"""DaCe's compile step without CMake, for the translation units sdfgc wrote.

`configure_and_compile` replaces `dace.codegen.compiler.configure_and_compile`
while `sdfgc.dace.enable()` is on. For a program folder whose one linkable
source is sdfgc's (it defines `__sdfgc_signature_<name>`), it runs the
compiler once on that source (compile and link in one command) and leaves
what DaCe's loader and caches look for: the library at the path
`compiler.get_binary_name` gives, the loader stub `libdacestub_<name>.so`
next to it, and the sources where `generate_program_folder` wrote them
(DaCe 2.x "production" folders are cleaned as DaCe cleans them). CMake is
not run. Any other folder (DaCe's own code, through `fallback=True`) goes to
DaCe's CMake build.

The flags are DaCe's configuration, as its CMake build would use them:
`compiler.cpu.executable` (else `$CXX`, else g++), `-std=c++17` (sdfgc's
language; DaCe's own `-std` and `cpp_standard` are dropped),
`compiler.cpu.args`, the flags CMake adds for `compiler.build_type`,
`-fopenmp -fPIC -shared`, `compiler.linker.args`. CUDA and HIP sources are
built with `sdfgc.build`'s nvcc/hipcc line. An environment's link flags come
from sdfgc's own table for the environments sdfgc names (OpenBLAS:
`-lopenblas`, cuBLAS: `-lcublas`, cuSolverDn, cuSPARSE, cuFFT: `-lcusolver`,
`-lcusparse`, `-lcufft`), else from the environment class
(`cmake_libraries`, `cmake_link_flags`, `cmake_compile_flags`,
`cmake_includes`); an environment that needs a CMake package to be found is
refused by name.

Libraries are cached by content (`<cache>/dace-lib/<key>`, the cache of
`default_cache_dir()`): the key is the source, the program name, the
compiler (path and `--version`), flags, link flags and the host's CPU (for
`-march=native`); a hit copies the library into the build folder without
compiling, in any process and any build folder. `sdfgc.dace` starts the
compiler (`start_build`) as soon as sdfgc's code exists, while DaCe still
prepares the SDFG and writes its folder; `configure_and_compile` then waits
for that build. GCC reads the leading standard headers from a precompiled
header cached per compiler and flags. The stub is compiled once per DaCe
version and compiler and copied.

Many processes (MPI ranks, pytest-xdist workers, gt4py's build pools) may
compile the same program into one build folder and one cache at once:
- which code a program folder holds is decided from what this process
  generated (`remember`, called as DaCe writes the folder), never by
  reading files another process may be rewriting at that moment: a
  half-written `dace_files.csv` once sent ranks to DaCe's CMake build, and a
  half-written `dace_environments.csv` built an MPI program without MPI's
  flags;
- each library, precompiled header and stub is built by one process under
  a file lock, in a private folder renamed into place; the others wait for
  the lock and copy it (`_locks`); a killed builder leaves only private
  folders, removed by the next builder of that entry;
- DaCe's writes to a program folder, and sdfgc's copies into it, hold the
  folder's lock (`<folder>/.sdfgc.lock`); files land there by rename, the
  loader stub before the library (which `compiler.use_cache` looks for).
No lock is waited for while the folder's lock is held.
"""

import functools
import hashlib
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import tempfile
import threading
import time

from ._binary import SdfgcError
from ._build import (_EXT, BLAS_LIBS, GPU_LIB_HEADERS, CompilerError, default_cache_dir, default_compiler,
                     default_flags)
from ._locks import folder_lock, lock_for, publish_file, publish_folder, remove_stale

_SIGNATURE = "__sdfgc_signature_"
# Bumped when what this module builds from the same inputs changes.
_BUILDER = "sdfgc-dace-build-1"

# The environments sdfgc's code objects name (see dace.py), and what they link.
KNOWN_ENVIRONMENTS = {
    "dace.libraries.blas.environments.openblas.OpenBLAS": BLAS_LIBS["openblas"],
    "dace.libraries.blas.environments.cublas.cuBLAS": BLAS_LIBS["cublas"],
    "dace.libraries.lapack.environments.cusolverdn.cuSolverDn": ["-lcusolver"],
    "dace.libraries.sparse.environments.cusparse.cuSPARSE": ["-lcusparse"],
    "dace.libraries.fft.environments.cufft.cuFFT": ["-lcufft"],
}

# DaCe's MPI environment: flags from MPI's compiler wrapper (`_build.mpi_flags`).
MPI_ENVIRONMENT = "dace.libraries.mpi.environments.mpi.MPI"

# CMake's CMAKE_CXX_FLAGS_<BUILD_TYPE> for GCC and Clang (appended after CMAKE_CXX_FLAGS).
BUILD_TYPE_FLAGS = {
    "Debug": ["-g"],
    "Release": ["-O3", "-DNDEBUG"],
    "RelWithDebInfo": ["-O2", "-g", "-DNDEBUG"],
    "MinSizeRel": ["-Os", "-DNDEBUG"],
}

# Seconds spent in each step of the last builds (for scripts/bench-build-time.py).
timings = []


def sdfgc_source(program_folder, program_name):
    """(path, target) of sdfgc's translation unit in a DaCe program folder,
    or None when the folder's linkable source is not one sdfgc wrote."""
    try:
        with open(os.path.join(program_folder, "dace_files.csv")) as fh:
            rows = [line.strip().split(",") for line in fh if line.strip()]
    except OSError:
        return None
    if len(rows) != 1 or len(rows[0]) != 3:
        return None
    target_name, target_type, file_name = rows[0]
    path = os.path.join(program_folder, "src", target_name, target_type, file_name)
    try:
        with open(path) as fh:
            code = fh.read()
    except OSError:
        return None
    if f"{_SIGNATURE}{program_name}(" not in code and f"{_SIGNATURE}{program_name} " not in code:
        return None
    if file_name.endswith(".cpp"):
        return path, "cpp"
    return path, ("hip" if "hip/hip_runtime.h" in code else "cuda")


def _config(*keys, default=None):
    from dace.config import Config

    try:
        value = Config.get(*keys)
    except (KeyError, TypeError):
        return default
    return default if value is None else value


def cpu_command_parts():
    """(compiler, flags before the source, flags after it) of a CPU build, from DaCe's configuration."""
    exe = _config("compiler", "cpu", "executable", default="") or default_compiler("cpp")
    args = shlex.split(_config("compiler", "cpu", "args", default=""))
    # sdfgc's translation unit is C++17 and includes no DaCe header: DaCe's
    # `-std=` and `compiler.cpp_standard` (20 in DaCe 2.x) are for DaCe's own
    # code; C++20's standard headers cost GCC about 3x the front-end time.
    std = "-std=c++17"
    args = [a for a in args if not a.startswith("-std=")]
    build_type = _config("compiler", "build_type", default="Release")
    flags = [std, *args, *BUILD_TYPE_FLAGS.get(build_type, []), "-fopenmp", "-fPIC", "-shared"]
    link = shlex.split(_config("compiler", "linker", "args", default="") or "")
    return exe, flags, link


def environment_flags(names):
    """(compile flags, link flags) of DaCe environments (dotted class names)."""
    compile_flags, link_flags = [], []
    if MPI_ENVIRONMENT in names:  # MPI's own compiler wrapper says how (DaCe's finds it with CMake)
        from ._build import mpi_flags

        compile_flags, link_flags = (list(f) for f in mpi_flags("c++"))
        names = set(names) - {MPI_ENVIRONMENT}
    unknown = sorted(n for n in names if n and n not in KNOWN_ENVIRONMENTS)
    for n in sorted(names):
        for flag in KNOWN_ENVIRONMENTS.get(n, ()):
            if flag not in link_flags:
                link_flags.append(flag)
    if not unknown:
        return compile_flags, link_flags
    import dace.library
    from dace.codegen.compiler import _get_or_eval

    for env in dace.library.get_environments_and_dependencies(set(unknown)):
        name = env.full_class_path() if hasattr(env, "full_class_path") else f"{env.__module__}.{env.__name__}"
        if name in KNOWN_ENVIRONMENTS:
            continue
        libs = [str(x) for x in _get_or_eval(env.cmake_libraries)]
        cflags = [str(x) for x in _get_or_eval(env.cmake_compile_flags)]
        lflags = [str(x) for x in _get_or_eval(env.cmake_link_flags)]
        packages = list(_get_or_eval(env.cmake_packages))
        if packages and not libs:
            raise SdfgcError(f"environment '{env.__name__}' ({name}) needs the CMake package(s) {packages} "
                             f"to find its libraries; sdfgc's build without CMake cannot link it")
        for inc in _get_or_eval(env.cmake_includes):
            compile_flags.append(f"-I{inc}")
        for f in cflags:
            if "${" not in f:
                compile_flags += shlex.split(f)
        for lib in libs:
            if "${" in lib:
                continue
            link_flags.append(lib if lib.startswith("-") or os.path.isabs(lib) else f"-l{lib}")
        for f in lflags:
            if "${" not in f:
                link_flags += shlex.split(f)
    return compile_flags, link_flags


@functools.lru_cache(maxsize=None)
def _compiler_identity(exe):
    path = shutil.which(exe.split()[0]) or exe
    try:
        r = subprocess.run([*exe.split(), "--version"], capture_output=True, text=True)
        version = r.stdout.strip()
    except OSError as e:
        raise CompilerError(f"compiler {exe!r} cannot be run: {e}")
    return f"{os.path.realpath(path)}\n{version}"


@functools.lru_cache(maxsize=1)
def _host_identity():
    """The CPU `-march=native` resolves to (a cache folder may be shared across hosts)."""
    try:
        with open("/proc/cpuinfo") as fh:
            return "".join([ln for ln in fh if ln.startswith(("model name", "flags", "Features"))][:2])
    except OSError:
        import platform

        return platform.machine()


def leading_system_includes(code: bytes):
    """The `#include <...>` lines a translation unit starts with (after its
    comment lines), as written; nothing is defined before them."""
    out = []
    for line in code.decode(errors="replace").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if stripped.startswith("#include <") and stripped.endswith(">"):
            out.append(stripped)
            continue
        break
    return out


def precompiled_header(cc, flags, code):
    """Flags that make GCC take the translation unit's leading standard
    headers from a precompiled header built once with the same compiler and
    flags (cached; its front end is then about a quarter of the whole
    compile). The source still includes the headers (their include guards
    make the second inclusion empty), so a precompiled header that GCC
    rejects only costs time. Empty for other compilers."""
    includes = leading_system_includes(code)
    if not includes or "Free Software Foundation" not in _compiler_identity(cc) or "clang" in cc:
        return []
    pch_flags = [f for f in flags if f != "-shared"]
    key = hashlib.sha256(json.dumps({"builder": _BUILDER, "cc": _compiler_identity(cc), "flags": pch_flags,
                                     "includes": includes, "host": _host_identity()}).encode())
    root = os.path.join(default_cache_dir(), "dace-pch")
    digest = key.hexdigest()[:24]
    final = os.path.join(root, digest)
    header = os.path.join(final, "sdfgc_std.h")
    if not os.path.exists(header + ".gch"):
        os.makedirs(root, exist_ok=True)
        with lock_for(root, digest):
            if not os.path.exists(header + ".gch"):
                remove_stale(root, f".{digest}-")
                work = tempfile.mkdtemp(prefix=f".{digest}-", dir=root)
                try:
                    with open(os.path.join(work, "sdfgc_std.h"), "w") as fh:
                        fh.write("\n".join(includes) + "\n")
                    r = subprocess.run([*cc.split(), *pch_flags, "-x", "c++-header", "sdfgc_std.h", "-o",
                                        "sdfgc_std.h.gch"], cwd=work, capture_output=True, text=True)
                    if r.returncode != 0:  # no precompiled header: the plain build still works
                        return []
                    publish_folder(work, final)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
    if not os.path.exists(header + ".gch"):
        return []
    return ["-include", header]


def _copy_atomically(src, dst):
    publish_file(src, dst)


class _Build:
    """One library build: its cache entry, its lock, and the compiler process
    while it runs (finished and published by a thread of its own, so the
    entry's lock is held only while the compiler runs)."""

    def __init__(self, code, target, name, environments):
        env_compile, env_link = environment_flags(environments)
        if target == "cpp":
            cc, flags, link = cpu_command_parts()
        else:
            cc, flags, link = default_compiler(target), default_flags(target), []
        libs = list(env_link)
        if b"\n#include <cublas_v2.h>\n" in code and "-lcublas" not in libs:  # DaCe's own cuBLAS calls, kept
            libs.append("-lcublas")
        for header, lib in GPU_LIB_HEADERS:  # cuSOLVER, cuSPARSE, cuFFT calls
            if f"\n#include <{header}>\n".encode() in code and lib not in libs:
                libs.append(lib)
        flags = [*flags, *env_compile]
        key = hashlib.sha256(code)
        key.update(json.dumps({"builder": _BUILDER, "name": name, "target": target, "cc": _compiler_identity(cc),
                               "flags": flags, "link": [*link, *libs], "host": _host_identity()}).encode())
        self.code, self.target, self.name = code, target, name
        self.cc, self.flags, self.link, self.libs = cc, flags, link, libs
        self.digest = key.hexdigest()[:24]
        self.root = os.path.join(default_cache_dir(), "dace-lib")
        self.final = os.path.join(self.root, self.digest)
        self.lib_name = f"lib{name}.so"
        self.cached = os.path.join(self.final, self.lib_name)
        self.lock = lock_for(self.root, self.digest)
        self.proc = self.work = self.cmd = self.error = self.thread = None

    def hit(self):
        return os.path.exists(os.path.join(self.final, "library.json")) and os.path.exists(self.cached)

    def claim(self, blocking):
        """Takes the entry's lock (waiting for another builder when
        `blocking`). False: another process builds it (not blocking), or
        it is finished (then the lock is not held)."""
        os.makedirs(self.root, exist_ok=True)
        if not self.lock.acquire(blocking):
            return False
        if self.hit():  # another process built it while this one waited
            self.lock.release()
            return False
        return True

    def start(self):
        """Starts the compiler in a private folder of the cache (no wait);
        the entry's lock must be held (`claim`), and is released when the
        library is published or the compiler has failed."""
        try:
            remove_stale(self.root, f".{self.digest}-")  # what a killed builder of this entry left
            src_name = f"{self.name}.{_EXT[self.target]}"  # as sdfgc.build names it (nvcc, hipcc go by it)
            self.work = tempfile.mkdtemp(prefix=f".{self.digest}-", dir=self.root)
            with open(os.path.join(self.work, src_name), "wb") as fh:
                fh.write(self.code)
            pch = precompiled_header(self.cc, self.flags, self.code) if self.target == "cpp" else []
            self.cmd = [*self.cc.split(), *self.flags, *pch, src_name, "-o", self.lib_name, *self.link, *self.libs]
            self.proc = subprocess.Popen(self.cmd, cwd=self.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)
        except BaseException:
            if self.work:
                shutil.rmtree(self.work, ignore_errors=True)
            self.lock.release()
            raise
        self.thread = threading.Thread(target=self._finish, name=f"sdfgc-build-{self.name}", daemon=True)
        self.thread.start()

    def _finish(self):
        try:
            _, err = self.proc.communicate()
            if self.proc.returncode != 0:
                raise CompilerError(f"{' '.join(self.cmd)} failed in {self.work}:\n{err.strip()}")
            with open(os.path.join(self.work, "library.json"), "w") as fh:
                json.dump({"name": self.name, "library": self.lib_name, "command": self.cmd}, fh)
            publish_folder(self.work, self.final)
        except BaseException as e:  # reported by wait()
            self.error = e
            shutil.rmtree(self.work, ignore_errors=True)
        finally:
            self.lock.release()

    def wait(self):
        """Waits for the compiler and the library's publication in the cache."""
        self.thread.join()
        if self.error is not None:
            raise self.error


# Builds started early (`start_build`, while DaCe still writes its program
# folder), by cache key; `build_library` finishes them.
_pending = {}
_pending_lock = threading.Lock()


def start_build(code, target, name, environments=()):
    """Starts compiling sdfgc's translation unit `code` now, unless its
    library is cached or already being built (by this process or another);
    `build_library` on the same source later waits for it instead of
    compiling. A compiler that cannot be run starts nothing here: DaCe's
    code generation never compiles (a program only generated, as on a
    machine without nvcc, must not fail); the compile step reports it."""
    try:
        b = _Build(code, target, name, environments)
    except CompilerError:
        return
    with _pending_lock:
        if b.digest in _pending or b.hit():
            return
        if not b.claim(blocking=False):  # another process builds it: build_library waits for its lock
            return
        _pending[b.digest] = b
    try:
        b.start()
    except BaseException:
        with _pending_lock:
            _pending.pop(b.digest, None)
        raise


def build_library(code, target, name, dest, environments=(), folder=None):
    """Builds (or takes from the content-addressed cache, or waits for the
    build `start_build` began, or for another process building it) the
    library of sdfgc's translation unit `code` (bytes, or a source file's
    path) and copies it to `dest`, holding the lock of the program folder
    `folder` (default: `dest`'s folder). Returns True when this process did
    not compile it."""
    t0 = time.perf_counter()
    if isinstance(code, (str, os.PathLike)):
        with open(code, "rb") as fh:
            code = fh.read()
    b = _Build(code, target, name, environments)
    with _pending_lock:
        started = _pending.get(b.digest)
    hit = started is None and b.hit()
    waited = False
    t1 = time.perf_counter()
    if started is not None:
        try:
            started.wait()
        finally:
            with _pending_lock:
                if _pending.get(b.digest) is started:
                    del _pending[b.digest]
    elif not hit:
        if b.claim(blocking=True):
            b.start()
            b.wait()
        else:  # another process built it while this one waited for its lock
            hit = waited = True
    t2 = time.perf_counter()
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with folder_lock(folder or os.path.dirname(dest)):
        _copy_atomically(b.cached, dest)
    timings.append({"name": name, "hit": hit, "waited": waited, "early": started is not None, "prepare": t1 - t0,
                    "compile": t2 - t1, "copy": time.perf_counter() - t2})
    return hit


def stub(folder, name, compiler=None):
    """DaCe's loader stub (`libdacestub_<name>.so` in `folder`, as DaCe's
    CMake build leaves it), compiled once per DaCe version and compiler
    from DaCe's own `dacestub.cpp` and copied."""
    want = os.path.join(folder, f"libdacestub_{name}.so")
    cached = cached_stub(compiler)
    os.makedirs(folder, exist_ok=True)
    _copy_atomically(cached, want)
    return want


def cached_stub(compiler=None):
    """The cache's loader stub of this DaCe version and compiler, compiled
    by one process (the others wait for its lock)."""
    import dace.codegen.tools as tools

    src = os.path.join(os.path.dirname(tools.__file__), "dacestub.cpp")
    cxx = compiler or default_compiler("cpp")
    with open(src, "rb") as fh:
        digest = hashlib.sha256(fh.read() + _compiler_identity(cxx).encode()).hexdigest()[:16]
    root = default_cache_dir()
    cached = os.path.join(root, f"dacestub-{digest}.so")
    if not os.path.exists(cached):
        os.makedirs(root, exist_ok=True)
        with lock_for(root, f"dacestub-{digest}"):
            if not os.path.exists(cached):
                remove_stale(root, f".dacestub-{digest}.so.")
                fd, tmp = tempfile.mkstemp(prefix=f".dacestub-{digest}.so.", suffix=".tmp", dir=root)
                os.close(fd)
                try:
                    r = subprocess.run([*cxx.split(), "-std=c++17", "-O2", "-fPIC", "-shared", "-fopenmp", "-pthread",
                                        src, "-o", tmp, "-ldl"], capture_output=True, text=True)
                    if r.returncode != 0:
                        raise SdfgcError(f"building DaCe's loader stub failed:\n{r.stderr.strip()}")
                    os.chmod(tmp, 0o755)
                    os.replace(tmp, cached)
                finally:
                    if os.path.exists(tmp):
                        os.unlink(tmp)
    return cached


# What this process generated into each program folder (`remember`, as DaCe
# writes the folder): the folder's path -> (program name, code, target,
# environments). `configure_and_compile` takes its decision from here.
_generated = {}
_generated_lock = threading.Lock()


def sdfgc_code_object(code_objects):
    """(code bytes, target) of sdfgc's translation unit among DaCe code
    objects (the one linkable object, defining `__sdfgc_signature_<name>`),
    or None for DaCe's own code."""
    linkable = [o for o in code_objects if getattr(o, "linkable", False)]
    if len(linkable) != 1:
        return None
    obj = linkable[0]
    code = obj.clean_code
    name = obj.name
    if f"{_SIGNATURE}{name}(" not in code and f"{_SIGNATURE}{name} " not in code:
        return None
    if obj.language == "cpp":
        return code.encode(), "cpp"
    return code.encode(), ("hip" if "hip/hip_runtime.h" in code else "cuda")


def remember(program_folder, code_objects):
    """Records what DaCe's `generate_program_folder` writes into
    `program_folder` in this process: sdfgc's code, its target and the
    environments (what DaCe writes to `dace_environments.csv`); or that the
    folder holds DaCe's own code."""
    found = sdfgc_code_object(code_objects)
    envs = set()
    for obj in code_objects:
        envs |= set(getattr(obj, "environments", ()) or ())
    names = [o.name for o in code_objects if getattr(o, "linkable", False)]
    record = (names[0] if names else None, *(found or (None, None)), frozenset(e for e in envs if e))
    with _generated_lock:
        _generated[os.path.abspath(program_folder)] = record


def find_program(program_folder, program_name):
    """(code bytes, target, environments) of sdfgc's translation unit in a
    DaCe program folder, or None for DaCe's own code. What this process
    generated there decides; a folder it did not generate (an earlier
    process's, `regenerate_code=False`) is read under the folder's lock."""
    program_folder = os.path.abspath(program_folder)
    with _generated_lock:
        record = _generated.pop(program_folder, None)
    if record is not None and record[0] == program_name:
        _, code, target, envs = record
        return None if code is None else (code, target, set(envs))
    with folder_lock(program_folder):
        found = sdfgc_source(program_folder, program_name)
        if found is None:
            return None
        source, target = found
        with open(source, "rb") as fh:
            code = fh.read()
        try:
            with open(os.path.join(program_folder, "dace_environments.csv")) as fh:
                envs = {line.strip() for line in fh if line.strip()}
        except OSError:
            envs = set()
    return code, target, envs


def _dace2():
    import dace

    return not dace.__version__.startswith(("0.", "1."))


def configure_and_compile(original, program_folder, program_name=None, output_stream=None, folder_mode=None,
                          found=None, **kwargs):
    """DaCe's `configure_and_compile` (1.x and 2.x signature) for a folder
    holding sdfgc's translation unit (`found`: `find_program`'s answer,
    False for DaCe's own code, None to ask it); `original` (DaCe's, CMake)
    for any other, under the folder's lock."""
    if program_name is None:
        program_name = os.path.basename(program_folder)
    program_folder = os.path.abspath(program_folder)
    if found is None:
        found = find_program(program_folder, program_name)
    if not found:  # None or False: DaCe's own code
        extra = dict(kwargs)
        if folder_mode is not None:
            extra["folder_mode"] = folder_mode
        with folder_lock(program_folder):  # DaCe's CMake configure steps race between processes
            return original(program_folder, program_name, output_stream, **extra)
    code, target, environments = found
    ext = _config("compiler", "library_extension", default="so")
    dace2 = _dace2()
    if dace2 and folder_mode is None:
        folder_mode = _config("compiler", "build_folder_mode", default="development")
    production = dace2 and folder_mode == "production"
    out_folder = program_folder if production else os.path.join(program_folder, "build")
    os.makedirs(out_folder, exist_ok=True)
    if not dace2:  # DaCe 1.x makes the instrumentation reports' folder here
        os.makedirs(os.path.join(program_folder, "perf"), exist_ok=True)
    lib = os.path.join(out_folder, f"lib{program_name}.{ext}")
    # The loader stub first: a library in place (what `compiler.use_cache`
    # looks for) always has its stub next to it.
    t = time.perf_counter()
    cached = cached_stub(_config("compiler", "cpu", "executable", default="") or None)
    with folder_lock(program_folder):
        _copy_atomically(cached, os.path.join(out_folder, f"libdacestub_{program_name}.so"))
    t_stub = time.perf_counter() - t
    build_library(code, target, program_name, lib, environments, folder=program_folder)
    if timings:
        timings[-1]["stub"] = t_stub
    if production:  # what DaCe 2.x's production mode deletes after its build
        with folder_lock(program_folder):
            for to_delete in ["include", "src", "build", "sample", "dace_environments.csv", "dace_files.csv"]:
                p = os.path.join(program_folder, to_delete)
                if os.path.isdir(p):
                    shutil.rmtree(p, ignore_errors=True)
                elif os.path.exists(p):
                    try:
                        os.unlink(p)
                    except FileNotFoundError:
                        pass
    return pathlib.Path(lib) if dace2 else lib
