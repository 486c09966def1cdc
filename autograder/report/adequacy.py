"""The adequacy matrix for course authors as files: ``adequacy.csv`` (a line per mistake,
exercise and check; no cell a spreadsheet would run as a formula) and ``adequacy.html``
(templates/adequacy.html.j2), a page like the class dashboard beside which it can be
written: one table per exercise, its checks as columns, a row per catalogued mistake that
reaches it. Self-contained, like class.html: inline CSS, nothing loaded from elsewhere, every
text escaped by the template."""
from __future__ import annotations

import csv
import io
from typing import NamedTuple

from ..adequacy import CSV_COLUMNS, Cell, Matrix, Row, csv_rows, summary
from ..assignments import exercise
from ..spec import Spec
from .render import render
from .table import neutralise


class Table(NamedTuple):
    exercise: str
    checks: tuple[Spec, ...]
    rows: list[Row]


def cell_kind(c: Cell) -> str:
    """How a cell is coloured: the check passes, fails on some draws, fails naming the mistake
    on all of them, or fails naming something else."""
    return ("passes" if not c.failed else "some" if c.failed < c.students
            else "named" if c.named == c.failed else "other")


def row_kind(r: Row) -> str:
    return ("excused" if r.blind_reason else "blind") if r.blind else ""


def points_lost(r: Row) -> str:
    return f"{min(r.lost):g}" if r.stable else f"{min(r.lost):g} to {max(r.lost):g}"


def html(matrix: Matrix) -> str:
    tables = [Table(name, tuple(exercise(name).specs), [r for r in matrix.rows if r.exercise == name])
              for name in dict.fromkeys(r.exercise for r in matrix.rows)]
    return render("adequacy.html.j2", summary=summary(matrix), tables=tables, cell_kind=cell_kind,
                  row_kind=row_kind, points_lost=points_lost)


def csv_text(matrix: Matrix) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in csv_rows(matrix):
        writer.writerow([neutralise(v) if isinstance(v, str) else v for v in row])
    return buf.getvalue()
