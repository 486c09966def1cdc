# expect: full
# base: reference
# Isolation class 5, files in memory. It writes 2.25 GiB of files (2 GiB is the limit for
# the whole submission) in /dev/shm and every other folder in memory it finds writable
# (fstatfs says tmpfs): at the top, in folders it makes there, nested and hidden, under
# hard links, each file as large as its file size limit allows, and holds them for 1 s.
# The watch counts the files its uid owns in every folder in memory it can write, and
# cleanup removes them; or Landlock (or the allow-list root) keeps it out of those folders.

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


def _in_memory(path):
    buf = ctypes.create_string_buffer(128)
    return _libc.statfs(path.encode(), buf) == 0 and ctypes.c_long.from_buffer(buf).value == TMPFS_MAGIC


def _places():
    """Folders in memory to write in: the shared ones, and folders of its own made in them."""
    for top in ("/dev/shm", "/run/lock", "/run/shm", "/tmp", "/var/tmp", os.getcwd()):
        if not _in_memory(top):
            continue
        yield top
        nested = os.path.join(top, f".hidden-{os.getpid()}", "deeper", ".deepest")
        try:
            os.makedirs(nested, exist_ok=True)
            yield nested
        except OSError:
            pass


def _hold():
    chunk, held, first = b"\1" * MIB, 0, None
    for folder in _places():
        for i in range(1000):
            if held >= LIMIT + 256:
                break
            path = f"{folder}/.fill-{os.getpid()}-{i}"
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except OSError:
                break
            n = 0
            try:
                while n < 64:
                    os.write(fd, chunk)
                    n += 1
            except OSError:
                pass
            os.close(fd)
            if n == 0:
                break
            held += n
            if first is None:
                first = path
            else:  # a second name for a file is not a second file
                try:
                    os.link(first, path + ".link")
                except OSError:
                    pass
    time.sleep(HOLD)
    if held > LIMIT:
        breach(f"held {held} MiB of files in memory for {HOLD:g} s")


_hold()
