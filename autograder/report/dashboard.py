"""The lecturer's page for one graded assignment (``OUTDIR/class.html``), and the printed summary.

Built at the end of a batch from the ``BatchSummary`` and the students' results files in
OUTDIR (so it is the same whether or not the batch was interrupted), it shows: when and how
the class was graded; the submissions that need a look (unreadable, hung, crashed, not
graded) by name; a score histogram and how each exercise went; per catalogued mistake, who
made it in which exercise, explained about the student; a class-average attention heatmap
per exercise that produces weights; and a sortable roster linking every feedback page.

It is one self-contained file: inline CSS and SVG, one small inline script that sorts the
roster (without it the roster stays sorted by name), nothing loaded from elsewhere, so it
opens from the file system. Every name and text from a submission is HTML-escaped.
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata
import statistics
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ..class_results import BatchSummary, Failure, StudentRow, results_path
from ..misconceptions import Audience, explain, known, label
from ..names import file_stem, one_line, readable
from ..results import NO_RESULT_KINDS, Results, from_json, write_atomic
from .feedback import ABOUT_CODE, by_exercise, figure, heatmap_svg, markdown, nothing_ran, page, plain, why_nothing_ran
from .index import meta_tags, write_index

BROKEN = ("unreadable", "hung", "crashed", "not graded")  # the kinds listed by name at the top
WHAT_IT_MEANS = {  # outcomes that are not misunderstandings, said about the student
    "not_implemented": "left the exercise unfinished: the function still raises NotImplementedError.",
    "timeout": "wrote code that ran past the time limit (a loop that never ends, or far too much work).",
    "crashed": "wrote code that raised an error, or that ended the process running it.",
}


# ---------------------------------------------------------------- the printed summary

def summary_text(summary: BatchSummary) -> str:
    n = summary.students
    if not n:
        return f"{summary.assignment}: no submissions."
    lines = [f"{summary.assignment}: {n} students, mean {summary.mean:.1f} / {summary.max_score:g}"]
    for e, t in summary.exercises.items():
        lines.append(f"  {e:<30} full {t.full:>3}  partial {t.partial:>3}  zero {t.zero:>3}")
    mistakes = {m: s for m, s in summary.mistakes.items() if m not in ABOUT_CODE}
    if mistakes:
        lines.append("Most common mistakes:")
        shown = list(mistakes.items())[:5]
        width = max(22, *(len(m) for m, _ in shown))  # ids line up, the longest too (induction_keyed_on_token)
        for m, students in shown:
            lines.append(f"  {m:<{width}} {len(students):>3} student{'s' if len(students) > 1 else ' '} "
                         f"({100 * len(students) / n:.0f}%)")
    return "\n".join(lines)


# ---------------------------------------------------------------- words about the student

def mistake_meaning(mistake: str, exercise: str) -> str:
    """A mistake explained about the student: the course's template in the instructor's words
    (misconceptions.WORDS), the engine's own outcomes in WHAT_IT_MEANS's."""
    if mistake in WHAT_IT_MEANS:
        return "The student " + WHAT_IT_MEANS[mistake]
    if known(mistake):
        return explain(mistake, Audience.INSTRUCTOR, func=exercise)
    return ""


# ---------------------------------------------------------------- the class, read from OUTDIR

@dataclass(frozen=True)
class Marks:
    """What the page keeps of one student's results: a few numbers and ids. Not the results
    themselves: their messages and heatmaps, kept for a class of 100,000, would take gigabytes."""
    score: float
    exercises: dict[str, float]  # exercise -> points
    mistakes: tuple[tuple[str, str], ...]  # (exercise, misconception) of each failed test that names one
    isolation: str

    @classmethod
    def of(cls, results: Results) -> "Marks":
        extra = results.extra_data if isinstance(results.extra_data, dict) else {}
        return cls(results.score, results.exercise_scores(),
                   tuple((t.exercise, t.misconception) for t in results.tests
                         if t.misconception and t.status == "failed"),
                   str(extra.get("isolation", "?")))


@dataclass
class Student:
    name: str  # the raw name (the key); shown through readable()
    marks: Marks | None  # None: not graded (the grader failed)
    flags: list[tuple[str, str]] = field(default_factory=list)  # (kind, one line of why)

    @property
    def shown(self) -> str:
        return readable(self.name)

    @property
    def href(self) -> str:
        return f"feedback/{quote(file_stem(self.name))}.html"


def flags_of(results: Results) -> list[tuple[str, str]]:
    """What is wrong with a submission beyond its mistakes, each with one line of why."""
    flags: list[tuple[str, str]] = []
    if nothing_ran(results):
        return [("unreadable", one_line(plain(why_nothing_ran(results)[0]), 200))]
    groups = by_exercise(results)
    for e, tests in groups.items():
        failed = [t for t in tests if t.status == "failed"]
        if any(t.misconception == "timeout" for t in failed):
            flags.append(("hung", f"{e} ran past the time limit"))
        died = next((t for t in failed if t.kind in NO_RESULT_KINDS), None)
        if died is not None:
            flags.append(("crashed", one_line(plain(died.output), 200)))
        elif any(t.misconception == "crashed" for t in failed):
            flags.append(("error", f"{e} raised an error"))
        if any(t.misconception == "not_implemented" for t in failed):
            flags.append(("unfinished", f"{e} not implemented"))
    problems = [p for p in results.problems if p.strip()]
    if problems:
        flags.append(("problems", one_line(plain(problems[0]), 200)))
    merged: dict[str, list[str]] = {}
    for kind, why in flags:  # one flag per kind, its reasons together
        merged.setdefault(kind, []).append(why)
    return [(kind, "; ".join(whys)) for kind, whys in merged.items()]


def load_class(out: Path, rows: list[StudentRow], failures: list[Failure]
               ) -> tuple[list[Student], dict[str, MapTally]]:
    """Every student: the graded ones (``rows``) from their results files in ``out``, then
    those the grader failed on; and each exercise's heatmaps, summed. One results file is in
    memory at a time, so the page costs the same memory for any class size."""

    students, maps = [], {}
    for row in rows:
        try:
            results = from_json(results_path(out, row.student).read_text())
        except (OSError, ValueError, TypeError, KeyError):
            continue
        students.append(Student(row.student, Marks.of(results), flags_of(results)))
        for t in results.tests:
            if isinstance(t.extra_data, dict) and isinstance(t.extra_data.get("heatmap"), dict):
                maps.setdefault(t.exercise, MapTally()).add(t.name, t.extra_data["heatmap"])
    for f in failures:
        students.append(Student(f.student, None, [("not graded", f"the grader failed: {one_line(f.reason, 200)}")]))
    return sorted(students, key=lambda s: s.name), maps


# ---------------------------------------------------------------- charts

def bar_chart_svg(title: str, labels: list[str], series: list[tuple[str, str, list[int]]], total: int) -> str:
    """Horizontal stacked bars as inline SVG: one row per label, one colour per series; it
    scales down to a phone's width (viewBox)."""
    row, left, width = 24, 190, 300
    height = 40 + row * len(labels) + 30
    scale = width / max(total, 1)
    w = left + width + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {height}" width="{w}" height="{height}" '
           f'font-family="system-ui,sans-serif" font-size="12" role="img" aria-label="{escape(title)}">'
           f'<title>{escape(title)}</title>',
           f'<text x="0" y="16" font-weight="600" font-size="13" fill="#1f1f1f">{escape(title)}</text>']
    for i, lab in enumerate(labels):
        y = 30 + i * row
        out.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" fill="#1f1f1f">{escape(lab)}</text>')
        x = left
        for name, colour, values in series:
            bw = values[i] * scale
            if bw > 0:
                out.append(f'<rect x="{x:.1f}" y="{y}" width="{bw:.1f}" height="{row - 6}" fill="{colour}">'
                           f'<title>{escape(lab)}: {values[i]} {escape(name)}</title></rect>')
                if bw > 18:
                    out.append(f'<text x="{x + bw / 2:.1f}" y="{y + 14}" fill="{_ink(colour)}" '
                               f'text-anchor="middle">{values[i]}</text>')
            x += bw
    y = 30 + len(labels) * row + 14
    if len(series) > 1:
        for j, (name, colour, _) in enumerate(series):
            out.append(f'<rect x="{j * 120}" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
                       f'<text x="{j * 120 + 16}" y="{y}" fill="#1f1f1f">{escape(name)}</text>')
    out.append(f'<text x="{w}" y="{y + 16}" text-anchor="end" fill="#444">of {total} students</text></svg>')
    return "".join(out)


def _ink(colour: str) -> str:
    """Black or white, whichever reads on ``colour`` (contrast above 4.5:1 for the palette used)."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lum = sum(c * (v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4)
              for c, v in zip((0.2126, 0.7152, 0.0722), (r, g, b), strict=True))
    return "#000" if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else "#fff"


def histogram_svg(scores: list[float], max_score: float) -> str:
    """Scores in about 10 equal bins from 0 to the maximum (full marks its own bar)."""
    title = f"Score histogram ({len(scores)} students)"
    width_pts = max(1.0, max_score / 10)
    bins = [0] * 11
    for s in scores:
        bins[10 if s >= max_score else min(9, int(s / width_pts))] += 1
    labels = [f"{k * width_pts:g}–{(k + 1) * width_pts:g}".replace(".0", "") for k in range(10)] + [f"{max_score:g}"]
    left, bottom, bw, h = 34, 44, 30, 150
    top = max(bins) or 1
    w = left + 11 * bw + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h + bottom + 24}" width="{w}" '
           f'height="{h + bottom + 24}" font-family="system-ui,sans-serif" font-size="11" role="img" '
           f'aria-label="{escape(title)}"><title>{escape(title)}</title>',
           f'<text x="0" y="14" font-weight="600" font-size="13" fill="#1f1f1f">{escape(title)}</text>']
    y0 = 24 + h
    for k, n in enumerate(bins):
        bh = h * n / top
        x = left + k * bw
        out.append(f'<rect x="{x + 2}" y="{y0 - bh:.1f}" width="{bw - 4}" height="{bh:.1f}" '
                   f'fill="{"#17692e" if k == 10 else "#0b57b0"}"><title>{labels[k]} points: {n} students'
                   f'</title></rect>')
        if n:
            out.append(f'<text x="{x + bw / 2}" y="{y0 - bh - 3:.1f}" text-anchor="middle" fill="#1f1f1f">{n}</text>')
        out.append(f'<text transform="translate({x + bw / 2 + 4} {y0 + 6}) rotate(60)" fill="#333">'
                   f'{labels[k]}</text>')
    out.append(f'<line x1="{left}" x2="{w - 10}" y1="{y0}" y2="{y0}" stroke="#555"/>'
               f'<text x="0" y="{y0 + bottom + 14}" fill="#444">points (of {max_score:g}); last bar: full marks'
               f'</text></svg>')
    return "".join(out)


@dataclass
class _ShapeSums:
    """The maps of one check with one shape (the student's and the expected alike)."""
    n: int = 0  # maps of this shape
    finite: int = 0  # of them, with no nan (stored as -1)
    got: np.ndarray | None = None  # sums over the finite ones
    expected: np.ndarray | None = None
    off: np.ndarray | None = None  # sum of |got - expected|


@dataclass
class _CheckSums:
    count: int = 0  # maps of this check, any shape
    expected: str | None = None  # the first map's expected weights, as text
    same: bool = True  # every map's expected weights are the first's: the same inputs for everyone
    shapes: dict[tuple[int, int], _ShapeSums] = field(default_factory=dict)  # in the order first seen


class MapTally:
    """One exercise's heatmaps over the class, summed as the results files are read."""

    def __init__(self):
        self.checks: dict[str, _CheckSums] = {}

    def add(self, check: str, heatmap: dict) -> None:
        c = self.checks.setdefault(check, _CheckSums())
        c.count += 1
        text = repr(heatmap.get("expected"))
        if c.expected is None:
            c.expected = text
        elif text != c.expected:
            c.same = False
        got, expected = heatmap.get("got"), heatmap.get("expected")
        shape = _shape(got)
        if shape != _shape(expected):
            return
        sums = c.shapes.setdefault(shape, _ShapeSums())
        sums.n += 1
        if not shape[0]:
            return
        g, e = np.array(got, dtype=float), np.array(expected, dtype=float)  # (T_q, T_k)
        if not (g >= 0).all():  # -1 stands for nan
            return
        sums.finite += 1
        if sums.got is None:
            sums.got, sums.expected, sums.off = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        sums.got += g
        sums.expected += e
        sums.off += np.abs(g - e)


def class_average_maps(tally: MapTally | None, exercise: str) -> str:
    """The class's attention weights in one exercise, averaged: for the check most students
    have a heatmap for, over the students whose map has the most common shape and no nan."""
    if tally is None or not tally.checks:
        return ""
    # A check whose expected weights are the same for every student (a worked example, public
    # inputs) averages into a picture of what the class did; otherwise the most common check.
    checks = tally.checks
    name = max(checks, key=lambda n: (checks[n].same and checks[n].count > 1, checks[n].count, n))
    chosen = checks[name]
    if not chosen.shapes:
        return ""
    shape = max(chosen.shapes, key=lambda k: chosen.shapes[k].n)  # the first seen of the most common
    sums = chosen.shapes[shape]
    if not shape[0] or not sums.finite:
        return ""
    got, expected = (sums.got / sums.finite).tolist(), (sums.expected / sums.finite).tolist()
    off = (sums.off / sums.finite).tolist()
    top = max(max(max(r) for r in off), 0.05)  # below that the differences are noise: near white
    check = name.split(": ", 1)[-1]
    note = (f"Check “{check}”{' (the same inputs for everyone)' if chosen.same else ''}, "
            f"{sums.finite} students with {shape[0]} × {shape[1]} weights"
            + (f" ({sums.n - sums.finite} with nan left out)" if sums.finite < sums.n else "") + ".")
    return (f"<h3><code>{escape(exercise)}</code></h3><p class='muted'>{escape(note)}</p><div class='maps'>"
            + figure(heatmap_svg(got, f"{exercise}: class average"), "class average of the students' weights")
            + figure(heatmap_svg(expected, f"{exercise}: expected"), "expected weights" if chosen.same
                     else "expected weights, averaged over the same inputs")
            + figure(heatmap_svg(off, f"{exercise}: where the class is off", vmax=top, scale=("0", f"{top:.2g}")),
                     "where the class is off: mean |student − expected| (its own scale)")
            + "</div>")


def _shape(m) -> tuple[int, int]:
    if not isinstance(m, list) or not m or not all(isinstance(r, list) for r in m):
        return (0, 0)
    widths = {len(r) for r in m}
    return (len(m), widths.pop()) if len(widths) == 1 else (0, 0)


# ---------------------------------------------------------------- the page

SORT_SCRIPT = """
document.querySelectorAll('table.sortable th button').forEach(function (b) {
  b.addEventListener('click', function () {
    var th = b.parentNode, table = th.closest('table'), tbody = table.tBodies[0];
    var i = Array.prototype.indexOf.call(th.parentNode.children, th);
    var asc = th.getAttribute('aria-sort') !== 'ascending';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (r, s) {
      var x = r.cells[i].getAttribute('data-v'), y = s.cells[i].getAttribute('data-v');
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  });
});
"""
DASHBOARD_STYLE = """
body{max-width:80rem}
.facts{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;padding:0;list-style:none}
.facts li{background:#f6f8fa;border-radius:6px;padding:.3rem .6rem}
.grid{display:flex;flex-wrap:wrap;gap:1rem 2rem;align-items:flex-start}
th button{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer;color:#0b57b0;
 text-align:left}
th[aria-sort=ascending] button::after{content:" ▲"} th[aria-sort=descending] button::after{content:" ▼"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
dl.settings{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem} dl.settings dt{font-weight:600}
dl.settings dd{margin:0}
.chart svg{width:30rem;max-width:100%}
.mistake{border-left:4px solid #b58a00;padding:.1rem .8rem;margin:1rem 0} .mistake h3{margin:.3rem 0}
.mistake p{margin:.3rem 0} .count{font-weight:400;color:#333} ul.who{margin:.2rem 0;padding-left:1.2rem}
table.sortable td:first-child{white-space:nowrap;position:sticky;left:0;background:#fff}
table.sortable th:first-child{position:sticky;left:0;z-index:1}
"""


def grader_version() -> str:
    """The package's version, and the commit it was run from when it is a checkout."""
    try:
        version = importlib.metadata.version("attention-autograder")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    here = Path(__file__).resolve().parent.parent.parent
    if (here / ".git").exists():
        try:
            commit = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = ""
        if commit:
            version += f" (commit {commit})"
    return version


def _link(s: Student) -> str:
    if s.marks is None:
        return escape(s.shown)
    return f"<a href='{escape(s.href, quote=True)}'>{escape(s.shown)}</a>"


def _flag(kind: str, why: str) -> str:
    cls = "bad" if kind in BROKEN else ""
    return f"<span class='tag {cls}' title='{escape(why, quote=True)}'>{escape(kind)}</span>"


def dashboard_html(summary: BatchSummary, students: list[Student], maps: dict[str, MapTally],
                   settings: dict[str, str], graded: str, version: str, integrity: bool = False) -> str:
    """``integrity``: OUTDIR has an integrity.html (``autograder integrity``) to link; this page is
    the instructor's, so it may (a student's feedback page never does)."""
    a = summary.assignment
    exercises = list(summary.exercises)
    graded_ones = [s for s in students if s.marks is not None]
    scores = [s.marks.score for s in graded_ones]
    n = len(graded_ones)
    median = statistics.median(scores) if scores else 0
    line = (f"{n} graded, mean {summary.mean:.1f} / {summary.max_score:g}"
            + (f", {len(students) - n} not graded" if len(students) > n else ""))
    body = [meta_tags(assignment=a, graded=graded, summary=line),
            f"<h1>{escape(a)}: class dashboard</h1>",
            f"<p class='muted'>Graded {escape(graded)} by autograder {escape(version)}. "
            f"<a href='index.html'>index</a> · <a href='grades.csv'>grades.csv</a>"
            + (" · <a href='integrity.html'>copied work? (integrity.html)</a>" if integrity else "") + "</p>",
            "<ul class='facts'>"
            f"<li><strong>{n}</strong> students graded</li>"
            f"<li>mean <strong>{summary.mean:.1f}</strong> / {summary.max_score:g}</li>"
            f"<li>median <strong>{median:g}</strong></li>"
            f"<li><strong>{sum(1 for s in scores if s == summary.max_score)}</strong> full marks</li>"
            f"<li><strong>{sum(1 for s in students if any(k in BROKEN for k, _ in s.flags))}</strong> "
            "submissions need a look</li></ul>"]

    # Submissions that need a look, by name.
    body.append("<section id='broken'><h2>Submissions that need a look</h2>")
    kinds = {"unreadable": "Could not be read (nothing in them ran)",
             "hung": "Hung (ran past the time limit)",
             "crashed": "Crashed (ended the process running them)",
             "not graded": "Not graded: the grader itself failed (no grade stored; run the same command again)"}
    any_broken = False
    for kind, heading in kinds.items():
        who = [(s, why) for s in students for k, why in s.flags if k == kind]
        if who:
            any_broken = True
            items = "".join(f"<li>{_link(s)}: {escape(why)}</li>" for s, why in who)
            body.append(f"<h3>{escape(heading)}: {len(who)}</h3><ul>{items}</ul>")
    if not any_broken:
        body.append("<p>None: every submission was read and ran within its limits.</p>")
    body.append("</section>")

    # Charts.
    tallies = summary.exercises
    exercise_chart = bar_chart_svg("How each exercise went", exercises, [
        ("full marks", "#17692e", [t.full for t in tallies.values()]),
        ("partial", "#f2b01e", [t.partial for t in tallies.values()]),
        ("zero", "#b3261e", [t.zero for t in tallies.values()])], n)
    body.append("<h2>Scores</h2><div class='grid'>"
                f"<div class='chart'>{histogram_svg(scores, summary.max_score)}</div>"
                f"<div class='chart'>{exercise_chart}</div></div>")

    # Mistakes: who, in which exercise.
    body.append("<h2 id='mistakes'>Mistakes, and who made them</h2>")
    made: dict[str, dict[str, list[Student]]] = {}
    for s in graded_ones:
        for e, m in s.marks.mistakes:
            who = made.setdefault(m, {}).setdefault(e, [])
            if s not in who:
                who.append(s)
    if made:
        order = sorted(made, key=lambda m: (m in ABOUT_CODE, -len({s.name for w in made[m].values() for s in w}), m))
        for m in order:
            count = len({s.name for w in made[m].values() for s in w})
            where = "".join(f"<li><code>{escape(e)}</code>: {', '.join(_link(s) for s in who)}</li>"
                            for e, who in made[m].items())
            first = next(iter(made[m]))
            body.append(f"<div class='mistake' id='m-{escape(m)}'><h3><span class='tag'>{escape(label(m))}</span> "
                        f"<code>{escape(m)}</code> <span class='count'>{count} student{'s' if count != 1 else ''} "
                        f"({100 * count / max(n, 1):.0f}%)</span></h3>"
                        f"<p>{markdown(mistake_meaning(m, first))}</p><ul class='who'>{where}</ul></div>")
    else:
        body.append("<p>No catalogued mistake was made.</p>")

    # Class-average attention weights.
    maps = [class_average_maps(maps.get(e), e) for e in exercises]
    if any(maps):
        body.append("<h2 id='attention'>The class's attention weights</h2><p>Per exercise that produces attention "
                    "weights: the students' weights averaged, beside the expected ones averaged over the same "
                    "inputs. Rows are query positions, columns key positions.</p>" + "".join(maps))

    # The roster.
    head = ["<th scope='col'><button type='button'>student</button></th>",
            "<th scope='col'><button type='button'>score</button></th>",
            *(f"<th scope='col'><button type='button'>{escape(e).replace('_', '_<wbr>')}</button></th>"
              for e in exercises),
            "<th scope='col'><button type='button'>flags</button></th>"]
    rows = []
    for s in students:
        if s.marks is None:
            cells = ["<td class='num' data-v='-1'>—</td>"] + ["<td class='num' data-v='-1'>—</td>"] * len(exercises)
        else:
            points = s.marks.exercises
            cells = [f"<td class='num' data-v='{s.marks.score:g}'>{s.marks.score:g}</td>"]
            cells += [f"<td class='num' data-v='{points.get(e, 0):g}'>{points.get(e, 0):g}</td>" for e in exercises]
        mistakes = sorted({m for _, m in (s.marks.mistakes if s.marks else ()) if m not in ABOUT_CODE})
        flags = "".join(_flag(k, why) for k, why in s.flags) + "".join(_flag(m, "catalogued mistake") for m in mistakes)
        key = " ".join([k for k, _ in s.flags] + mistakes)
        rows.append(f"<tr><td data-v='{escape(s.shown.lower(), quote=True)}'>{_link(s)}</td>{''.join(cells)}"
                    f"<td data-v='{escape(key, quote=True)}'>{flags}</td></tr>")
    body.append(f"<h2 id='roster'>Roster ({len(students)})</h2><p class='muted'>Click a column's name to sort; a "
                "name opens the student's feedback page.</p>"
                "<div class='scroll'><table class='sortable' id='roster-table'><thead><tr>"
                + "".join(head) + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")

    # Settings.
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in settings.items())
    body.append(f"<h2 id='settings'>How it was graded</h2><dl class='settings'><dt>graded</dt><dd>{escape(graded)}</dd>"
                f"<dt>grader version</dt><dd>{escape(version)}</dd>{items}</dl>")
    body.append(f"<script>{SORT_SCRIPT}</script>")
    html = page(f"{a}: class dashboard", body)
    return html.replace("</style>", DASHBOARD_STYLE + "</style>", 1)


def write_dashboard(out: Path, summary: BatchSummary, rows: list[StudentRow], failures: list[Failure] = (), *,
                    root: Path | None = None, timeout: float | None = None, jobs: int | None = None,
                    grading: dict[str, str] | None = None) -> Path:
    """Write ``out/class.html`` and ``out/index.html``; return the index's path (the page to open).
    ``grading``: where the class was graded, as settings lines (the pool's describe())."""
    out = Path(out)
    students, maps = load_class(out, rows, list(failures))
    isolation = Counter(s.marks.isolation for s in students if s.marks is not None)
    settings = {"assignment": summary.assignment}
    if root is not None:
        settings["class folder"] = readable(str(root))
    settings["results folder"] = readable(str(out))
    if timeout is not None:
        settings["time limit"] = f"{timeout:g} s per exercise and per cell"
    if jobs is not None:
        settings["worker processes"] = str(jobs)
    settings.update(grading or {})
    if isolation:
        settings["isolation"] = ", ".join(f"{k} ({v})" for k, v in isolation.most_common())
    graded = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    write_atomic(out / "class.html", dashboard_html(summary, students, maps, settings, graded, grader_version(),
                                                    integrity=(out / "integrity.html").is_file()))
    return write_index(out, f"Grading results: {summary.assignment}")

