"""grades.csv: one row per student, sorted, with each exercise's points; changes.csv: one
row per regraded student.

The file is opened in spreadsheets, so no cell may start a formula: a text cell that
starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``
(OWASP's rule for CSV injection); numbers, negative ones included, stay numbers. Student
names are written readable and on one line: unprintable characters and bytes that are not
UTF-8 escaped (``\\n``, ``\\xe9``), backslashes doubled; see names.py. A student the grader
failed on has a row with empty score cells: not graded is not 0.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

from ..class_results import ScoreChange, StudentRow
from ..names import readable

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\Z")


def grades_csv(rows: Iterable[StudentRow], exercises: Sequence[str], failed: Iterable[str] = ()) -> str:
    """The table: a header (student, score, max_score, then ``exercises`` in their order),
    then one line per student, sorted by name. ``rows``: the graded students, each with its
    points per exercise (0 where it has none); ``failed``: students with no grade because
    the grader failed (their score cells stay empty)."""
    rows = [row if isinstance(row, StudentRow) else StudentRow(**row) for row in rows]  # a dict as rows were
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([neutralise(c) for c in ["student", "score", "max_score", *exercises]])
    lines = [(row.student, [_num(row.score), _num(row.max_score),
                            *(_num(row.exercises.get(e, 0)) for e in exercises)]) for row in rows]
    lines += [(student, [""] * (2 + len(exercises))) for student in failed]
    for student, cells in sorted(lines, key=lambda line: line[0]):
        writer.writerow([neutralise(readable(student)), *cells])
    return buf.getvalue()


def neutralise(cell: str) -> str:
    """A cell a spreadsheet will not run as a formula; a number is left as it is."""
    if cell.startswith(FORMULA_START) and not NUMBER.match(cell):
        return "'" + cell
    return cell


def _num(x: float) -> str:
    return f"{x:g}"


def changes_csv(changes: list[ScoreChange]) -> str:
    """changes.csv: one row per regraded student, sorted: the score before and after, the
    difference, why they were regraded, and each exercise whose points moved."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["student", "old_score", "new_score", "max_score", "change", "why", "exercises"])
    for c in sorted(changes, key=lambda c: c.student):
        moved = "; ".join(f"{name} {old:g} -> {'not graded' if new is None else f'{new:g}'}"
                          for name, (old, new) in c.exercises.items())
        writer.writerow([neutralise(readable(c.student)), f"{c.old_score:g}",
                         "" if c.new_score is None else f"{c.new_score:g}", f"{c.max_score:g}",
                         "" if c.new_score is None else f"{c.new_score - c.old_score:+g}",
                         neutralise(c.why), neutralise(moved)])
    return buf.getvalue()
