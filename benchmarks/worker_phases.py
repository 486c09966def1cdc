"""Where a grade-batch worker's CPU goes, step by step, for one submission.

    .venv/bin/python benchmarks/worker_phases.py [--n 150]
    PYTHONPATH=DIR .venv/bin/python benchmarks/worker_phases.py   (another checkout's grader)

Grades the first N+1 of nbgrader_vs_batch.py's ps2 notebooks (its honest class, seed 1) the
way a grade-batch worker does (tasks.grade_task, then tasks.store), in this one process with
one sandbox, and times each step with time.process_time, this process's CPU only (the
sandbox's child runs elsewhere): the first submission is left out (what it loads once). A
step inside another is counted in both (the job's bytes inside the sandbox's protocol,
to_test_result inside judging).
"""
from __future__ import annotations

import argparse
import collections
import functools
import inspect
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from nbgrader_vs_batch import ASSIGNMENT, honest_class  # noqa: E402

from autograder import grade, regrade, results, submission, tasks  # noqa: E402
from autograder.discovery import discover  # noqa: E402
from autograder.report.render import compile_all  # noqa: E402
from autograder.sandbox import Sandbox, handle  # noqa: E402

SPENT: collections.Counter = collections.Counter()
STEPS = [  # (module or class, function, what it is)
    (submission, ("parse", "load"), "the notebook's cells (an older grader: its copy read too)"),
    (grade, "plan", "drawing the inputs"),
    (handle.Sandbox, "run", "the sandbox's protocol (the child's own CPU not counted)"),
    (handle, ("_job", "_encode"), "  the job's bytes"),  # _encode: wire.py's frame, before sandbox/job.py
    (handle, "_outcomes", "  decoding and checking the results"),
    (grade, "_judge_exercise", "judging"),
    (grade, "to_test_result", "  the checks' results"),
    (tasks, "feedback_html", "the feedback page"),
    (results.Results, "to_json", "the results' JSON"),
    (regrade, "record", "the results' record"),
    (tasks, "store", "writing the two files"),
]


def _timed(owner, names, what: str) -> None:
    name = next((n for n in ([names] if isinstance(names, str) else names) if hasattr(owner, n)), None)
    if name is None:  # a checkout without this step
        return
    f = getattr(owner, name)

    @functools.wraps(f)
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            SPENT[what] += time.process_time() - start
    setattr(owner, name, timed)


def grader(out: Path):
    """tasks.grade_task, given a task and a sandbox; an older checkout's also wants a folder to
    copy the bytes to (``out``, as a batch's workers had theirs in it)."""
    if "scratch" in inspect.signature(tasks.grade_task).parameters:
        return lambda task, sandbox: tasks.grade_task(task, sandbox, out)
    return tasks.grade_task


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=150, help="submissions timed")
    args = parser.parse_args(argv)
    for owner, name, what in STEPS:
        _timed(owner, name, what)
    with tempfile.TemporaryDirectory() as tmp:
        honest_class(Path(tmp) / "course", args.n + 1)
        entries = discover(Path(tmp) / "course" / "submitted", ASSIGNMENT)
        out = Path(tmp) / "out"
        (out / "feedback").mkdir(parents=True)
        settings = tasks.RunSettings(ASSIGNMENT, str(out), 10.0, 0, (str(out), tmp))
        compile_all()
        grade_one = grader(out)
        with Sandbox(hide=[tmp]) as sandbox:
            jobs = [tasks.Job(e, "new", None) for e in entries]
            tasks.store(out, grade_one(tasks.task_for(jobs[0], settings), sandbox))
            SPENT.clear()
            start = time.process_time()
            for job in jobs[1:]:
                tasks.store(out, grade_one(tasks.task_for(job, settings), sandbox))
            total = time.process_time() - start
    n = len(jobs) - 1
    print(f"a worker's CPU: {1000 * total / n:.2f} ms a submission ({n} ps2 notebooks, the first left out)")
    for _, _, what in STEPS:
        print(f"  {what:58s} {1000 * SPENT[what] / n:5.2f} ms" if what in SPENT else f"  {what:58s}     -")


if __name__ == "__main__":
    main()
