"""Canvas's gradebook import, transcribed: what it would change in a course, given a CSV.

Transcribed (not copied) from instructure/canvas-lms ``app/models/gradebook_importer.rb``
(the version whose ``GradebookImporter`` starts with ``ASSIGNMENT_PRELOADED_FIELDS``), the
parts that decide what an import changes:

- ``row_has_student_headers?`` / ``update_column_count`` / ``header?``: the header starts
  ``Student, ID`` or ``LastName, FirstName, ID`` (the latter only with the account setting
  ``allow_student_last_first_names``), then ``SIS User ID, SIS Login ID`` (optionally
  ``Integration ID``, ``Root Account``), and the last identity column is ``Section``;
- ``strip_non_assignment_columns``: Current/Final/Override Score/Points/Grade are not assignments;
- ``parse_assignments``: ``Title (id)`` is the assignment with that id; otherwise (``backward
  compat``) an existing assignment whose title is the whole header; otherwise a new one;
- ``check_for_non_student_row``: ``Points Possible`` sets each column's points (``process_pp``),
  rows of only ``Muted`` / ``Manual Posting`` are skipped;
- ``process_student``: the student with the row's ``ID``, else by SIS User ID, else by SIS
  Login ID, else one whose name or sortable name is the row's name, else a new student (and
  then ``@missing_student``: no unchanged column is weeded out);
- ``no_change_to_value?``: unchanged when equal, when both are blank or ``-``, or when both
  are present and equal at two decimals; a blank over a score is a change (the score goes).

A change to a score posts the new grade; a blank one removes the score (``None`` here).
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

NON_ASSIGNMENT = re.compile("|".join(("Current Score", "Current Points", "Current Grade", "Final Score",
                                      "Final Points", "Final Grade", "Override Score", "Override Grade",
                                      "Override Status")))
TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\s*\Z")


class InvalidHeaderRow(ValueError):
    pass


@dataclass
class Assignment:
    title: str
    points: str


@dataclass
class Student:
    name: str  # "Ada Lovelace"
    sortable_name: str  # "Lovelace, Ada"
    sis_user_id: str
    login_id: str
    section: str = "Sec 1"


@dataclass
class Course:
    assignments: dict[int, Assignment]
    students: dict[int, Student]
    scores: dict[tuple[int, int], str] = field(default_factory=dict)  # (student, assignment) -> score or "EX"

    def export(self, last_first: bool = False) -> str:
        """The gradebook as Canvas's Grades, Export writes it (the roster the tool reads)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        names = ["LastName", "FirstName"] if last_first else ["Student"]
        titles = [f"{a.title} ({aid})" for aid, a in self.assignments.items()]
        w.writerow([*names, "ID", "SIS User ID", "SIS Login ID", "Section", *titles, "Current Score"])
        w.writerow(["    Manual Posting", *[""] * (len(names) + 3), *[""] * len(titles), ""])
        w.writerow(["Points Possible", *[""] * (len(names) + 3),
                    *(a.points for a in self.assignments.values()), "(read only)"])
        for sid, s in self.students.items():
            last, first = s.sortable_name.split(", ", 1)
            name = [last, first] if last_first else [s.sortable_name]
            w.writerow([*name, sid, s.sis_user_id, s.login_id, s.section,
                        *(self.scores.get((sid, aid), "") for aid in self.assignments), ""])
        return buf.getvalue()


@dataclass
class Import:
    changes: dict[tuple[int, int], str | None]  # (student, assignment) -> the new score (None: removed)
    new_assignments: list[str]
    new_students: list[str]
    points: dict[int, str]  # assignment -> points possible the import sets


def no_score(value: str | None) -> bool:
    return value is None or value.strip() == "" or value == "-"


def no_change(new: str | None, current: str | None) -> bool:
    if new == current:
        return True
    if no_score(current) and no_score(new):
        return True
    if no_score(current) or no_score(new):  # `return false unless current.present? && new.present?`
        return False
    if new.casefold() == "ex" or current.casefold() == "ex":
        return False
    try:
        return f"{float(current):.2f}" == f"{float(new):.2f}"  # I18n.n(value, precision: 2)
    except ValueError:
        return False


def read(course: Course, text: str, *, allow_last_first: bool = False) -> Import:
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    if not ((len(header) > 3 and "Student" in header[0] and "ID" in header[1])
            or (len(header) > 4 and "LastName" in header[0] and "FirstName" in header[1] and "ID" in header[2])):
        raise InvalidHeaderRow("no student headers")
    last_first = header[0] == "LastName" and header[1] == "FirstName"
    if last_first and not allow_last_first:
        raise InvalidHeaderRow("LastName/FirstName without the account setting")
    count = 4 if last_first else 3
    width = count
    if re.search(r"SIS\s+Login\s+ID", header[count - 1]):
        login_col, user_col = count - 1, None
        width += 1
    elif re.search(r"SIS\s+User\s+ID", header[count - 1]) and re.search(r"SIS\s+Login\s+ID", header[count]):
        user_col, login_col = count - 1, count
        width += 2 + (1 if re.search(r"Integration\s+ID", header[count + 1]) else 0)
    else:
        user_col = login_col = None
    if "Section" not in header[width - 1]:
        raise InvalidHeaderRow("the last identity column is not Section")
    columns: list[tuple[int, int | None, str]] = []  # (csv column, assignment id or None: new, title)
    for i, h in enumerate(header[width:], start=width):
        if NON_ASSIGNMENT.search(h):
            continue
        m = TITLE_AND_ID.match(h)
        aid = int(m[2]) if m and int(m[2]) in course.assignments else None
        if aid is None:  # backward compat: an existing assignment titled like the whole header
            aid = next((k for k, a in course.assignments.items() if a.title == h), None)
        columns.append((i, aid, m[1] if m and aid is None else h))
    result = Import({}, [t for _, aid, t in columns if aid is None], [], {})
    id_col = 2 if last_first else 1
    by_sis = {s.sis_user_id: k for k, s in course.students.items()}
    by_login = {s.login_id: k for k, s in course.students.items()}
    cells: list[tuple[int | None, str, list[str]]] = []
    for row in rows[1:]:
        if row and "Points Possible" in row[0]:
            for i, aid, _ in columns:
                if aid is not None and i < len(row) and row[i]:
                    result.points[aid] = row[i]
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row):
            continue
        sid: int | None = int(row[id_col]) if row[id_col].strip().isdigit() else None
        if sid not in course.students:
            sid = None
            if user_col is not None and row[user_col] in by_sis:
                sid = by_sis[row[user_col]]
            elif login_col is not None and row[login_col] in by_login:
                sid = by_login[row[login_col]]
            else:
                name = f"{row[1]} {row[0]}".strip() if last_first else row[0]
                sid = next((k for k, s in course.students.items() if name in (s.name, s.sortable_name)), None)
        if sid is None:
            result.new_students.append(row[0])
        cells.append((sid, row[0], row))
    for i, aid, _ in columns:
        if aid is None:
            continue
        for sid, _, row in cells:
            if sid is None:
                continue
            new = row[i].strip() if i < len(row) else ""
            current = course.scores.get((sid, aid))
            if not no_change(new, current):
                result.changes[(sid, aid)] = None if no_score(new) else new
    return result


def apply(course: Course, imported: Import) -> dict[tuple[int, int], str]:
    """The course's scores after the import."""
    scores = dict(course.scores)
    for key, new in imported.changes.items():
        if new is None:
            scores.pop(key, None)
        else:
            scores[key] = new
    return scores
