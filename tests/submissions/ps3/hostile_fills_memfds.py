# expect: full
# base: reference
# Isolation class 5, memory in files no folder shows. It fills 2.25 GiB of files in memory
# (2 GiB is the limit for the whole submission) that no folder lists: memfds, and where
# those are refused, O_TMPFILE files and files it removes at once but keeps open, in its own
# folder, its TMPDIR, /tmp and /dev/shm; each as large as its file size limit allows. It
# counts only what lies in memory (fstatfs says tmpfs), and holds it for 1 s. The watch
# counts what its processes hold open, whatever the file's name.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import ctypes
import time

MIB, LIMIT, HOLD = 1 << 20, 2048, 1.0
TMPFS_MAGIC = 0x01021994
_libc = ctypes.CDLL(None, use_errno=True)


def _in_memory(fd):
    buf = ctypes.create_string_buffer(128)  # struct statfs: f_type first
    return _libc.fstatfs(fd, buf) == 0 and ctypes.c_long.from_buffer(buf).value == TMPFS_MAGIC


def _fill(fd):
    """MiB written: until its file size limit (EFBIG) or the filesystem is full."""
    chunk, n = b"\1" * MIB, 0
    try:
        while n < 64:
            os.write(fd, chunk)
            n += 1
    except OSError:
        pass
    return n


def _ways():
    """Each way to a file no folder lists, as a function that makes one (or raises)."""
    yield lambda: os.memfd_create("fill")
    folders = [os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/dev/shm"]
    for folder in folders:
        yield lambda folder=folder: os.open(folder, os.O_TMPFILE | os.O_RDWR, 0o600)
    for folder in folders:
        def removed(folder=folder):
            path = f"{folder}/.fill-{os.getpid()}-{time.monotonic_ns()}"
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.unlink(path)
            return fd
        yield removed


def _hold():
    kept, held = [], 0
    for make in _ways():
        while held < LIMIT + 256:
            try:
                fd = make()
            except (OSError, AttributeError):
                break
            n = _fill(fd) if _in_memory(fd) else 0
            if n == 0:  # on disk, or full: the next way
                os.close(fd)
                break
            kept.append(fd)
            held += n
    time.sleep(HOLD)
    if held > LIMIT:
        breach(f"held {held} MiB in files in memory no folder shows for {HOLD:g} s")


_hold()
