"""grades.csv (report/table.py) read back: what the LMS exports start from."""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from ..report.table import FORMULA_START


class GradesError(ValueError):
    """A grades file that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Grades:
    assignment: str
    scores: dict[str, float | None]  # student (as grades.csv shows the name) -> score; None: not graded
    max_score: float


def read(path: Path, assignment: str) -> Grades:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise GradesError(f"cannot read {path}: {e}") from e
    if not rows or rows[0][:3] != ["student", "score", "max_score"]:
        raise GradesError(f"{path} is not a grades.csv from grade-batch "
                          "(its header must start student,score,max_score)")
    scores: dict[str, float | None] = {}
    maxima = set()
    for n, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) < 3:
            raise GradesError(f"{path}, line {n}: fewer than 3 cells")
        student = unneutralise(row[0])
        if student in scores:
            raise GradesError(f"{path}, line {n}: {student} appears twice")
        scores[student] = _number(row[1], path, n)
        if row[2]:
            maxima.add(_number(row[2], path, n))
    if len(maxima) > 1:
        raise GradesError(f"{path}: max_score differs between students ({', '.join(f'{m:g}' for m in sorted(maxima))})")
    if not maxima:
        raise GradesError(f"{path} has no graded student")
    return Grades(assignment, scores, maxima.pop())


def unneutralise(cell: str) -> str:
    """The name as written before grades.csv guarded it against spreadsheet formulas."""
    return cell[1:] if cell.startswith("'") and cell[1:2] and cell[1] in FORMULA_START else cell


def _number(cell: str, path: Path, line: int) -> float | None:
    if cell == "":
        return None
    try:
        value = float(cell)
    except ValueError:
        raise GradesError(f"{path}, line {line}: {cell[:40]!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise GradesError(f"{path}, line {line}: {cell[:40]!r} is not a score")
    return value
