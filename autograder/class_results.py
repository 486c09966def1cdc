"""A graded class as the reports read it: one row per student, the class in numbers, the
grader's own failures, and where each student's files lie. batch.py makes these; report/
renders them; neither imports the other's workings."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .assignments import exercise_points, exercises
from .names import file_stem
from .results import Results


@dataclass(frozen=True)
class ScoreChange:
    """A regraded student: the grade they had and the one they have now."""
    student: str
    old_score: float
    new_score: float | None  # None: not graded now (the grader failed on the regrade)
    max_score: float
    why: str  # "submission changed", "grader changed", "--timeout changed", "--force", ...
    exercises: dict[str, tuple[float, float | None]]  # the exercises whose points changed: (old, new)


@dataclass(frozen=True)
class Failure:
    """The grader, not the student, failed: reported to the operator, never stored as a grade."""
    student: str
    reason: str  # one line


@dataclass(frozen=True)
class StudentRow:
    """One graded student, as the reports read it: a row of grades.csv, counted in class.html."""
    student: str
    score: float
    max_score: float
    exercises: dict[str, float]  # exercise -> points earned (an exercise not in it scored 0)
    misconceptions: tuple[str, ...] = ()  # the catalogued mistakes its tests were tagged with, sorted

    def __getitem__(self, key: str):
        """``row["score"]``, as rows were read when they were dicts; new code reads attributes."""
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)


@dataclass(frozen=True)
class ExerciseTally:
    """How many students got an exercise's full points, part of them, none."""
    full: int
    partial: int
    zero: int


@dataclass(frozen=True)
class BatchSummary:
    """The class at a glance: what class.html shows and the command prints."""
    assignment: str
    students: int  # graded ones
    mean: float  # their mean score (0 when there are none)
    max_score: float  # the assignment's points
    exercises: dict[str, ExerciseTally]  # in the assignment's order
    mistakes: dict[str, list[str]]  # catalogued mistake -> the students who made it; most common first
    changes: tuple[ScoreChange, ...] = ()  # regraded students since the last complete run, sorted


def results_path(out: Path, student: str) -> Path:
    return Path(out) / f"{file_stem(student)}.json"


def feedback_path(out: Path, student: str) -> Path:
    return Path(out) / "feedback" / f"{file_stem(student)}.html"


def summarize(student: str, results: Results) -> StudentRow:
    return StudentRow(student, results.score, results.max_score, results.exercise_scores(),
                      tuple(sorted({t.misconception for t in results.tests if t.misconception})))


def summarize_class(assignment: str, rows: list[StudentRow]) -> BatchSummary:
    """The class in numbers; ``rows`` in the order their students are listed (sorted)."""
    names = exercises(assignment)
    points = {e: exercise_points(e) for e in names}
    tallies = {}
    for e in names:
        got = [r.exercises.get(e, 0) for r in rows]
        tallies[e] = ExerciseTally(sum(g == points[e] for g in got), sum(0 < g < points[e] for g in got),
                                   sum(g == 0 for g in got))
    mistakes: dict[str, list[str]] = {}
    for row in rows:
        for m in row.misconceptions:
            mistakes.setdefault(m, []).append(row.student)
    mistakes = dict(sorted(mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    mean = sum(r.score for r in rows) / len(rows) if rows else 0.0
    return BatchSummary(assignment, len(rows), mean, sum(points.values()), tallies, mistakes)
