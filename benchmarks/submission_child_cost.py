"""What a real submission's child costs: the CPU and page faults of the sandbox's children (the
zygote's reaped children, from /proc) and the zygote's own CPU, a ps2 submission at a time.

    .venv/bin/python benchmarks/submission_child_cost.py [N]
    PYTHONPATH=DIR .venv/bin/python benchmarks/submission_child_cost.py   (another checkout's grader, run from DIR)

Grades the first N+1 of nbgrader_vs_batch.py's ps2 notebooks (its honest class, seed 1) as a
grade-batch worker does, in this one process with one sandbox, and counts from the second on
(the first loads what the process keeps). child_cost.py is the same for a trivial job.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import proc_stat  # noqa: E402
from nbgrader_vs_batch import ASSIGNMENT, honest_class  # noqa: E402

from autograder import tasks  # noqa: E402
from autograder.discovery import discover  # noqa: E402
from autograder.report.render import compile_all  # noqa: E402
from autograder.sandbox import Sandbox  # noqa: E402


def _counts(zygote: int) -> tuple[int, float, float]:
    """(its reaped children's minor faults, their CPU seconds, its own CPU seconds)."""
    f = proc_stat.stat(zygote)
    tick = proc_stat.TICK
    return int(f[8]), (int(f[13]) + int(f[14])) / tick, (int(f[11]) + int(f[12])) / tick


def main(n: int = 150) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        honest_class(Path(tmp) / "course", n + 1)
        entries = discover(Path(tmp) / "course" / "submitted", ASSIGNMENT)
        out = Path(tmp) / "out"
        (out / "feedback").mkdir(parents=True)
        settings = tasks.RunSettings(ASSIGNMENT, str(out), 10.0, 0, (str(out), tmp))
        compile_all()
        with Sandbox(hide=[tmp]) as sandbox:
            jobs = [tasks.Job(e, "new", None) for e in entries]
            tasks.grade_task(tasks.task_for(jobs[0], settings), sandbox)
            time.sleep(0.2)  # its child reaped
            before = _counts(sandbox.proc.pid)
            for job in jobs[1:]:
                tasks.grade_task(tasks.task_for(job, settings), sandbox)
            time.sleep(0.3)
            faults, children, zygote = (b - a for a, b in zip(before, _counts(sandbox.proc.pid), strict=True))
    k = len(jobs) - 1
    print(f"a ps2 submission's child: {1000 * children / k:.2f} ms of CPU, {faults / k:.0f} page faults; "
          f"the zygote {1000 * zygote / k:.2f} ms ({k} submissions, the first left out)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
