"""Canvas's gradebook import CSV: ``Student, ID, SIS User ID, SIS Login ID, Section``, one
``<assignment> (<Canvas id>)`` column per assignment, and a ``Points Possible`` row.

Canvas matches an imported row to a student by ``ID``, ``SIS User ID`` or ``SIS Login ID``,
and a column to an assignment by the Canvas id in its header; a column without an id makes a
new assignment. So the rows come from a roster exported from Canvas (Grades, Export): its
students, in its order, with its ids, and the ids of the assignments it has by the same name.
A student of grades.csv is matched to the roster by SIS Login ID, then SIS User ID, then
Canvas ID (case-insensitive). Without a roster each student is a row keyed by SIS Login ID.
A blank cell changes nothing in Canvas: a student with no grade gets one.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..names import readable
from ..report.table import neutralise
from .grades import Grades, GradesError

IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
KEYS = ("SIS Login ID", "SIS User ID", "ID")  # how a grades.csv student is matched, in order
_COLUMN = re.compile(r"(?P<name>.*?)\s*\((?P<id>\d+)\)\s*\Z")


@dataclass
class Export:
    text: str  # the CSV
    not_in_roster: dict[str, list[str]] = field(default_factory=dict)  # assignment -> graded students left out
    not_graded: dict[str, list[str]] = field(default_factory=dict)  # assignment -> roster students with no score
    new_columns: list[str] = field(default_factory=list)  # assignments with no Canvas id: Canvas makes them


def read_roster(path: Path) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The roster's students (rows with a Canvas ID) and its assignments' ids by name."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise GradesError(f"cannot read the roster {path}: {e}") from e
    header = list(rows[0]) if rows else []
    missing = [c for c in IDENTITY if c not in header]
    if missing:
        raise GradesError(f"{path} is not a Canvas gradebook export: no {', '.join(missing)} column")
    ids = {m["name"]: m["id"] for c in header if c and (m := _COLUMN.match(c))}
    # Canvas's export has rows that are not students ("Points Possible", "Manual Posting"): no ID
    students = [r for r in rows if (r.get("ID") or "").strip()]
    return students, ids


def export(grades: list[Grades], roster: tuple[list[dict[str, str]], dict[str, str]] | None = None) -> Export:
    result = Export("")
    columns = []
    for g in grades:
        canvas_id = roster[1].get(g.assignment) if roster else None
        columns.append(f"{g.assignment} ({canvas_id})" if canvas_id else g.assignment)
        if not canvas_id:
            result.new_columns.append(g.assignment)
    if roster:
        people = roster[0]
        index = _index(people)
        rows: list[list[str]] = [[p.get(c, "") for c in IDENTITY] for p in people]
        cells: list[list[str]] = [[""] * len(grades) for _ in people]
        for j, g in enumerate(grades):
            matched = set()
            for student, score in g.scores.items():
                i = index.get(student.casefold())
                if i is None:
                    result.not_in_roster.setdefault(g.assignment, []).append(student)
                    continue
                matched.add(i)
                cells[i][j] = "" if score is None else f"{score:g}"
            for i, p in enumerate(people):
                if i not in matched or cells[i][j] == "":
                    result.not_graded.setdefault(g.assignment, []).append(readable(p.get("Student", "")))
    else:
        everyone = sorted({s for g in grades for s in g.scores})
        rows = [[s, "", "", s, ""] for s in everyone]
        cells = [[_cell(g.scores.get(s)) for g in grades] for s in everyone]
        for g in grades:
            lacking = [s for s in everyone if g.scores.get(s) is None]
            if lacking:
                result.not_graded[g.assignment] = lacking
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*IDENTITY, *columns])
    w.writerow(["Points Possible", "", "", "", "", *(f"{g.max_score:g}" for g in grades)])
    for row, scores in zip(rows, cells, strict=True):
        w.writerow([*(neutralise(c) for c in row), *scores])
    result.text = buf.getvalue()
    return result


def _cell(score: float | None) -> str:
    return "" if score is None else f"{score:g}"


def _index(people: list[dict[str, str]]) -> dict[str, int]:
    """Each key a student may be known by (casefolded) -> the roster row; the first key wins."""
    index: dict[str, int] = {}
    for key in KEYS:
        for i, p in enumerate(people):
            value = (p.get(key) or "").strip().casefold()
            if value:
                index.setdefault(value, i)
    return index
