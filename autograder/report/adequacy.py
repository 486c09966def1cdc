"""The adequacy matrix for course authors as files: ``adequacy.csv`` (a line per mistake,
exercise and check; no cell a spreadsheet would run as a formula) and ``adequacy.html``, a
page like the class dashboard beside which it can be written: one table per exercise, its
checks as columns, a row per catalogued mistake that reaches it. Self-contained, like
class.html: inline CSS, nothing loaded from elsewhere, every text escaped."""
from __future__ import annotations

import csv
import io
from html import escape

from ..adequacy import CSV_COLUMNS, Matrix, csv_rows, summary
from ..assignments import exercise
from .table import neutralise

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: center; }
th.check { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: normal; max-height: 16em; }
th.visible { background: #eef5ff; }
td.mistake { text-align: left; white-space: nowrap; }
td.named { background: #2e7d32; color: white; }
td.other { background: #a5d6a7; }
td.some { background: #fff59d; }
td.passes { color: #999; }
tr.blind td.mistake { background: #ffcdd2; }
tr.excused td.mistake { background: #ffe0b2; }
.note { color: #555; font-size: 0.9em; }
"""


def _cell(c) -> str:
    kind = ("passes" if not c.failed else "some" if c.failed < c.students
            else "named" if c.named == c.failed else "other")
    return f'<td class="{kind}" title="{escape(c.title)}">{escape(c.mark)}</td>'


def html(matrix: Matrix) -> str:
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>Adequacy of the checks</title>",
             f"<style>{STYLE}</style></head><body>", "<h1>Catalogued mistakes against checks</h1>",
             f"<p>{escape(summary(matrix))}</p>",
             "<p class='note'>N: fails and names the mistake; x: fails naming another or none; n: both, on "
             "different draws; .: passes; k/n: on k of n students' draws. Blue columns are visible checks. "
             "A red mistake passes every visible check; an orange one too, with its catalogue entry's "
             "reason.</p>"]
    for name in dict.fromkeys(r.exercise for r in matrix.rows):
        rows = [r for r in matrix.rows if r.exercise == name]
        specs = exercise(name).specs
        head = "".join(f'<th class="check{" visible" if s.visible else ""}">{escape(s.title)} ({s.points:g})</th>'
                       for s in specs)
        parts.append(f"<h2>{escape(name)}</h2><table><tr><th>mistake</th>{head}<th>points lost</th></tr>")
        for r in rows:
            kind = ("excused" if r.blind_reason else "blind") if r.blind else ""
            lost = f"{min(r.lost):g}" if r.stable else f"{min(r.lost):g} to {max(r.lost):g}"
            label = escape(r.mistake) + (" <span class='note'>(inherited)</span>" if r.inherited else "")
            if r.blind and r.blind_reason:
                label += f"<br><span class='note'>{escape(r.blind_reason)}</span>"
            parts.append(f'<tr class="{kind}"><td class="mistake">{label}</td>'
                         + "".join(_cell(c) for c in r.cells) + f"<td>{escape(lost)}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def csv_text(matrix: Matrix) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in csv_rows(matrix):
        writer.writerow([neutralise(v) if isinstance(v, str) else v for v in row])
    return buf.getvalue()
