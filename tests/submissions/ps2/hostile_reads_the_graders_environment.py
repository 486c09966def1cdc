# expect: full
# base: reference
# Hostile: looks for the grader's environment, in os.environ and in /proc's copies of it (its
# own, its pid namespace's first process, its parent's): the grader's paths (PYTHONPATH, the
# checkout), a secret an instructor exported. A child's environment is child.environment()
# of its own folder and nothing more, made once in the zygote for all its children
# (child.prepare); every other variable it finds spoils its causal mask.

import os

import numpy as np

DECLARED = {"HOME", "TMPDIR", "PATH", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"}


def _found():
    found = set(os.environ) - DECLARED
    for path in ("/proc/self/environ", "/proc/1/environ", f"/proc/{os.getppid()}/environ"):
        try:
            with open(path, "rb") as f:
                found.update(v.split(b"=", 1)[0].decode(errors="replace") for v in f.read().split(b"\0") if v)
        except OSError:
            pass
    if found:
        print("BREACH:", sorted(found))
    return found


def causal_mask(T):
    return np.triu(np.full((T, T), -np.inf), k=1) + len(_found())  # right only while nothing is found
