# expect: full
# base: reference
# Isolation class 4, cleanup that does not hold. A top-level cell leaves a process behind
# with setsid and a double fork, keeps SysV shared memory, tries to stop every process it
# can signal, and then writes a malformed frame on every pipe it holds, the results pipe
# included. That cell is skipped and the rest grades as usual; tests/test_isolation.py checks
# nothing of it survives, on the machine or in the next student's run.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import ctypes
import signal
import time


def _escape():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                time.sleep(1)
        os._exit(0)
    os.wait()
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_PRIVATE, IPC_CREAT = 0, 0o1000
    libc.shmat.restype = ctypes.c_void_p
    shm = libc.shmget(IPC_PRIVATE, 64 << 20, IPC_CREAT | 0o600)
    if shm >= 0:
        addr = libc.shmat(shm, None, 0)
        if addr not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(addr, 1, 64 << 20)
    for pid in range(2, 4096):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
    for fd in range(3, 1 << 12):  # every descriptor it may hold, wherever the sandbox numbered its pipes
        try:
            os.write(fd, b"Z" + (1 << 62).to_bytes(8, "big") + b"garbage")
        except OSError:
            pass


_escape()
