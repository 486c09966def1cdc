"""integrity.csv and integrity.html: the pairs, most suspicious first, for the instructor only.

The CSV gets grades.csv's protection (report/table.py's ``neutralise``: no cell starts a
formula) and readable one-line names. The page is one offline file (the other pages' style,
no script, nothing loaded from elsewhere); every name and every character of code or output
from a submission is escaped by the template (templates/integrity.html.j2), the highlighting
being the only markup put between the pieces.
"""
from __future__ import annotations

import csv
import io
from typing import NamedTuple

from ..names import one_line, readable
from ..report.render import render
from ..report.table import neutralise
from .result import IntegrityResult
from .scoring import AMOUNT, Pair, Student, common_count, defs_in, regions_of
from .traces import STRENGTH

COLUMNS = ["student_a", "student_b", "score", "flagged", "signals", "evidence", "code_score", "trace_score"]
MAX_SHOWN = 50  # flagged pairs shown side by side; the CSV has every reported pair
MAX_UNIT = 20_000  # characters of one unit shown: a hostile cell of a megabyte is cut


def signals(p: Pair) -> list[str]:
    out = ["code"] if p.code >= 0.01 else []
    return out + sorted({t.kind for t in p.traces})


def evidence(p: Pair) -> str:
    """The matched regions in a few words."""
    parts = []
    if p.shared:
        smaller = p.a if p.a.mass <= p.b.mass else p.b
        where = []
        for i, _ in regions_of(smaller, p.shared):
            unit = smaller.prints[i]
            names = defs_in(unit.source)
            where.append(f"{', '.join(names[:3])} ({unit.label})" if names else unit.label)
        parts.append(f"code: {100 * p.overlap:.0f}% of {readable(smaller.work.student)}'s rare code, "
                     f"in {'; '.join(where[:6])}{' ...' if len(where) > 6 else ''}")
    if p.traces:
        shown = [t.shown for t in p.traces[:4]]
        more = f" and {len(p.traces) - 4} more" if len(p.traces) > 4 else ""
        parts.append("traces: " + "; ".join(shown) + more)
    return one_line(" | ".join(parts), 600)


def integrity_csv(pairs: list[Pair], threshold: float) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in pairs:
        writer.writerow([neutralise(readable(p.a.work.student)), neutralise(readable(p.b.work.student)),
                         f"{p.score:.3f}", "true" if p.score >= threshold else "false",
                         neutralise(" ".join(signals(p))), neutralise(evidence(p)), f"{p.code:.3f}", f"{p.trace:.3f}"])
    return buf.getvalue()


def highlighted(source: str, regions: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """``source`` as pieces, each with whether it lies in one of ``regions`` (character
    ranges): the page marks those."""
    out, at = [], 0
    for a, b in regions:
        a, b = max(a, at), max(b, at)
        out += [(source[at:a], False), (source[a:b], True)]
        at = b
    out.append((source[at:], False))
    return [(text, marked) for text, marked in out if text]


class Unit(NamedTuple):
    label: str
    pieces: list[tuple[str, bool]]  # highlighted()
    cut: bool  # longer than MAX_UNIT: the rest is not shown


class Side(NamedTuple):
    student: str
    notebook: str
    units: list[Unit]


def side(s: Student, p: Pair) -> Side:
    units = []
    for i, regions in regions_of(s, p.shared):
        unit = s.prints[i]
        src = unit.source[:MAX_UNIT]
        regions = [(a, min(b, len(src))) for a, b in regions if a < len(src)]
        units.append(Unit(unit.label, highlighted(src, regions), len(unit.source) > MAX_UNIT))
    return Side(readable(s.work.student), readable(s.work.name), units)


def integrity_html(result: IntegrityResult, assignment: str) -> str:
    return render("integrity.html.j2", assignment=assignment, result=result, shown=result.flagged[:MAX_SHOWN],
                  readable=readable, signals=signals, evidence=evidence, side_of=side,
                  common=common_count(result.students), strengths=", ".join(f"{k} {s:g}" for k, s in STRENGTH.items()),
                  amount=AMOUNT)
