# expect: full
# base: reference
# Isolation class 5, memory that outlives its mapping. It maps 2.25 GiB of shared anonymous
# memory in nine pieces (2 GiB is the limit for the whole submission), fills them, and
# unmaps each but its first page: the pages stay, held by that page's mapping, though no
# process's size shows them, and holds them for 1 s. A cgroup counts them; elsewhere the
# allow-list refuses shared mappings (their size cannot be read from outside).

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


def _hold():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    PROT_RW, MAP_SHARED_ANONYMOUS, size, held = 3, 0x21, 256 * MIB, 0
    for _ in range(9):
        addr = libc.mmap(None, size, PROT_RW, MAP_SHARED_ANONYMOUS, -1, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            break
        ctypes.memset(addr, 1, size)
        libc.munmap(addr + 4096, size - 4096)
        held += size // MIB
    time.sleep(HOLD)
    if held > LIMIT:
        breach(f"held {held} MiB of shared memory unmapped but for a page each, for {HOLD:g} s")


_hold()
