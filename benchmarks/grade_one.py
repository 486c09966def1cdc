"""Milliseconds to grade one submission with a warm sandbox: the reference notebooks.

Run: .venv/bin/python benchmarks/grade_one.py [N]
"""
import sys
import time
from pathlib import Path

from autograder.assignments import ASSIGNMENTS
from autograder.grade import grade, hidden_paths
from autograder.sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent


def main(n: int = 10) -> None:
    with Sandbox(hide=hidden_paths(ROOT / "source")) as sandbox:
        for a in ASSIGNMENTS:
            path = ROOT / "source" / a / f"{a}.ipynb"
            grade(path, a, sandbox=sandbox)  # warm-up
            start = time.perf_counter()
            for i in range(n):
                r = grade(path, a, sandbox=sandbox, student=f"student{i}")
            ms = (time.perf_counter() - start) / n * 1000
            print(f"{a}: {r.score:g}/{r.max_score:g}, {ms:.0f} ms per submission (mean of {n})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
