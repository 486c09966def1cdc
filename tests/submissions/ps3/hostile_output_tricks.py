# expect: full
# base: reference
# Isolation class 2, the trusted side acting for the child. Its output is captured through
# a pipe, so it plants what used to fool a grader that opened an output file as root: a
# symlink and a FIFO under the old file's name, then floods its stdout with 64 MiB.
# tests/test_isolation.py checks the grade comes back quickly with the output capped.

import os
import sys

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


def _plant():
    for target in ("/proc/1/root/etc/shadow", "/etc/shadow", "@ROOT@/solutions/ps3.py"):
        try:
            os.symlink(target, "output.txt")
            break
        except OSError:
            pass
    try:
        os.mkfifo("output.fifo")
    except OSError:
        pass
    chunk = "<" * (1 << 20)
    for _ in range(64):
        sys.stdout.write(chunk)
    sys.stdout.flush()


_plant()
