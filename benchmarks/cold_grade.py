"""One cold submission against a bare `python -c "import numpy"`, measured paired.

    .venv/bin/python benchmarks/cold_grade.py [--n 15] [--assignment ps2] [--checkout DIR]

What a student or a TA waits for with `autograder grade`, and what Gradescope's
`run_autograder` costs per container: a new process that starts the sandbox, grades one
filled-in notebook (a right answer from the sample class) and writes its results. Each round
times the bare import and both commands back to back, so a slow spell of the machine falls on
all three; the medians and their ratios are printed. ``--checkout DIR`` times another
checkout's grader with this venv (its packages put first on PYTHONPATH), e.g. main before a
change: `git worktree add /tmp/before <commit>`.
Goal (issue 25): each command at most 2.5 times the bare import.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402

def timed(cmd: list[str], **kw) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - start


def gradescope_root(folder: Path, assignment: str, notebook: str, checkout: Path, env: dict) -> Path:
    """A container's /autograder as setup.sh leaves it (the zip's course in source/) with one upload."""
    zip_path = folder / "autograder.zip"
    subprocess.run([sys.executable, "-m", "autograder", "gradescope", assignment, "--out", str(zip_path)],
                   check=True, cwd=checkout, env=env, capture_output=True)
    root = folder / "root"
    shutil.unpack_archive(zip_path, root / "source")
    (root / "submission").mkdir()
    (root / "submission" / f"{assignment}.ipynb").write_text(notebook, encoding="utf-8")
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"name": "Ada", "email": "ada@example.edu",
                                                                          "id": 1}]}))
    return root


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=15, help="paired rounds")
    parser.add_argument("--assignment", default="ps2")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the repository whose grader is timed")
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(args.checkout.resolve()))
    env.pop("AUTOGRADER_COURSE", None)  # set by importing make_class: the checkout's own course, where it runs
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a student's shell has it: bytecode cached
    right = next(a for a in make_class.ARCHETYPES[args.assignment] if make_class.category(a) == "correct")
    notebook = make_class.archetype_notebook(args.assignment, right)
    with tempfile.TemporaryDirectory(prefix="cold-") as tmp:
        tmp = Path(tmp)
        sub = tmp / "student.ipynb"
        sub.write_text(notebook, encoding="utf-8")
        root = gradescope_root(tmp, args.assignment, notebook, args.checkout, env)
        commands = {
            "python -c 'import numpy'": ([sys.executable, "-c", "import numpy"], {"env": env}),
            "autograder grade": ([sys.executable, "-m", "autograder", "grade", str(sub), "--assignment",
                                  args.assignment, "--results", str(tmp / "results.json")],
                                 {"cwd": args.checkout, "env": env}),
            "gradescope run_autograder": ([sys.executable, "-m", "autograder.gradescope.run", "--root", str(root),
                                           "--assignment", args.assignment], {"cwd": "/", "env": env}),
        }
        for cmd, kw in commands.values():  # warm the page cache and the byte-code caches
            timed(cmd, **kw)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.n):
            for name, (cmd, kw) in commands.items():
                times[name].append(timed(cmd, **kw))
    base = statistics.median(times["python -c 'import numpy'"])
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:28s} median {1000 * m:6.0f} ms (min {1000 * min(ts):.0f}, max {1000 * max(ts):.0f}; "
              f"{args.n} rounds)  {m / base:.2f}x the bare import")


if __name__ == "__main__":
    main()
