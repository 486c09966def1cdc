"""Where nbgrader meets the grader: the call inside each notebook's hidden test cell.

nbgrader scores a grade cell by the number its last line evaluates to, so ``score``
returns the exercise's points from grading the whole notebook once through the sandbox:
nbgrader's grades are then the engine's grades, and nbgrader's kernel never judges.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=4)
def _graded(path: str, mtime: float, assignment: str):
    from .grade import grade, hidden_paths
    from .sandbox import Sandbox

    with Sandbox(hide=hidden_paths(Path(path).parent)) as sandbox:
        return grade(path, assignment, sandbox=sandbox, student=student_of(Path(path)))


def student_of(notebook: Path) -> str:
    """The student a notebook belongs to in nbgrader's layout (<dir>/<student>/<assignment>/x.ipynb),
    so nbgrader autograde draws the same inputs as grade-batch for that student."""
    if notebook.parent.parent.parent.name in ("submitted", "autograded"):
        return notebook.parent.parent.name
    return notebook.stem


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


def write_gradebook(url: str, assignment: str, rows: list[dict]) -> int:
    """Record each student's per-exercise points in an nbgrader gradebook (any SQLAlchemy URL),
    as the auto scores of the notebook's graded cells, so formgrader shows them.

    The assignment, its notebook and its graded cells are created, with the engine's points,
    when the gradebook does not have them yet. Returns the number of students written.
    """
    from nbgrader.api import Gradebook, MissingEntry

    from .assignments import exercise_points, exercises

    # nbgrader runs its `alembic` script by name: make this interpreter's scripts findable.
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    notebook = assignment  # this course has one notebook per assignment, named after it
    with Gradebook(url) as gb:
        gb.update_or_create_assignment(assignment)
        try:
            gb.find_notebook(notebook, assignment)
        except MissingEntry:
            gb.add_notebook(notebook, assignment)
        for name in exercises(assignment):
            gb.update_or_create_grade_cell(name, notebook, assignment,
                                           max_score=exercise_points(name), cell_type="code")
        for row in rows:
            gb.update_or_create_student(row["student"])
            try:
                gb.find_submission(assignment, row["student"])
            except MissingEntry:
                gb.add_submission(assignment, row["student"])
            for name in exercises(assignment):
                grade = gb.find_grade(name, notebook, assignment, row["student"])
                grade.auto_score = float(row["exercises"].get(name, 0))
            gb.db.commit()
    return len(rows)


def _scrub_preprocessor():
    from nbgrader.preprocessors import NbGraderPreprocessor

    class ScrubGradedTracebacks(NbGraderPreprocessor):
        """Feedback step: a graded cell's traceback quotes the cell's source, hidden tests
        included, so keep only its last line ("NotImplementedError: ...")."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
                for output in cell.get("outputs", []):
                    if output.get("output_type") == "error":
                        output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
            return cell, resources

    return ScrubGradedTracebacks


def __getattr__(name):
    # nbgrader is imported only when its config asks for the class, never by the grader itself.
    if name == "ScrubGradedTracebacks":
        return _scrub_preprocessor()
    raise AttributeError(name)
