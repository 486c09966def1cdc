"""`nbgrader autograde ps1` of the demo class against `grade-batch` on the same notebooks.

    .venv/bin/python benchmarks/nbgrader_demo_class.py [--checkout DIR] [--timeout 3] [--jobs 2]

Makes the class `make demo` grades (examples/make_class.py, 30 students, seed 0: right
answers, unfinished work, every catalogued mistake, a hang, a crash and a broken file),
times `nbgrader autograde ps1` through the course's own preprocessors (the nbgrader_config.py
of the checkout), then `autograder grade-batch --jobs J` on the same submitted/ folder, with
the same time limit per exercise, and prints both and their ratio.

``--checkout`` is the repository whose grader and nbgrader_config.py are timed (default: this
one), so one venv measures two designs, e.g. main before a change and a branch after it:

    .venv/bin/python benchmarks/nbgrader_demo_class.py --checkout /work/main   # before
    .venv/bin/python benchmarks/nbgrader_demo_class.py                         # after
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
from make_class import make_class  # noqa: E402
from nbgrader_vs_batch import run_measured  # noqa: E402

ASSIGNMENT = "ps1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=HERE.parent,
                        help="the repository whose grader and nbgrader_config.py are timed")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per exercise, for both (the demo's)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    # The checkout's autograder package first, for nbgrader's process and grade-batch's alike.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(checkout))
    with tempfile.TemporaryDirectory() as tmp:
        course = Path(tmp) / "course"
        roster = make_class(course, assignments=(ASSIGNMENT,), students=30, seed=0)
        shutil.copytree(checkout / "source", course / "source")
        shutil.copy(checkout / "nbgrader_config.py", course)
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"],
                       cwd=course, env=env, check=True, capture_output=True)
        n = len(list((course / "submitted").glob(f"*/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")))
        # A broken notebook fails its own autograde in nbgrader (a non-zero exit), not the run's timing.
        nb_s, nb_kib = run_measured([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT,
                                     f"--GradeWithEngine.timeout={args.timeout}"], course, env, check=False)
        b_s, b_kib = run_measured([sys.executable, "-m", "autograder.cli", "grade-batch", str(course / "submitted"),
                                   "--assignment", ASSIGNMENT, "--out", str(Path(tmp) / "out"),
                                   "--jobs", str(args.jobs), "--timeout", str(args.timeout)], checkout, env)
        autograded = len(list((course / "autograded").glob(f"*/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")))
        commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        print(f"{checkout} ({commit}), "
              f"{n} {ASSIGNMENT} notebooks of {len(roster)} students, {os.cpu_count()} cores, "
              f"--timeout {args.timeout:g}")
        print(f"nbgrader autograde {ASSIGNMENT}:   {nb_s:7.1f} s  peak {nb_kib // 1024} MiB  "
              f"({autograded} notebooks autograded)")
        print(f"grade-batch --jobs {args.jobs}:      {b_s:7.1f} s  peak {b_kib // 1024} MiB")
        print(f"ratio: nbgrader autograde takes {nb_s / b_s:.1f}x grade-batch's time")


if __name__ == "__main__":
    main()
