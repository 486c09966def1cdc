"""integrity.csv and integrity.html: the pairs, most suspicious first, for the instructor only.

The CSV gets grades.csv's protection (report/table.py's ``neutralise``: no cell starts a
formula) and readable one-line names. The page is one offline file (the other pages' style,
no script, nothing loaded from elsewhere); every name and every character of code or output
from a submission is HTML-escaped (``html.escape``), the highlighting being the only markup
put between escaped pieces.
"""
from __future__ import annotations

import csv
import io
from html import escape

from ..names import one_line, readable
from ..report.feedback import STYLE
from ..report.table import neutralise
from .result import IntegrityResult
from .scoring import AMOUNT, Pair, Student, common_count, defs_in, regions_of
from .traces import STRENGTH

COLUMNS = ["student_a", "student_b", "score", "flagged", "signals", "evidence", "code_score", "trace_score"]
MAX_SHOWN = 50  # flagged pairs shown side by side; the CSV has every reported pair
MAX_UNIT = 20_000  # characters of one unit shown: a hostile cell of a megabyte is cut
EXTRA_STYLE = """
.pair{border:2px solid #d0d0d0;border-radius:8px;padding:.6rem 1rem;margin:1.2rem 0}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:.8rem} .sides>div{min-width:0}
mark{background:#ffd8a8;color:inherit;padding:0}
@media (max-width:48rem){.sides{grid-template-columns:1fr}}
"""


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


def highlighted(source: str, regions: list[tuple[int, int]]) -> str:
    """``source`` escaped, with ``regions`` (character ranges) in <mark>."""
    out, at = [], 0
    for a, b in regions:
        a, b = max(a, at), max(b, at)
        out.append(escape(source[at:a]))
        out.append(f"<mark>{escape(source[a:b])}</mark>")
        at = b
    out.append(escape(source[at:]))
    return "".join(out)


def _side(s: Student, p: Pair) -> str:
    parts = [f"<h4>{escape(readable(s.work.student))} <span class='muted'>({escape(readable(s.work.name))})"
             "</span></h4>"]
    for i, regions in regions_of(s, p.shared):
        unit = s.prints[i]
        src = unit.source[:MAX_UNIT]
        regions = [(a, min(b, len(src))) for a, b in regions if a < len(src)]
        cut = "<p class='muted'>(cut)</p>" if len(unit.source) > MAX_UNIT else ""
        parts.append(f"<p class='muted'>{escape(unit.label)}</p><pre>{highlighted(src, regions)}</pre>{cut}")
    return "<div>" + "".join(parts) + "</div>"


def _pair_html(n: int, p: Pair) -> str:
    a, b = readable(p.a.work.student), readable(p.b.work.student)
    tags = "".join(f"<span class='tag'>{escape(s)}</span>" for s in signals(p))
    traces = "".join(f"<li>{escape(t.shown)}</li>" for t in p.traces)
    trace_block = f"<p>Traces both notebooks carry:</p><ul>{traces}</ul>" if traces else ""
    sides = f"<div class='sides'>{_side(p.a, p)}{_side(p.b, p)}</div>" if p.shared else ""
    return (f"<section class='pair' id='pair-{n}'><h3>{n}. {escape(a)} and {escape(b)}: score {p.score:.2f}</h3>"
            f"<p>{tags} code {p.code:.2f} · traces {p.trace:.2f}</p><p>{escape(evidence(p))}</p>"
            f"{trace_block}{sides}</section>")


def _explained(n_students: int) -> str:
    common = common_count(n_students)
    strengths = ", ".join(f"{kind} {s:g}" for kind, s in STRENGTH.items())
    return (
        "<section id='how'><h2>What the signals mean</h2>"
        "<p><strong>A flag is a reason to look at two submissions side by side, never proof.</strong> "
        "Read the highlighted code and ask the students before concluding anything.</p>"
        "<h3>1. Code similarity</h3><p>Each student's own code: the code of their exercise cells and of any "
        "cells they added, with the released notebook's code (stubs, given helpers, demonstrations, checks) "
        "removed first. It is normalised before comparing: every name they chose becomes the same letter, "
        "comments, docstrings and layout are dropped, so renaming, reformatting, adding comments and moving "
        "functions around change nothing. It is cut into overlapping pieces of 25 normalised characters "
        "(fingerprints, MOSS's winnowing); highlighted below is the code whose fingerprints the two share.</p>"
        "<h3>2. Traces a copied file carries</h3><p>What only the same saved file has: the id of a cell the "
        "release does not have (Jupyter makes a random one per new cell), the same order of execution counts "
        "(not a plain 1, 2, 3 run), the same home folder or user name in an output or traceback, the same "
        "object address (<code>0x7f...</code>, different on every run), the same unusual error, the same long "
        f"output of a cell of their own. Strength of one such trace before rarity: {escape(strengths)}.</p>"
        "<h3>3. Rarity</h3><p>A fingerprint or trace is weighed by how few students have it: 1 when at most "
        f"two do, nothing once {common:g} or more do (5% of the class, and never fewer than 5), and nothing "
        "when the instructor's own solution has it: the canonical answer (the dictionary of shapes, the "
        "one-line causal mask) is what every correct student may write, so sharing it accuses no one. "
        "Two students who both wrote the canonical answer, or left the starter code untouched, share only "
        "weightless fingerprints.</p>"
        "<h3>The score</h3><p>code = overlap × amount: overlap is the rare code the two share over the rare "
        "code of the one who has less of it; amount is 1 − e<sup>−(shared/"
        f"{AMOUNT:g})²</sup> (a few shared lines are a coincidence, whole functions are not). traces = "
        "1 − Π(1 − strength × rarity) over the shared traces. score = 1 − (1 − code)(1 − traces), in [0, 1]. "
        "A pair at or above the threshold is flagged.</p></section>")


def integrity_html(result: IntegrityResult, assignment: str) -> str:
    flagged = result.flagged
    body = [f"<h1>{escape(assignment)}: copied work?</h1>",
            "<p class='muted'>For the instructor only. <a href='integrity.csv'>integrity.csv</a> has every "
            "reported pair. A flag is a reason to look, never proof.</p>",
            "<ul class='facts'>"
            f"<li><strong>{result.students}</strong> submissions compared</li>"
            f"<li><strong>{len(result.unread)}</strong> could not be read</li>"
            f"<li><strong>{len(result.pairs)}</strong> pairs reported (score at least 0.05)</li>"
            f"<li><strong>{len(flagged)}</strong> flagged (score at least {result.threshold:g})</li>"
            f"<li>compared in {result.seconds:.1f} s</li></ul>"]
    body.append("<section id='flagged'><h2>Flagged pairs</h2>")
    if not flagged:
        body.append("<p>None: no pair shares enough rare code or traces to be worth a look.</p>")
    for n, p in enumerate(flagged[:MAX_SHOWN], 1):
        body.append(_pair_html(n, p))
    if len(flagged) > MAX_SHOWN:
        body.append(f"<p>... and {len(flagged) - MAX_SHOWN} more flagged pairs in integrity.csv.</p>")
    body.append("</section>")
    rows = "".join(f"<tr><td>{escape(readable(p.a.work.student))}</td><td>{escape(readable(p.b.work.student))}</td>"
                   f"<td>{p.score:.2f}</td><td>{escape(' '.join(signals(p)))}</td></tr>"
                   for p in result.pairs[:200])
    body.append("<section id='pairs'><h2>Every reported pair</h2><div class='scroll'><table><tr><th>student</th>"
                f"<th>student</th><th>score</th><th>signals</th></tr>{rows}</table></div>"
                + (f"<p>First 200 of {len(result.pairs)}; the rest are in integrity.csv.</p>"
                   if len(result.pairs) > 200 else "") + "</section>")
    if result.unread:
        items = "".join(f"<li>{escape(readable(u.student))}: {escape(u.reason)}</li>" for u in result.unread)
        body.append("<section id='unread'><h2>Could not be read (compared with nothing)</h2>"
                    f"<ul>{items}</ul></section>")
    body.append(_explained(result.students))
    return "\n".join(["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
                      "<meta name='viewport' content='width=device-width, initial-scale=1'>",
                      f"<title>{escape(assignment)}: copied work?</title>",
                      f"<style>{STYLE}{EXTRA_STYLE}</style></head><body>",
                      *body, "</body></html>"]) + "\n"
