"""What the grader's bookkeeping costs where no cgroup holds a submission: the watch, per call,
and the zygote's reclaim, per child. Run it at the uid level (under ``setpriv
--bounding-set -sys_admin --inh-caps -sys_admin``), with or without Landlock.

The watch: a child is taken from the zygote and left waiting for its job (an interpreter
with numpy loaded, as every child starts); the watch Sandbox.run would give it is called N
times. It runs every protocol.WATCH_EVERY (50 ms) while the grader waits, so its share of
one core is its mean over 50 ms. The reclaim: what the zygote does after each child at the
uid level, for a uid that left nothing (the walk of every folder it could have written),
N times, in this process.

Run: .venv/bin/python benchmarks/watch_cost.py [N]
     (for the code before usage.py: the same with PYTHONPATH=<a checkout of that commit>;
     there the watch was handle._Watch and the reclaim confine.remove_owned and remove_ipc)
"""
import sys
import time

import autograder
from autograder.sandbox import Sandbox, confine, zygote

IDLE_UID = 1_150_000_000  # no process has it: the reclaim finds nothing, and walks all the same


def watch_of(sb, c, memory):
    try:
        return sb._watch(c, memory)  # usage.py's
    except AttributeError:  # before it: the uid level's watch of processes only
        from autograder.sandbox.handle import _Watch
        return _Watch(c.uid, memory)


def reclaim_of(uid):
    try:
        from autograder.sandbox import usage
    except ImportError:  # before it: the top of five folders, and SysV IPC by owner
        def reclaim():
            for folder in zygote.SHARED_WRITABLE:
                confine.remove_owned(folder, uid)
            confine.remove_ipc(uid)
        return reclaim
    places = usage.Places.find()
    return lambda: zygote.reclaim(uid, places)


def mean(call, n: int) -> float:
    for _ in range(20):
        call()
    t = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t) / n


def main(n: int = 500) -> None:
    with Sandbox() as sb:
        c = sb._spawn()
        try:
            watch = watch_of(sb, c, sb.limits.memory)
            if watch is None:
                raise SystemExit(f"no watch at level {sb.level} ({', '.join(sb.layers)}): a cgroup holds it")
            each = mean(watch, n)
        finally:
            sb._release(c)
        level, layers = sb.level, sb.layers
    reclaim = mean(reclaim_of(IDLE_UID), n)
    print(f"code: {autograder.__file__}")
    print(f"level {level} ({', '.join(layers)}); load average {open('/proc/loadavg').read().split()[0]}")
    print(f"watch: {each * 1e3:.3f} ms a call (mean of {n}), {each / 0.05:.1%} of a core at one call per 50 ms")
    print(f"reclaim: {reclaim * 1e3:.3f} ms a child (mean of {n})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
