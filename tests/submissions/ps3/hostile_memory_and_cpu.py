# expect: full
# base: reference
# Isolation class 5, limits per process instead of per submission. Four processes each
# try to hold 1 GiB at once (2 GiB is the limit for the whole submission), and the limits it
# can read must bound its CPU time. All of it in a top-level cell, so the run goes on when
# the kernel ends it.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import resource
import time


def _grab():
    if resource.getrlimit(resource.RLIMIT_CPU)[0] == resource.RLIM_INFINITY:
        breach("no CPU limit")
    r, w = os.pipe()
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                block = bytearray(1 << 30)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                os.write(w, b"+")
                time.sleep(2)
            finally:
                os._exit(0)
        pids.append(pid)
    os.close(w)
    for pid in pids:
        os.waitpid(pid, 0)
    held = 0
    while os.read(r, 1):
        held += 1
    if held >= 3:
        breach(f"{held} GiB held at once")


try:
    _grab()
except OSError:
    pass  # the process limit, or memory: held
