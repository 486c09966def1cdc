"""Where nbgrader meets the grader: the call inside each notebook's hidden test cell.

nbgrader scores a grade cell by the number its last line evaluates to, so ``score``
returns the exercise's points from grading the whole notebook once through the sandbox:
nbgrader's grades are then the engine's grades, and nbgrader's kernel never judges.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=4)
def _graded(path: str, mtime: float, assignment: str):
    from .grade import grade, hidden_paths
    from .sandbox import Sandbox

    with Sandbox(hide=hidden_paths(Path(path).parent)) as sandbox:
        return grade(path, assignment, sandbox=sandbox)


def score(assignment: str, exercise: str, notebook: str | None = None) -> float:
    """Grade ``<assignment>.ipynb`` in the working folder; print and return one exercise's points."""
    path = Path(notebook or f"{assignment}.ipynb").resolve()
    if not path.is_file():
        print(f"cannot grade {exercise}: {path.name} is not in {path.parent}")
        return 0.0
    results = _graded(str(path), path.stat().st_mtime, assignment)
    tests = [t for t in results.tests if t.exercise == exercise]
    for t in tests:
        print(f"{'PASS' if t.status == 'passed' else 'FAIL'}  {t.name}  ({t.score:g}/{t.max_score:g})")
        if t.status != "passed":
            print("\n".join("      " + line for line in t.output.splitlines()))
    return float(sum(t.score for t in tests))
