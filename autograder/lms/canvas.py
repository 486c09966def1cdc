"""Canvas's gradebook import CSV, written over a roster exported from Canvas (Grades, Export).

What Canvas's importer does with it (app/models/gradebook_importer.rb of instructure/canvas-lms;
tests/canvas_importer.py transcribes it and the tests import every export through it):

- a row is matched to a student by ``ID``, then ``SIS User ID``, then ``SIS Login ID``, then
  by name; a row it cannot match is a new student, and then *no* unchanged column is weeded
  out of the import;
- a column is matched to an assignment by the id in ``Title (id)``, else to an existing
  assignment whose title is the whole header (``backward compat``), else it makes a new one;
- a cell is unchanged only when it equals what Canvas holds, both are blank (or ``-``), or
  both round to the same number at two decimals. **A blank cell over a score is a change**:
  the import posts an empty grade and the score is gone.

So every cell is either the grader's score or, where the grader has none (it failed on the
student, the student is not in grades.csv), exactly what the roster says Canvas holds: a
hand-entered score stays, a blank stays blank. Rows are the roster's students with their
Canvas ids (its order, its identities); a column is ``Title (id)`` with the roster's id, or a
new assignment where the roster has none by that title. Without a roster there is no safe
export: a bare title would silently land on any existing assignment of that name, and a row
without a Canvas ID on whatever student the importer's fallbacks find, so it is refused.
The roster is read in both of Canvas's layouts: ``Student`` (``Last, First``) and
``LastName, FirstName``; the import file is always written with ``Student``, which every
Canvas accepts (the other layout needs an account setting).
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

IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")  # the columns written
LAST_FIRST = ("LastName", "FirstName")  # the roster layout that names a student in two columns
KEYS = ("SIS Login ID", "SIS User ID", "ID")  # how a grades.csv student is matched, in order
_COLUMN = re.compile(r"(?P<name>.*?)\s*\((?P<id>\d+)\)\s*\Z")  # Canvas's Assignment.title_and_id
NO_ROSTER = ("Canvas's export needs --roster (Grades, Export in Canvas): without the gradebook's ids a column "
             "would land on any existing assignment of the same title and a row on whichever student the "
             "importer guesses")


@dataclass(frozen=True)
class RosterStudent:
    identity: dict[str, str]  # IDENTITY's columns, Student as "Last, First"
    held: dict[str, str]  # Canvas assignment id -> the cell Canvas exported (what it holds now)


@dataclass(frozen=True)
class Roster:
    students: list[RosterStudent]
    ids: dict[str, str]  # assignment title -> Canvas id
    points: dict[str, str]  # Canvas id -> its Points Possible cell


@dataclass(frozen=True)
class Replaced:
    student: str
    canvas: str  # what Canvas holds
    graded: str  # what the grader gives


@dataclass
class Export:
    text: str  # the CSV
    not_in_roster: dict[str, list[str]] = field(default_factory=dict)  # assignment -> graded students left out
    kept: dict[str, list[str]] = field(default_factory=dict)  # assignment -> roster students not graded: Canvas's cell
    replaced: dict[str, list[Replaced]] = field(default_factory=dict)  # Canvas's score -> the grader's
    new_columns: list[str] = field(default_factory=list)  # assignments with no Canvas id: Canvas makes them
    points_differ: dict[str, tuple[str, str]] = field(default_factory=dict)  # title -> (Canvas's, grades.csv's)


def read_roster(path: Path) -> Roster:
    """The roster's students (rows with a Canvas ID), its assignments' ids and points."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise GradesError(f"cannot read the roster {path}: {e}") from e
    header = [c.strip() for c in rows[0]] if rows else []
    two_names = header[:2] == list(LAST_FIRST)
    needed = [c for c in (*(LAST_FIRST if two_names else ("Student",)), *IDENTITY[1:]) if c not in header]
    if needed:
        raise GradesError(f"{path} is not a Canvas gradebook export: no {', '.join(needed)} column")
    at = {name: i for i, name in reversed(list(enumerate(header)))}
    columns: dict[str, int] = {}  # Canvas id -> column
    ids: dict[str, str] = {}
    for i, c in enumerate(header):
        if (m := _COLUMN.match(c)) and i > at["Section"]:
            title, canvas_id = m["name"], m["id"]
            if title in ids and ids[title] != canvas_id:
                raise GradesError(f"{path}: two assignments are titled {readable(title)!r} ({ids[title]} and "
                                  f"{canvas_id}); rename one in Canvas so a grade cannot land on the other")
            ids[title], columns[canvas_id] = canvas_id, i

    def cell(row: list[str], i: int) -> str:
        return row[i].strip() if i < len(row) else ""

    students, points = [], {}
    for row in rows[1:]:
        first = cell(row, 0)
        if first.startswith("Points Possible"):
            points = {canvas_id: cell(row, i) for canvas_id, i in columns.items()}
        if not cell(row, at["ID"]):
            continue  # Canvas's rows that are not students: "Points Possible", "Manual Posting"
        identity = {c: cell(row, at[c]) for c in IDENTITY[1:]}
        identity["Student"] = (f"{cell(row, at['LastName'])}, {cell(row, at['FirstName'])}" if two_names
                               else cell(row, at["Student"]))
        students.append(RosterStudent(identity, {canvas_id: cell(row, i) for canvas_id, i in columns.items()}))
    return Roster(students, ids, points)


def export(grades: list[Grades], roster: Roster | None) -> Export:
    if roster is None:
        raise GradesError(NO_ROSTER)
    result = Export("")
    columns, ids = [], []
    for g in grades:
        canvas_id = roster.ids.get(g.assignment)
        if canvas_id is None and _COLUMN.match(g.assignment):
            raise GradesError(f"the assignment name {readable(g.assignment)!r} ends in a number in brackets, which "
                              "Canvas reads as an assignment id; rename it")
        ids.append(canvas_id)
        columns.append(f"{g.assignment} ({canvas_id})" if canvas_id else g.assignment)
        if canvas_id is None:
            result.new_columns.append(g.assignment)
        elif (held := roster.points.get(canvas_id, "")) and not same_number(held, f"{g.max_score:g}"):
            result.points_differ[g.assignment] = (held, f"{g.max_score:g}")
    people = roster.students
    index = _index(people)
    cells = [[p.held.get(canvas_id, "") if canvas_id else "" for canvas_id in ids] for p in people]
    for j, g in enumerate(grades):
        graded, seen = set(), {}
        for student, score in g.scores.items():
            i = index.get(student.casefold())
            if i is None:
                result.not_in_roster.setdefault(g.assignment, []).append(student)
                continue
            if i in seen:
                raise GradesError(f"{g.assignment}: {readable(seen[i])!r} and {readable(student)!r} are both "
                                  f"{readable(people[i].identity['Student'])!r} in the roster; one grade each")
            seen[i] = student
            if score is None:
                continue  # the grader failed on them: Canvas's own cell stays
            graded.add(i)
            new, held = f"{score:g}", cells[i][j]
            if held and not same_number(held, new):
                result.replaced.setdefault(g.assignment, []).append(
                    Replaced(readable(people[i].identity["Student"]), held, new))
            cells[i][j] = new
        for i, p in enumerate(people):
            if i not in graded:
                result.kept.setdefault(g.assignment, []).append(readable(p.identity["Student"]))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*IDENTITY, *columns])
    w.writerow(["Points Possible", "", "", "", "",
                *(roster.points.get(i, "") or f"{g.max_score:g}" if i else f"{g.max_score:g}"
                  for g, i in zip(grades, ids, strict=True))])
    for p, scores in zip(people, cells, strict=True):
        w.writerow([*(neutralise(p.identity[c]) for c in IDENTITY), *scores])
    result.text = buf.getvalue()
    return result


def same_number(a: str, b: str) -> bool:
    """Equal as Canvas's importer compares scores: the same text, or the same at two decimals."""
    if a == b:
        return True
    try:
        return round(float(a), 2) == round(float(b), 2)
    except ValueError:
        return False


def _index(people: list[RosterStudent]) -> dict[str, int]:
    """Each key a student may be known by (casefolded) -> the roster row; the first key wins."""
    index: dict[str, int] = {}
    for key in KEYS:
        for i, p in enumerate(people):
            value = p.identity.get(key, "").casefold()
            if value:
                index.setdefault(value, i)
    return index
