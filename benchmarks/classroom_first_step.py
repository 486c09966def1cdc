"""Seconds of the GitHub Classroom starter's first step, here: its setup-command (a fresh
virtual environment; the grader installed from this checkout's wheel, as `--package`) and its
command (one visible check of a filled-in notebook graded), run as the command grader runs
them (sh, an environment of PATH and HOME), then the second step's command (the environment
already made). Each of N runs starts from an empty $HOME; the machine's pip configuration is
used as the runner's would be.

Run: .venv/bin/python benchmarks/classroom_first_step.py [N] [--checkout DIR]

``--checkout DIR``: the workflow written by that checkout's `autograder classroom` (another
branch's, to compare); the wheel is always this checkout's.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402

ASSIGNMENT = "ps2"
GRADER = "classroom-resources/autograding-command-grader@v1"
ENV_EXTRA = {"FORCE_COLOR": "true", "DOTNET_CLI_HOME": "/tmp", "DOTNET_NOLOGO": "true"}


def starter(checkout: Path, wheel: Path, out: Path) -> list[dict]:
    """The grader steps of the workflow ``checkout`` writes for ``wheel``."""
    subprocess.run([sys.executable, "-m", "autograder", "classroom", ASSIGNMENT, "--out", str(out),
                    "--package", str(wheel)], cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)},
                   check=True, capture_output=True)
    (out / f"{ASSIGNMENT}.ipynb").write_text(make_class.archetype_notebook(ASSIGNMENT, "correct"), encoding="utf-8")
    doc = yaml.safe_load((out / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))
    return [s for s in doc["jobs"]["run-autograding-tests"]["steps"] if s.get("uses") == GRADER]


def timed(command: str, cwd: Path, home: Path) -> tuple[float, float]:
    """Wall and CPU (user + system, of every process it started) seconds of ``command``."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), **ENV_EXTRA}
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {command}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def size_mb(folder: Path) -> float:
    return sum(p.lstat().st_size for p in folder.rglob("*")) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=3)
    parser.add_argument("--checkout", type=Path, default=ROOT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="classroom-bench-") as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "wheel"), str(ROOT)],
                       check=True, capture_output=True)
        (wheel,) = (tmp / "wheel").glob("*.whl")
        steps = starter(args.checkout.resolve(), wheel, tmp / "repo")
        print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
        parts: dict[str, list[tuple[float, float]]] = {"install": [], "first check": [], "first step": [],
                                                        "second step": []}
        for i in range(args.n):
            home = tmp / f"home{i}"
            home.mkdir()
            first, second = steps[0]["with"], steps[1]["with"]
            install, check = (timed(first[k], tmp / "repo", home) for k in ("setup-command", "command"))
            again = [timed(second[k], tmp / "repo", home) for k in ("setup-command", "command")]
            for name, (wall, cpu) in (("install", install), ("first check", check),
                                      ("first step", (install[0] + check[0], install[1] + check[1])),
                                      ("second step", (again[0][0] + again[1][0], again[0][1] + again[1][1]))):
                parts[name].append((wall, cpu))
            print(f"run {i + 1}: " + ", ".join(f"{name} {runs[-1][0]:.1f} s ({runs[-1][1]:.1f} s CPU)"
                                               for name, runs in parts.items())
                  + f"; environment {size_mb(home / 'autograder-venv'):.0f} MB")
        for name, runs in parts.items():
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            print(f"{name}: wall min {min(walls):.1f} s, median {statistics.median(walls):.1f} s; "
                  f"CPU min {min(cpus):.1f} s")
        print(f"(of {args.n} runs; load average at end: {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
