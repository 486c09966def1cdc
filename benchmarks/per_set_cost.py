"""Milliseconds per submission of each problem set, as an instructor meets them: the wall
time of `autograder grade-batch --jobs 2` (start-up included) over right and mistaken
submissions, divided by their number.

The class is the sample class's archetypes (examples/make_class.py) that are right (every
style) or one catalogued mistake, repeated to N submissions per set; hangs, crashes and
broken files are left out, since they cost their time limit rather than the grader's.

Run: .venv/bin/python benchmarks/per_set_cost.py [--n 60] [--jobs 2] [--reps 3] [--checkout DIR ...]
Goals: ps1 at most twice ps2 (issue 9); every set under 30 ms per submission (issue 25).
``--checkout DIR ...`` times each of those repositories' grader instead (its packages first on
PYTHONPATH, run from its folder, with this venv), the rounds interleaved across them so that a
slow spell of the machine falls on every one: main before a change beside it, say
(`git worktree add /tmp/before <commit>`).
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402

from autograder.assignments import ASSIGNMENTS  # noqa: E402

AUTOGRADER = Path(sys.executable).parent / "autograder"


def build_class(folder: Path, assignment: str, n: int) -> None:
    kinds = [a for a in make_class.ARCHETYPES[assignment] if make_class.category(a) in ("correct", "misconception")]
    texts = {a: make_class.archetype_notebook(assignment, a) for a in kinds}
    for i, archetype in zip(range(n), itertools.cycle(kinds)):
        (folder / f"student{i:04d}.ipynb").write_text(texts[archetype], encoding="utf-8")


def cost(assignment: str, n: int, jobs: int, checkout: Path | None = None) -> float:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an instructor's shell has it: bytecode cached
    if checkout is not None:  # its grader, and its course (the folder it runs in), not the one building the class chose
        env["PYTHONPATH"] = str(checkout)
        env.pop("AUTOGRADER_COURSE", None)
    with tempfile.TemporaryDirectory(prefix=f"cost-{assignment}-") as tmp:
        folder, out = Path(tmp) / "class", Path(tmp) / "out"
        folder.mkdir()
        build_class(folder, assignment, n)
        start = time.perf_counter()
        subprocess.run([str(AUTOGRADER), "grade-batch", str(folder), "--assignment", assignment,
                        "--out", str(out), "--jobs", str(jobs)], check=True, capture_output=True, env=env,
                       cwd=checkout)
        return (time.perf_counter() - start) / n * 1000


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60, help="submissions per set")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3, help="runs per set, interleaved; the median is reported")
    parser.add_argument("--checkout", type=Path, nargs="+", default=[None], metavar="DIR",
                        help="the repositories whose grader is timed (default: this one, as installed)")
    args = parser.parse_args(argv)
    checkouts = [c.resolve() if c is not None else None for c in args.checkout]
    runs: dict[tuple, list[float]] = {(c, a): [] for c in checkouts for a in ASSIGNMENTS}
    for _ in range(args.reps):  # interleaved, so a slow spell of the machine does not fall on one set
        for a in ASSIGNMENTS:
            for c in checkouts:
                runs[c, a].append(cost(a, args.n, args.jobs, c))
    for c in checkouts:
        ms = {a: statistics.median(runs[c, a]) for a in ASSIGNMENTS}
        head = f"{c}: " if c is not None else ""
        for a, v in ms.items():
            print(f"{head}{a}: {v:.1f} ms per submission (median of {args.reps}; min {min(runs[c, a]):.1f}, max "
                  f"{max(runs[c, a]):.1f}; {args.n} submissions, --jobs {args.jobs}, start-up included)")
        if "ps1" in ms and "ps2" in ms:
            print(f"{head}ps1 / ps2: {ms['ps1'] / ms['ps2']:.2f}")


if __name__ == "__main__":
    main()
