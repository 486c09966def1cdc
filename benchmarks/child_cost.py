"""What the sandbox's declared world costs: a zygote's start (with its View) and a child's
spawn, at the level this runs at (root: full; under ``setpriv --bounding-set -sys_admin
--inh-caps -sys_admin``: uid; not root: none).

Run: .venv/bin/python benchmarks/child_cost.py [N]
     (for the code before the View: the same with PYTHONPATH=<a checkout of that commit>)

A child's cost is measured as a trivial job's round trip (fork, confine, one cell, one call,
the result, the end), the mean over N after a warm-up, and as the CPU and the page faults
of those N children (the zygote's reaped children's, from /proc: nearly all of the faults are
copy-on-write of the zygote's pages); the zygote's start is the time to its first message
(imports, the View, its confinement), the median of 5.
"""
import statistics
import sys
import time

import autograder
import proc_stat  # this folder's
from autograder.sandbox import Sandbox

CELL = "def f():\n    return 1\n"


def main(n: int = 200) -> None:
    starts = []
    for _ in range(5):
        t = time.perf_counter()
        with Sandbox() as sb:
            starts.append(time.perf_counter() - t)
            level, layers = sb.level, sb.layers
            entries = len(sb.view.read) if getattr(sb, "view", None) else None
    with Sandbox() as sb:
        for _ in range(10):
            sb.run([CELL], [("x", [("f", (), {})])], timeout=10)
        before = _reaped(sb.proc.pid)
        t = time.perf_counter()
        for _ in range(n):
            r = sb.run([CELL], [("x", [("f", (), {})])], timeout=10)
        per_child = (time.perf_counter() - t) / n
        faults, user, system = (b - a for a, b in zip(before, _reaped(sb.proc.pid), strict=True))
    assert r.exercises["x"].outcomes[0].value == 1
    print(f"code: {autograder.__file__}")
    print(f"level {level} ({', '.join(layers)}); View entries: {entries if entries is not None else 'none (before)'}")
    print(f"zygote start: {statistics.median(starts) * 1000:.0f} ms (median of 5)")
    print(f"per child: {per_child * 1000:.2f} ms (mean of {n}); its CPU {1000 * user / n:.2f} ms user, "
          f"{1000 * system / n:.2f} ms system; {faults / n:.0f} page faults")


def _reaped(zygote: int) -> tuple[int, float, float]:
    """(minor faults, user and system CPU seconds) of the zygote's children it has reaped."""
    fields = proc_stat.stat(zygote)
    return int(fields[8]), int(fields[13]) / proc_stat.TICK, int(fields[14]) / proc_stat.TICK


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
