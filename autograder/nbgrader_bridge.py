"""Where nbgrader meets the grader: the autograde steps that record the engine's points.

nbgrader's own rule scores a grade cell by what the cell produced in the student's kernel
(an error: 0; a number as its last value: that many points; anything else: full points).
Everything in that kernel is the student's: one extra cell can rebind a name, patch a
module, fake ``sys.modules``, print a number, or rewrite the notebook file, so no point that
the kernel computes can be trusted. This course's ``Autograde`` therefore runs two
preprocessors of its own around nbgrader's (see ``nbgrader_config.py``):

- ``GradeWithEngine``, before ``Execute``: grades the notebook exactly as nbgrader sanitized
  it (in memory, before any of its code has run) through the sandboxed engine, in the
  nbgrader process, with the student's own inputs (the same as ``grade-batch``);
- ``RecordEngineGrades``, just before ``SaveAutoGrades``: replaces every grade cell's
  outputs with the engine's feedback and points, so ``SaveAutoGrades`` records the engine's
  number whatever the kernel printed, returned or raised.

The graded cells themselves hold only the visible self-checks: nothing there computes
points. When the engine cannot grade a notebook, the submission's autograde fails loudly
and its recorded points are withdrawn; nothing is recorded as if graded.
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

# Where GradeWithEngine leaves the engine's verdict for RecordEngineGrades: nbgrader's
# resources dict lives in the nbgrader process, out of the kernel's reach.
RESOURCE_KEY = "autograder_engine"


def student_of(notebook: Path) -> str:
    """The student a notebook belongs to in nbgrader's layout (<dir>/<student>/<assignment>/x.ipynb),
    so nbgrader autograde draws the same inputs as grade-batch for that student."""
    if notebook.parent.parent.parent.name in ("submitted", "autograded"):
        return notebook.parent.parent.name
    return notebook.stem


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


# ---------------------------------------------------------------- autograde: the engine's points

_sandboxes: dict = {}  # one zygote per hidden-paths set, for the whole nbgrader run
_snapshots: Path | None = None  # where the notebook as sanitized is written for the engine


def _close_sandboxes() -> None:
    for sandbox in _sandboxes.values():
        sandbox.close()
    _sandboxes.clear()
    if _snapshots is not None:
        shutil.rmtree(_snapshots, ignore_errors=True)


def _sandbox(hide: tuple[str, ...]):
    """A sandbox kept for the whole nbgrader run: autograde grades its notebooks one after
    another in one process, so the zygote starts once, not once per notebook."""
    from .sandbox import Sandbox

    if hide not in _sandboxes:
        if not _sandboxes:
            atexit.register(_close_sandboxes)
        _sandboxes[hide] = Sandbox(hide=list(hide))
    return _sandboxes[hide]


def _snapshot_dir() -> Path:
    global _snapshots
    if _snapshots is None:
        _snapshots = Path(tempfile.mkdtemp(prefix="autograder-nbgrader-"))
    return _snapshots


def engine_grade(nb, assignment: str, student: str, notebook: str, course_root: str, timeout: float):
    """Grade the in-memory notebook ``nb`` through the sandbox: the engine's Results.

    The engine reads a snapshot written here, not the file on disk, so nothing the
    notebook's code does later (in nbgrader's kernel) can change what was graded.
    """
    import nbformat

    from .grade import grade, hidden_paths

    folder = _snapshot_dir() / "current"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{notebook}.ipynb"
    try:
        path.write_text(nbformat.writes(nb), encoding="utf-8")
        hide = tuple(sorted(hidden_paths(course_root, _snapshot_dir())))
        return grade(path, assignment, sandbox=_sandbox(hide), student=student, timeout=timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def cell_feedback(exercise: str, tests) -> str:
    """What a graded cell shows after autograde: the engine's checks of one exercise."""
    from .selfcheck import check_line

    got, worth = sum(t.score for t in tests), sum(t.max_score for t in tests)
    lines = [f"The grader's checks of {exercise}: {got:g}/{worth:g} points"]
    lines += [check_line(t.status == "passed", t.name, t.output, f"{t.score:g}/{t.max_score:g}") for t in tests]
    return "\n".join(lines) + "\n"


def withdraw_points(resources) -> None:
    """A notebook the engine could not grade keeps no points from an earlier autograde:
    its grade cells go back to "no auto score, needs a grader" in the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    info = resources["nbgrader"]
    with Gradebook(info["db_url"]) as gb:
        try:
            graded = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
        except MissingEntry:
            return
        for g in graded.grades:
            g.auto_score = None
            g.needs_manual_grade = True
        gb.db.commit()


@lru_cache(maxsize=None)  # one class each, so nbgrader_config.py can configure them by name
def _preprocessors() -> dict[str, type]:
    from nbgrader import utils
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import NbGraderPreprocessor
    from nbformat.v4 import new_output
    from traitlets import Float

    from .assignments import ASSIGNMENTS
    from .errors import GraderError
    from .grade import DEFAULT_TIMEOUT

    class GradeWithEngine(NbGraderPreprocessor):
        """Autograde, before Execute: grade the sanitized notebook through the sandboxed engine
        and keep the verdict in nbgrader's resources for RecordEngineGrades.

        Runs before the student's kernel starts, on the notebook in memory: the kernel can
        neither change what is graded nor reach the verdict. A grader failure fails this
        submission's autograde (nbgrader logs it, removes the autograded copy, and exits
        non-zero) and withdraws the submission's earlier auto scores."""

        timeout = Float(DEFAULT_TIMEOUT,
                        help="Wall-clock limit for each exercise's calls, as grade-batch's --timeout.").tag(config=True)

        def preprocess(self, nb, resources):
            info = resources["nbgrader"]
            assignment, student = info["assignment"], info["student"]
            try:
                if assignment not in ASSIGNMENTS:
                    raise GraderError(f"the grader has no assignment {assignment!r}")
                root = CourseDirectory(config=self.config).root
                results = engine_grade(nb, assignment, student, info["notebook"], root, self.timeout)
                by_exercise = {name: [t for t in results.tests if t.exercise == name]
                               for name in ASSIGNMENTS[assignment]}
            except Exception as e:
                withdraw_points(resources)
                raise GraderError(f"the grader could not grade {assignment} of {student!r} "
                                  f"({type(e).__name__}: {e}); no points were recorded for it") from e
            resources[RESOURCE_KEY] = {
                "points": {name: float(sum(t.score for t in tests)) for name, tests in by_exercise.items()},
                "max": {name: float(sum(t.max_score for t in tests)) for name, tests in by_exercise.items()},
                "feedback": {name: cell_feedback(name, tests) for name, tests in by_exercise.items()},
                # The notebook's problems ("cell 3 raised ..."), not what it printed: the
                # notebook's own cells show their output in the feedback already.
                "problems": results.output.split("Your code printed (last lines):")[0].strip(),
            }
            self.log.info("The grader gives %s %g/%g on %s", student, results.score, results.max_score, assignment)
            return nb, resources

    class RecordEngineGrades(NbGraderPreprocessor):
        """Autograde, just before SaveAutoGrades: each grade cell's outputs become the engine's
        feedback and, as the cell's value, the engine's points, which SaveAutoGrades reads
        (nbgrader.utils.determine_grade). Whatever the kernel left there is dropped."""

        def preprocess(self, nb, resources):
            try:
                verdict = resources.get(RESOURCE_KEY)
                if verdict is None:
                    raise GraderError("RecordEngineGrades found no verdict: GradeWithEngine must come "
                                      "before Execute in Autograde.autograde_preprocessors")
                seen = set()
                for cell in nb.cells:
                    if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
                        continue
                    name = cell.metadata.nbgrader["grade_id"]
                    if name not in verdict["points"]:
                        raise GraderError(f"grade cell {name!r} is not an exercise of this assignment")
                    if float(cell.metadata.nbgrader["points"]) != verdict["max"][name]:
                        raise GraderError(f"grade cell {name!r} is worth {cell.metadata.nbgrader['points']} "
                                          f"points, the grader's checks {verdict['max'][name]:g}: "
                                          "regenerate the notebooks")
                    text = verdict["feedback"][name]
                    if not seen and verdict["problems"].strip():
                        text += "\nAbout the notebook as a whole:\n" + verdict["problems"] + "\n"
                    cell.outputs = [
                        new_output("stream", name="stdout", text=text),
                        new_output("execute_result", data={"text/plain": repr(verdict["points"][name])},
                                   execution_count=cell.get("execution_count")),
                    ]
                    # What SaveAutoGrades will read back: must be the engine's number, exactly.
                    if utils.determine_grade(cell, self.log)[0] != verdict["points"][name]:
                        raise GraderError(f"nbgrader would not record the grader's points for {name!r}")
                    seen.add(name)
                if seen != set(verdict["points"]):
                    raise GraderError(f"no grade cell for {sorted(set(verdict['points']) - seen)}")
            except Exception:
                withdraw_points(resources)
                raise
            return nb, resources

    class ScrubGradedTracebacks(NbGraderPreprocessor):
        """Feedback step: a traceback in a graded cell would quote the cell's source, so keep
        only its last line ("NotImplementedError: ..."). Graded cells carry the engine's
        output after autograde; this guards notebooks autograded any other way."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
                for output in cell.get("outputs", []):
                    if output.get("output_type") == "error":
                        output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
            return cell, resources

    return {c.__name__: c for c in (GradeWithEngine, RecordEngineGrades, ScrubGradedTracebacks)}


def __getattr__(name):
    # nbgrader is imported only when its config asks for these classes, never by the grader itself.
    if name in ("GradeWithEngine", "RecordEngineGrades", "ScrubGradedTracebacks"):
        return _preprocessors()[name]
    raise AttributeError(name)
