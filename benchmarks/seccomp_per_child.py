"""What the seccomp allow-list costs: building it once (in the zygote) and applying the
exported program in each child (one prctl), against a child that applies nothing.

    .venv/bin/python benchmarks/seccomp_per_child.py [CHILDREN]

Each child is forked from a process that has numpy imported (as the zygote has), applies
the filter or not, and exits; the figure is the mean wall time per child, fork to reaped.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy  # noqa: F401 - the zygote's size, which is what fork copies

from autograder.sandbox import syscalls


def per_child(apply: bool, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            if apply:
                syscalls.apply()
            os._exit(0)
        os.waitpid(pid, 0)
    return (time.perf_counter() - start) / n


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    t = time.perf_counter()
    syscalls.program()
    built = time.perf_counter() - t
    _, prog = syscalls.program()
    print(f"build and export once: {built * 1e3:.2f} ms ({prog.len} BPF instructions)")
    for _ in range(2):  # alternate, so that the machine's load falls on both alike
        bare, filtered = per_child(False, n), per_child(True, n)
        print(f"per child, {n} children: without the filter {bare * 1e6:.0f} us, with it {filtered * 1e6:.0f} us, "
              f"difference {(filtered - bare) * 1e6:+.0f} us")


if __name__ == "__main__":
    main()
