"""One student's feedback page (templates/feedback.html.j2), and the pieces the dashboard shares.

The page opens with the verdict (the score, then one line per failed exercise naming the
mistake), then each exercise: its diagnosis once, the student's attention weights beside the
expected ones as heatmaps, and its checks. What the student's code printed comes last,
collapsed. The page has no script and loads nothing from outside; the template escapes
everything it prints (render.py).

What the page says comes from the results' fields (results.py): how each check ended
(``Kind``, outcomes.py), the mistake's explanation apart from the rest of its message, the
arrays compared, the submission's problems apart from what its code printed, each shown in
the engine's words (a notebook's cells are "notebook cell N" there already: names.NOTEBOOK_CELL).
"""
from __future__ import annotations

import os.path
import re
from typing import NamedTuple

from markupsafe import Markup

from ..assignments import exercise as declaration
from ..exercise import MapWords
from ..misconceptions import explain, label
from ..names import readable
from ..results import CellEnd, CellProblem, Comparison, Kind, Results, TestResult, named_once
from . import charts
from .outcomes import outcome
from .render import macro, render
from .svg import drawn, svg_markup

ABOUT_CODE = ("not_implemented", "timeout", "crashed")  # outcomes, not misunderstandings


# ---------------------------------------------------------------- words

def markdown(text: str) -> str:
    """The little markdown the explanations use (`code`, *emphasis*, **strong**), as HTML;
    every piece of the text is escaped, so nothing in it can become a tag."""
    return str(macro("_markdown.html.j2", "md")(text))


def first_sentence(text: str, limit: int = 200) -> str:
    line = text.strip().split("\n", 1)[0]
    m = re.match(r"(.+?[.!?])(\s|$)", line)
    s = m.group(1) if m else line
    return s if len(s) <= limit else s[: limit - 1] + "…"


# ---------------------------------------------------------------- heatmaps

def heatmap_svg(weights: list[list[float]], title: str, **how) -> str:
    """One heatmap (charts.heatmap) as SVG markup; '' for an empty matrix."""
    picture = charts.heatmap(weights, title, **how)
    return "" if picture is None else svg_markup(picture)


def map_words(exercise: str) -> MapWords:
    """How an exercise's maps are labelled (its declaration's ``map_words``)."""
    try:
        return declaration(exercise).map_words
    except ValueError:  # results of an exercise this course does not declare: plain labels
        return MapWords()


def heatmap_pair(exercise: str, heat: dict, mine: str = "your weights") -> list[tuple[Markup | None, str]]:
    """The student's map first, then the expected one (the order of the text's side-by-side:
    "yours", then "expected"), each drawn (svg.drawn) with its caption."""
    words = map_words(exercise)
    scale, what = words.scale, words.what
    got, expected = heat.get("got") or [], heat.get("expected") or []
    titles = [f"{exercise}: {mine}", f"{exercise}: expected"]
    # The same weights (a student who got it right) are drawn once, under both titles. Told by
    # repr, not ==: the pictures print each weight, and 0.0 == -0.0 though they print apart.
    if repr(got) == repr(expected):
        pictures = charts.heatmaps(got, titles, scale=scale) or [None, None]
    else:
        pictures = [charts.heatmap(got, titles[0], scale=scale), charts.heatmap(expected, titles[1], scale=scale)]
    return list(zip(drawn(pictures), [f"{mine} ({what})" if what else mine,
                                      f"expected weights ({what})" if what else "expected weights"], strict=True))


# ---------------------------------------------------------------- one student's tests, read for display

class Said(NamedTuple):
    """What a failed check's message says besides its diagnosis: its own words, and the arrays
    it compared."""
    words: str
    comparison: Comparison | None

    def __bool__(self) -> bool:
        return bool(self.words or self.comparison)


def exercise_findings(exercise: str, tests: list[TestResult]) -> tuple[list[tuple[str, str]], dict[int, Said]]:
    """For one exercise: its diagnoses, each once ((mistake, explanation): the exercise's own
    mistakes before those it inherits from a function it calls, each kind in the order first
    met, with the numbers of the first test that quoted them, else the catalogue's words), and
    per failed test what else it says, a message already shown left empty."""
    named = named_once((t.misconception, t.finding) for t in tests  # status first: read off a field, not the tags
                       if t.status == "failed" and t.misconception and t.misconception != "crashed")
    details: dict[int, Said] = {}
    seen: set[tuple[str, str]] = set()
    for k, t in enumerate(tests):
        if t.status == "passed":
            continue
        said = Said(t.detail.strip(), t.finding.comparison)
        key = (said.words, said.comparison.text() if said.comparison else "")
        details[k] = Said("", None) if key in seen else said
        seen.add(key)
    return [(m, text or explain(m, func=exercise)) for m, text in named], details


def printed_once(segments: list[str]) -> tuple[str, bool]:
    """What the code printed (``segments``: each process's, Results.printed_parts), with what
    the cells printed again after a restart (they run from the top once more) shown once; and
    whether anything was left out."""
    shown = segments[0]
    for seg in segments[1:]:
        if seg.startswith(shown):
            shown = seg
            continue
        common = len(os.path.commonprefix([shown, seg]))
        if common >= min(len(shown), len(seg)) // 2 and common:
            shown = shown + seg[common:]  # the rerun's repeat left out, what it printed anew kept
        else:
            shown = shown + "\n--- printed after a restart ---\n" + seg
    return shown, len(segments) > 1


def by_exercise(results: Results) -> dict[str, list[TestResult]]:
    out: dict[str, list[TestResult]] = {}
    for t in results.tests:
        out.setdefault(t.exercise, []).append(t)
    return out


def nothing_ran(results: Results) -> bool:
    """Every check failed because nothing in the submission could be run (a notebook that
    could not be read, a file that was not a file): the page says so once, not on every check."""
    return bool(results.tests) and all(t.kind is Kind.NOT_RUN for t in results.tests)


def why_nothing_ran(results: Results) -> list[str]:
    """The reasons a submission nothing of which ran: its problems, else its checks' words."""
    return [p for p in results.problems if p.strip()] or [results.tests[0].detail]


class Fix(NamedTuple):
    """One line of the verdict: what went wrong in an exercise."""
    exercise: str
    got: float
    of: float
    badge: str  # a mistake's label or an outcome's words; '' for a check's title instead
    bad: bool  # the badge is an outcome in which the code gave no answer
    check: str  # the failed check's title, when no badge names what went wrong
    text: str  # markdown: the first sentence of the diagnosis or of the check's message
    more: int  # further diagnoses in the exercise


def fix_line(exercise: str, tests: list[TestResult], diagnoses: list[tuple[str, str]],
             details: dict[int, Said]) -> Fix:
    """The verdict's line for an exercise that lost points."""
    got, of = sum(t.score for t in tests), sum(t.max_score for t in tests)
    if diagnoses:
        m, text = diagnoses[0]
        return Fix(exercise, got, of, label(m), False, "", first_sentence(text), len(diagnoses) - 1)
    t, said = next((t, details.get(k)) for k, t in enumerate(tests) if t.status == "failed")
    why = (said.words or (said.comparison.headline() if said.comparison else "")) if said else ""
    ended = outcome(t)
    text = first_sentence(why or t.output)
    if ended is not None:
        return Fix(exercise, got, of, ended.badge, True, "", text, 0)
    return Fix(exercise, got, of, "", False, t.title, text, 0)


# ---------------------------------------------------------------- the page

def related(problem: CellProblem | None, groups: dict[str, list[TestResult]]) -> str:
    """The exercise a cell's problem belongs with, when the results show it: the same error
    raised by an exercise's function (its first characters: the inputs may differ), or the
    one exercise that also ran out of time."""
    if problem is None:
        return ""
    if problem.ending is CellEnd.RAISED:
        start = problem.message[:60]
        hits = [e for e, ts in groups.items()
                if any(t.kind is Kind.RAISED and start and t.finding.error.startswith(start) for t in ts)]
        return f" (the error {hits[0]} raises: see {hits[0]} below)" if len(hits) == 1 else ""
    if problem.ending is CellEnd.TIMEOUT:
        hung = [e for e, ts in groups.items() if any(t.kind is Kind.TIMEOUT for t in ts)]
        return f" ({hung[0]} also ran past the time limit: see {hung[0]} below)" if len(hung) == 1 else ""
    return ""


class Check(NamedTuple):
    passed: bool
    title: str
    score: float
    max_score: float
    said: Said | None  # what a failed check says beyond the diagnosis (None: nothing new)


class Section(NamedTuple):
    """One exercise on the page."""
    exercise: str
    got: float
    of: float
    diagnoses: list[tuple[str, str]]  # (label, explanation in plain words)
    maps: list[tuple[Markup | None, str]]  # the student's heatmap and the expected one, drawn, with captions
    checks: list[Check]


def section(e: str, ts: list[TestResult], diagnoses: list[tuple[str, str]], details: dict[int, Said],
            common: bool) -> Section:
    with_map = [t for t in ts if isinstance(t.extra_data, dict) and t.extra_data.get("heatmap")]
    pictured = next((t for t in with_map if t.status == "failed"), with_map[0] if with_map else None)
    def said(k: int) -> Said | None:
        s = details.get(k)
        return Said(s.words, s.comparison) if s and not common else None

    checks = [Check(t.status == "passed", t.title, t.score, t.max_score, said(k)) for k, t in enumerate(ts)]
    return Section(e, sum(t.score for t in ts), sum(t.max_score for t in ts),
                   [] if common else [(label(m), text) for m, text in diagnoses],
                   [] if common or pictured is None else heatmap_pair(e, pictured.extra_data["heatmap"]), checks)


def feedback_html(student: str, assignment: str, results: Results) -> str:
    """The page. The name is made readable (a newline or a byte that is not UTF-8 shows as an
    escape); the template escapes it and every other text."""
    student = readable(student)
    groups = by_exercise(results)
    common = nothing_ran(results)
    findings = {e: exercise_findings(e, ts) for e, ts in groups.items()}
    fixes = [] if common else [fix_line(e, ts, *findings[e]) for e, ts in groups.items()
                               if sum(t.score for t in ts) < sum(t.max_score for t in ts)]
    problems: list[tuple[str, str]] = []
    if not common:
        cells = {p.line(): p for p in results.cell_problems}  # the typed problem behind a line, where one is
        problems = [(line, related(cells.get(line), groups)) for line in results.problems if line.strip()]
    printed = None
    if results.printed.strip():
        once, again = printed_once(results.printed_parts())
        printed = (once, " (shown once, though the cells ran again after a restart)" if again else "")
    return render("feedback.html.j2", assignment=assignment, student=student, results=results, fixes=fixes,
                  nothing_ran=[line for line in why_nothing_ran(results) if line.strip()] if common else [],
                  problems=problems, printed=printed,
                  sections=[section(e, ts, *findings[e], common) for e, ts in groups.items()])
