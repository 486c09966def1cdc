# expect: zero causal_mask
# expect: tag causal_mask crashed
# expect: says causal_mask segmentation fault
# expect: others full
# base: reference
# Hostile: causal_mask crashes the Python process itself (a read at address 0 through
# ctypes). The grader must say it was a crash of Python, not an exit or a memory kill, and
# grade every other exercise in a fresh process.

import ctypes


def causal_mask(T):
    ctypes.string_at(0)
