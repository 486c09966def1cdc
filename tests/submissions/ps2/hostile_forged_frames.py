# expect: tag causal_mask crashed
# expect: others full
# base: reference
# A function that speaks the grader's protocol on every pipe it holds: a RESULT frame that
# claims 2^40 bytes, then an EXERCISE frame for an exercise that does not exist, then DONE.
# The grader reads frames with a size limit and checks their order, so causal_mask crashes
# with "sent the grader a malformed message", quickly, and nothing else changes.

import os
import numpy as np


def causal_mask(T):
    _forge()
    return np.triu(np.full((T, T), -np.inf), k=1)


def _forge():
    frames = b"R" + (1 << 40).to_bytes(8, "big") + b"x" * 64 + b"E" + (2).to_bytes(8, "big") + b"99" + b"D" + bytes(8)
    for fd in range(3, 1 << 12):  # every descriptor it may hold, wherever the sandbox numbered its pipes
        try:
            os.write(fd, frames)
        except OSError:
            pass
