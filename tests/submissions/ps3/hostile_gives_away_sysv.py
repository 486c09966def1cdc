# expect: full
# base: reference
# Isolation class 5, memory that belongs to no process: SysV shared memory handed away.
# It makes 2.25 GiB of SysV shared memory (2 GiB is the limit for the whole submission),
# fills it, detaches it, gives each segment to another owner (IPC_SET: to root, or to the
# uid after its own, the one the grader sweeps with), and holds it for 1 s. The watch finds
# segments by creator, whoever owns them now, and cleanup removes them that way; or the
# allow-list gives it no SysV IPC at all. tests/test_resources.py checks none is left.

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


def _give_away():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    IPC_PRIVATE, IPC_CREAT, IPC_RMID, IPC_SET, IPC_STAT = 0, 0o1000, 0, 1, 2
    made = []
    for i in range(9):
        shm = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(256 * MIB), IPC_CREAT | 0o666)
        if shm < 0:
            break
        addr = libc.shmat(shm, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            libc.shmctl(shm, IPC_RMID, None)
            break
        ctypes.memset(addr, 1, 256 * MIB)
        libc.shmdt(ctypes.c_void_p(addr))
        made.append(shm)
        ds = ctypes.create_string_buffer(256)  # struct shmid_ds; its ipc_perm's uid is at offset 4
        if libc.shmctl(shm, IPC_STAT, ds) == 0:
            ctypes.c_uint.from_buffer(ds, 4).value = 0 if i % 2 else os.getuid() + 1
            libc.shmctl(shm, IPC_SET, ds)
    time.sleep(HOLD)
    alive = sum(1 for shm in made if libc.shmctl(shm, IPC_STAT, ctypes.create_string_buffer(256)) == 0)
    if alive * 256 > LIMIT:
        breach(f"held {alive * 256} MiB of SysV shared memory given to other owners for {HOLD:g} s")


_give_away()
