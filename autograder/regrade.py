"""What a results file vouches for, and what a re-run does with each student.

Each results file records what was graded (``extra_data.graded``): the digest of the
submission's bytes as the grader read them, the grader's version, ``--timeout``, and a key
over those and the scores. A re-run regrades exactly the students for whom any of these
differs or is missing (and, with ``force``, everyone), reads the rest back, and reports the
score changes of the regraded (``ScoreChange``, changes.csv).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .assignments import exercise, exercises
from .class_results import ScoreChange, StudentRow, feedback_path, results_path, summarize
from .discovery import Entry
from .intake import read_graded
from .results import Results, from_json
from .spec import test_name

RUN_FILE = ".run"  # in OUTDIR: the number of the run under way; it moves on when a run completes
# What the grader of an earlier version wrote as a student's 0 when it failed itself: such a
# results file is not a grade, so a re-run grades that student again.
_OLD_GRADER_FAILURE = "the grader failed on this submission"
# Subpackages that read grades or submissions but never decide a grade or a feedback page: a
# change there regrades no one.
NEVER_GRADES = ("integrity", "lms")


@lru_cache(maxsize=None)
def grader_version() -> str:
    """A digest of everything that decides a grade or a feedback page: the grader package's code
    and data, the course's declarations (its checks, words and worked examples), the reference
    solutions and the mistake catalogue, and numpy's version. Any change
    to them makes every results file out of date (a grader fix is a regrade)."""
    import numpy

    from . import course, reference

    package = Path(__file__).resolve().parent
    chosen = course.current()
    files = [*sources(package, "autograder", (".py", ".json"), NEVER_GRADES),
             *sources(chosen.package_dir, chosen.name, (".py", ".json")),
             *sources(reference.solutions_dir(), "solutions", (".py",))]
    digest = hashlib.sha256(f"numpy {numpy.__version__}\0".encode())
    for name, path in sorted(files):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def sources(root: Path, name: str, suffixes: tuple[str, ...], skip: tuple[str, ...] = ()) -> list[tuple[str, Path]]:
    """The files under ``root`` whose names end in one of ``suffixes``, each with its path as
    ``name/...``: no ``__pycache__`` folder is walked (a checkout's holds hundreds of files, the
    grade-batch start waited for their listing), nor a top-level folder in ``skip``."""
    found = []
    for folder, dirs, names in os.walk(root):
        top = folder == str(root)
        dirs[:] = [d for d in dirs if d != "__pycache__" and not (top and d in skip)]
        rel = os.path.relpath(folder, root)
        for file in names:
            path = Path(folder, file)
            if path.suffix in suffixes:
                found.append((f"{name}/{file}" if rel == "." else f"{name}/{rel}/{file}", path))
    return found


def record_key(student: str, assignment: str, submission: str, grader: str, timeout: float,
               results: Results) -> str:
    """What a results file's record vouches for: who, which set, which bytes, which grader and
    settings, and the scores. A record whose key does not match is not trusted."""
    doc = [student, assignment, submission, grader, float(timeout), float(results.score), float(results.max_score),
           [[t.name, float(t.score), float(t.max_score), t.status] for t in results.tests]]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


def record(results: Results, student: str, previous: dict | None, assignment: str, submission: str,
           timeout: float, run: int) -> None:
    """Write into ``results`` the record of what was graded (and the grade it replaces)."""
    graded = {"student": student, "assignment": assignment, "submission": submission,
              "grader": grader_version(), "timeout": float(timeout), "run": run}
    if previous is not None:
        graded["previous"] = previous
    graded["key"] = record_key(student, assignment, submission, graded["grader"], timeout, results)
    results.extra_data["graded"] = graded


def run_number(out: Path) -> int:
    try:
        return max(1, int((Path(out) / RUN_FILE).read_text().strip()))
    except (OSError, ValueError):
        return 1


@dataclass(frozen=True)
class Earlier:
    """A student's results file as a re-run finds it."""
    results: Results | None = None  # a whole grade, else None
    row: StudentRow | None = None  # its summary
    problem: str | None = None  # why a file that is there is not a grade


def earlier(out: Path, student: str, assignment: str) -> Earlier:
    path = results_path(out, student)
    if not path.exists():
        return Earlier()
    try:
        results = from_json(path.read_text(encoding="utf-8"))
        whole = ([t.name for t in results.tests] == [test_name(e, s) for e in exercises(assignment)
                                                     for s in exercise(e).specs]
                 and all(_number(t.score) and _number(t.max_score) for t in results.tests)
                 and results.score == sum(t.score for t in results.tests)
                 and isinstance(results.extra_data, dict))
        row = summarize(student, results) if whole else None
    except Exception:  # noqa: BLE001 - whatever is wrong with the file, it is not a grade
        row = None
    if row is None:
        return Earlier(problem="its results file is not a whole grade of this problem set")
    if _OLD_GRADER_FAILURE in results.output:
        return Earlier(problem="an earlier run recorded the grader's own failure")
    return Earlier(results, row)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x


def why_regrade(found: Earlier, entry: Entry, assignment: str, grader: str, timeout: float,
                force: bool, out: Path) -> str | None:
    """Why this student must be graded (again); None when their results file stands."""
    if found.results is None:
        return found.problem or "new"
    if force:
        return "--force"
    graded = found.results.extra_data.get("graded")
    if not isinstance(graded, dict):
        return "no record of what was graded"
    if graded.get("student") != entry.student or graded.get("assignment") != assignment:
        return "the results file is another student's or problem set's"
    submission = read_graded(entry.path, entry.base)[1]
    if graded.get("submission") != submission:
        return "submission changed"
    if graded.get("grader") != grader:
        return "grader changed"
    if not isinstance(graded.get("timeout"), float) or graded["timeout"] != float(timeout):
        return "--timeout changed"
    if graded.get("key") != record_key(entry.student, assignment, submission, grader, timeout, found.results):
        return "the results file does not match its record"
    if not feedback_path(out, entry.student).is_file():
        return "feedback page missing"
    return None


def previous(found: Earlier, why: str, run: int) -> dict | None:
    """The grade a regrade replaces: the one from before this run (a run killed and resumed
    replaces a student's grade at most once, as far as the changes say)."""
    if found.row is None:
        return None
    kept = carried(found, run)
    if kept is not None:
        return kept
    return {"score": found.row.score, "max_score": found.row.max_score, "exercises": found.row.exercises,
            "why": why}


def carried(found: Earlier, run: int) -> dict | None:
    """The grade replaced earlier in this same run (by a run that was killed), if any."""
    graded = found.results.extra_data.get("graded") if found.results is not None else None
    replaced = graded.get("previous") if isinstance(graded, dict) and graded.get("run") == run else None
    try:
        if (isinstance(replaced, dict) and _number(replaced["score"]) and _number(replaced["max_score"])
                and isinstance(replaced["why"], str)
                and all(isinstance(k, str) and _number(v) for k, v in replaced["exercises"].items())):
            return replaced
    except (KeyError, AttributeError, TypeError):
        pass
    return None


def change(student: str, replaced: dict, row: StudentRow | None, max_score: float) -> ScoreChange:
    """How a regraded student's grade moved, exercise by exercise."""
    names = set(replaced["exercises"]) | set(row.exercises if row else ())
    moved = {}
    for name in sorted(names):
        old = replaced["exercises"].get(name, 0)
        new = row.exercises.get(name, 0) if row else None
        if new != old:
            moved[name] = (old, new)
    return ScoreChange(student, replaced["score"], row.score if row else None, max_score, replaced["why"], moved)
