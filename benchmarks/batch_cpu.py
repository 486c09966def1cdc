"""Where a batch's CPU goes: the batch's own process, its workers, the zygotes and the children
they fork, in milliseconds of CPU a submission.

    .venv/bin/python benchmarks/batch_cpu.py [--assignment ps2] [--n 200] [--honest]

Runs `autograder grade-batch --jobs 2` on the per-set benchmark's class (examples/make_class.py:
right and catalogued-mistake archetypes, benchmarks/per_set_cost.py), or with ``--honest`` on
nbgrader_vs_batch.py's class of ps2 notebooks (what the comparison with nbgrader grades), and reads every process of
it from /proc every 10 ms: its user and system time, and for a zygote also its reaped
children's, each as last seen before the process ended (a process that ends between two looks
loses its last 10 ms; a zygote that is never seen is missing from the table). Bytecode cached,
as an instructor's shell has it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import proc_stat  # noqa: E402
from nbgrader_vs_batch import honest_class  # noqa: E402
from per_set_cost import AUTOGRADER, build_class  # noqa: E402



def _times(pid: int) -> tuple[int, float, float] | None:
    """(parent, own CPU seconds, reaped children's CPU seconds) from /proc/PID/stat."""
    fields = proc_stat.stat(pid)
    if fields is None:
        return None
    tick = proc_stat.TICK
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="ps2")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--honest", action="store_true", help="nbgrader_vs_batch.py's ps2 class instead")
    args = parser.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        if args.honest:
            honest_class(Path(tmp) / "course", args.n)
            folder, args.assignment = Path(tmp) / "course" / "submitted", "ps2"
        else:
            folder = Path(tmp) / "class"
            folder.mkdir()
            build_class(folder, args.assignment, args.n)
        start = time.perf_counter()
        batch = subprocess.Popen([str(AUTOGRADER), "grade-batch", str(folder), "--assignment", args.assignment,
                                  "--out", str(Path(tmp) / "out"), "--jobs", "2"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        role: dict[int, str] = {batch.pid: "the batch's process"}
        last: dict[int, tuple[float, float]] = {}
        while batch.poll() is None:
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or (seen := _times(int(entry))) is None:
                    continue
                pid, (parent, own, reaped) = int(entry), seen
                # Looked at until it is a zygote: one seen between its fork and its exec still
                # has the batch's command line.
                if role.get(pid, "workers") == "workers" and parent == batch.pid:
                    try:
                        zygote = b"autograder.sandbox.zygote" in Path(f"/proc/{pid}/cmdline").read_bytes()
                    except OSError:
                        continue
                    role[pid] = "zygotes" if zygote else "workers"
                if pid in role:
                    last[pid] = (own, reaped)
            time.sleep(0.01)
        wall = time.perf_counter() - start
    totals: dict[str, float] = {}
    for pid, name in role.items():
        own, reaped = last.get(pid, (0.0, 0.0))
        totals[name] = totals.get(name, 0.0) + own
        if name == "zygotes":
            totals["their children"] = totals.get("their children", 0.0) + reaped
    print(f"{args.assignment}, {args.n} submissions: {wall:.2f} s wall, {sum(totals.values()):.2f} s CPU "
          f"({sum(totals.values()) / wall:.2f} cores busy)")
    for name, seconds in totals.items():
        print(f"  {name:22s} {seconds:6.2f} s  {1000 * seconds / args.n:5.1f} ms a submission")


if __name__ == "__main__":
    main()
