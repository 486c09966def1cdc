"""grade-batch alone on nbgrader_vs_batch.py's notebooks, for one or more checkouts in turn.

    .venv/bin/python benchmarks/batch_checkouts.py [--n 200] [--rounds 3] CHECKOUT [CHECKOUT ...]

The same filled-in ps2 notebooks as `nbgrader_vs_batch.py --n N` (its honest class, seed 1),
graded with `grade-batch --jobs 2` by each checkout's grader (its packages first on
PYTHONPATH, run from its folder, with this venv), the rounds interleaved so that a slow spell
of the machine falls on every checkout; the median and each round are printed. With stock
nbgrader's time from `nbgrader_vs_batch.py --n N --stock` (which does not depend on the
checkout), this gives each commit's ratio without grading with nbgrader again; e.g. main before
a change: `git worktree add /tmp/before <commit>`.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from nbgrader_vs_batch import ASSIGNMENT, honest_class  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="repositories whose grader is timed")
    parser.add_argument("--n", type=int, default=200, help="submissions")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    # Bytecode cached; and not AUTOGRADER_COURSE, which importing make_class set to this checkout's
    # course: each checkout grades with its own, the folder it runs in.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "AUTOGRADER_COURSE")}
    with tempfile.TemporaryDirectory() as tmp:
        course = Path(tmp) / "course"
        honest_class(course, args.n)
        times: dict[Path, list[float]] = {c.resolve(): [] for c in args.checkouts}
        for r in range(args.rounds):
            for i, checkout in enumerate(times):
                out = Path(tmp) / f"out-{r}-{i}"
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "autograder.cli", "grade-batch", str(course / "submitted"),
                                "--assignment", ASSIGNMENT, "--out", str(out), "--jobs", "2"], cwd=checkout,
                               env=dict(env, PYTHONPATH=str(checkout)), check=True, capture_output=True)
                times[checkout].append(time.perf_counter() - start)
    for checkout, seconds in times.items():
        print(f"{checkout}: grade-batch --jobs 2 of {args.n} {ASSIGNMENT} notebooks {statistics.median(seconds):.2f} s "
              f"(median of {args.rounds}: {', '.join(f'{s:.2f}' for s in seconds)})")


if __name__ == "__main__":
    main()
