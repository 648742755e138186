"""Builds shared by many processes: file locks and atomic publishing.

Any number of processes (MPI ranks, pytest-xdist workers, gt4py's build
pools) may build the same or different programs into one build folder and
one cache (`$SDFGC_CACHE_DIR`). Each cache entry is built by exactly one
process, under an exclusive `flock` on a lock file of its own
(`<folder>/.locks/<key>.lock`); the others wait for the lock and then find
the entry built. An entry is built in a private folder or file of the same
folder (`.<key>-*`, `.<name>.*.tmp`) and renamed into place, so a process
killed halfway leaves nothing a later process takes for a finished build:
its lock is released by the operating system, and the next builder of that
key removes the private folders it left.

Lock files are never deleted (deleting a lock file others wait on would let
two processes hold "the" lock at once). A child forked while a lock is held
(multiprocessing's `fork`) closes its copy of the descriptor at once: a
`flock` lasts while any descriptor of it is open, so the child would
otherwise hold the lock for its whole life.
"""

import os
import shutil
import tempfile
import threading

try:
    import fcntl
except ImportError:  # not POSIX: no locks (builds stay atomic, may be duplicated)
    fcntl = None

LOCKS = ".locks"

# The locks this process holds (closed in a forked child, see above).
_held = set()
_held_lock = threading.Lock()


def _forget_in_child():
    for lock in list(_held):
        if lock.fd is not None:
            try:
                os.close(lock.fd)  # the child's copy only: the parent keeps its lock
            except OSError:
                pass
            lock.fd = None
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


class FileLock:
    """An exclusive `flock` on `path` (created if missing). Released by
    `release()`, or by the operating system when the process ends."""

    def __init__(self, path):
        self.path = path
        self.fd = None

    def acquire(self, blocking=True) -> bool:
        """Takes the lock; waits for it when `blocking`, else returns False
        when another process (or another open of it here) holds it."""
        if self.fd is not None:
            raise RuntimeError(f"{self.path} is already locked by this object")
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        with _held_lock:
            _held.add(self)
        return True

    def release(self):
        if self.fd is not None:
            with _held_lock:
                _held.discard(self)
            fd, self.fd = self.fd, None
            os.close(fd)  # closing the only descriptor releases the flock

    @property
    def held(self) -> bool:
        return self.fd is not None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()


def lock_for(folder, key) -> FileLock:
    """The lock of entry `key` of the cache folder `folder`."""
    return FileLock(os.path.join(folder, LOCKS, f"{key}.lock"))


def folder_lock(folder) -> FileLock:
    """The lock of a whole build folder (DaCe's program folder): held while
    its files are written, so no process reads a half-written one."""
    return FileLock(os.path.join(folder, ".sdfgc.lock"))


def remove_stale(folder, prefix):
    """Removes the private work folders and files `prefix*` of `folder`
    (left by a builder that was killed). Call it holding the entry's lock:
    no live process then works in them."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            path = os.path.join(folder, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def publish_file(src, dst, mode=0o755):
    """Copies `src` to `dst` atomically: a private file next to `dst`, then
    `os.replace`. A reader sees the old file or the whole new one, never a
    part; a process that has the old one loaded keeps it."""
    folder = os.path.dirname(os.path.abspath(dst))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(dst)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
            shutil.copyfileobj(inp, out, 1 << 20)
        os.chmod(tmp, mode)
        os.replace(tmp, dst)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def publish_folder(work, final):
    """Renames the finished private folder `work` to `final`, replacing an
    entry already there (a rebuild): the old entry is renamed aside first,
    so `final` is never a mixture. Call it holding the entry's lock."""
    if os.path.lexists(final):
        aside = tempfile.mkdtemp(prefix=f".{os.path.basename(final)}-old-", dir=os.path.dirname(final))
        os.rename(final, os.path.join(aside, "entry"))
        os.rename(work, final)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.rename(work, final)
