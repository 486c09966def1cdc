# expect: full
# base: reference
# Isolation class 5, CPU per submission. Four processes spin for 1.5 s; with one core per
# submission (a cgroup's quota, or the grader's watch at the uid level) they cannot use more
# than one core together. It measures what they got from their own rusage.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import resource
import time


def _spin():
    start = time.monotonic()
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            while time.monotonic() - start < 1.5:
                pass
            os._exit(0)
        pids.append(pid)
    used = 0.0
    for pid in pids:
        _, _, usage = os.wait4(pid, 0)
        used += usage.ru_utime + usage.ru_stime
    cores = used / (time.monotonic() - start)
    if cores > 1.3:
        breach(f"{cores:.1f} cores at once")


try:
    _spin()
except OSError:
    pass
