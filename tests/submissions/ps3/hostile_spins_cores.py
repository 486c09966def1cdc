# expect: full
# base: reference
# Isolation class 5, CPU per submission. Four processes spin for 3 s; with one core per
# submission (a cgroup's quota, or the grader's watch where there is none) they cannot use
# more than one core together, and a second of it besides (the watch's grace). It measures
# what they got from their own rusage: more than that, and a half second more, is a breach
# (on a busy machine they may get less than two cores without any limit: no breach then).

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
            while time.monotonic() - start < 3.0:
                pass
            os._exit(0)
        pids.append(pid)
    used = 0.0
    for pid in pids:
        _, _, usage = os.wait4(pid, 0)
        used += usage.ru_utime + usage.ru_stime
    elapsed = time.monotonic() - start
    if used > elapsed + 1.5:
        breach(f"{used / elapsed:.1f} cores at once ({used:.1f} s of CPU in {elapsed:.1f} s)")


try:
    _spin()
except OSError:
    pass
