# expect: full
# base: reference
# Isolation class 5, memory that only a mapping holds. It fills files in memory (in
# /dev/shm, its own folder, TMPDIR, /tmp: wherever fstatfs says tmpfs) to its file size
# limit, maps one page of each privately, then closes and removes them: 2.25 GiB that no
# folder lists, no descriptor holds and no process's size shows (the pages it never
# touched are not resident in it). The watch charges a removed file in memory that only a
# mapping keeps at the most one file can hold, since its size cannot be read.

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
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]


def _in_memory(fd):
    buf = ctypes.create_string_buffer(128)
    return _libc.fstatfs(fd, buf) == 0 and ctypes.c_long.from_buffer(buf).value == TMPFS_MAGIC


def _hold():
    PROT_READ, MAP_PRIVATE = 1, 2
    chunk, held = b"\1" * MIB, 0
    for folder in ("/dev/shm", os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp"):
        for i in range(1000):
            if held >= LIMIT + 256:
                break
            path = f"{folder}/.mapped-{os.getpid()}-{i}"
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            except OSError:
                break
            os.unlink(path)
            if not _in_memory(fd):
                os.close(fd)
                break
            n = 0
            try:
                while n < 64:
                    os.write(fd, chunk)
                    n += 1
            except OSError:
                pass
            addr = _libc.mmap(None, 4096, PROT_READ, MAP_PRIVATE, fd, 0)
            os.close(fd)
            if addr in (None, ctypes.c_void_p(-1).value):
                break
            held += n
    time.sleep(HOLD)
    if held > LIMIT:
        breach(f"held {held} MiB of removed files in memory by a page of mapping each, for {HOLD:g} s")


_hold()
