"""One student's feedback page, and the pieces of HTML the class dashboard shares with it.

The page opens with the verdict (the score, then one line per failed exercise naming the
mistake), then each exercise: its diagnosis once, the student's attention weights beside the
expected ones as heatmaps, and its checks. What the student's code printed comes last,
collapsed. Everything taken from a submission or from results is HTML-escaped; the page has
no script and loads nothing from outside.

What the page says comes from the results' fields (results.py): how each check ended
(``Kind``), the mistake's explanation apart from the rest of its message, the arrays compared,
the submission's problems apart from what its code printed. ``plain`` rewords only the
engine's bare "cell N", which on a page could be read as the N-th code cell.
"""
from __future__ import annotations

import re
from html import escape
from typing import NamedTuple

from ..assignments import exercise as declaration
from ..exercise import MapWords
from ..misconceptions import explain, label
from ..names import readable
from ..results import NO_RESULT_KINDS, CellEnd, CellProblem, Comparison, Kind, Results, TestResult

ABOUT_CODE = ("not_implemented", "timeout", "crashed")  # outcomes, not misunderstandings

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:64rem;margin:0 auto;padding:1rem;
 color:#1f1f1f;background:#fff;line-height:1.45;overflow-wrap:anywhere}
h1{font-size:1.45rem;margin:.5rem 0} h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d0d0d0}
h3{font-size:1rem;margin:1.2rem 0 .4rem}
a{color:#0b57b0} code{font-size:.92em;background:#f1f3f5;padding:0 .2em;border-radius:3px}
.muted{color:#555}
.pts{float:right;font-weight:600;font-variant-numeric:tabular-nums}
.pass{color:#17692e} .fail{color:#b3261e}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;font-size:.82rem;white-space:pre-wrap;max-width:100%}
.tag{display:inline-block;white-space:nowrap;background:#fff3cd;border:1px solid #b58a00;color:#3d2e00;
 border-radius:4px;padding:0 .4rem;font-size:.8rem;margin-right:.3rem}
.tag.bad{background:#fde7e9;border-color:#b3261e;color:#5c0f0a}
.tag.ok{background:#e6f4ea;border-color:#17692e;color:#0b3d1a}
.verdict{border:2px solid #d0d0d0;border-radius:8px;padding:.8rem 1rem;margin:1rem 0}
.verdict .big{font-size:2rem;font-weight:700;margin:0}
.verdict ul{padding-left:1.2rem;margin:.4rem 0} .verdict li{margin:.25rem 0}
.maps{display:flex;flex-wrap:wrap;gap:1.5rem;margin:.6rem 0 1rem;align-items:flex-start}
.maps figure{margin:0;max-width:100%} .maps figcaption{font-size:.85rem;text-align:center;color:#333}
svg{max-width:100%;height:auto} .chart{margin:1rem 0}
ul.checks{list-style:none;padding-left:0} ul.checks li{margin:.3rem 0}
.detail{background:#f6f8fa;padding:.4rem .6rem;margin:.3rem 0 .6rem;border-radius:4px}
.detail p.why{margin:.2rem 0;font-size:.9rem} pre.arrays{white-space:pre;padding:.2rem 0;margin:.2rem 0}
pre.said{padding:.2rem 0;margin:.2rem 0}
details{margin:1rem 0} summary{cursor:pointer;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;overflow-wrap:normal}
td,th{padding:.25rem .5rem;border-bottom:1px solid #e3e3e3;text-align:left}
th{background:#f6f8fa}
"""

MAX_CELLS = 24  # rows and columns of a heatmap drawn; larger patterns are cut (and the caption says so)
NAN_COLOUR = "#d6336c"  # a weight that was nan or inf (stored as -1)


def page(title: str, body: list[str], lang: str = "en") -> str:
    """A whole page: the language, the character set, a viewport for phones, the style."""
    return "\n".join([f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'>",
                      "<meta name='viewport' content='width=device-width, initial-scale=1'>",
                      f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
                      *body, "</body></html>"]) + "\n"


# ---------------------------------------------------------------- words

def markdown(text: str) -> str:
    """The little markdown the explanations use (`code`, *emphasis*, **strong**), as HTML;
    the text is escaped first, so nothing in it can become a tag."""
    out = []
    for i, part in enumerate(re.split(r"`([^`]*)`", text)):
        if i % 2:
            out.append(f"<code>{escape(part)}</code>")
        else:
            part = escape(part)
            part = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"<strong>\1</strong>", part)
            part = re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"<em>\1</em>", part)
            out.append(part)
    return "".join(out)


_CELL = re.compile(r"\bcell (\d+)\b")


def plain(text: str) -> str:
    """An engine message in the words a page shows (display only: results keep the original)."""
    # The engine numbers a notebook's cells from the top, markdown cells included.
    return _CELL.sub(lambda m: f"notebook cell {m.group(1)}", text)


def first_sentence(text: str, limit: int = 200) -> str:
    line = text.strip().split("\n", 1)[0]
    m = re.match(r"(.+?[.!?])(\s|$)", line)
    s = m.group(1) if m else line
    return s if len(s) <= limit else s[: limit - 1] + "…"


# ---------------------------------------------------------------- heatmaps and colours

def shade(v: float) -> str:
    """White at 0, deep blue at 1 (a single-hue scale: 0 reads as empty, not as grey)."""
    if v < 0 or v != v:
        return NAN_COLOUR
    return _SHADES[round(min(v, 1.0) * 1000)]


def _shade_of(v: float) -> str:
    lo, hi = (255, 255, 255), (8, 48, 107)
    return "#%02x%02x%02x" % tuple(round(a + (b - a) * v) for a, b in zip(lo, hi, strict=True))


# A page draws thousands of cells: the colours of 1001 steps, made once (finer than 8 bits shows).
_SHADES = [_shade_of(k / 1000) for k in range(1001)]


def heatmap_svg(weights: list[list[float]], title: str, row_axis: str = "query position",
                col_axis: str = "key position", scale: tuple[str, str] = ("0", "1"), vmax: float = 1.0) -> str:
    """A matrix of weights in [0, 1] as an SVG heatmap: axis titles, numbered rows and
    columns, a colour scale below; -1 (nan or inf) in its own colour. Cells are sized so the
    whole map is about 300 px wide (10 to 44 px a cell). ``vmax``: the value drawn darkest."""
    rows = [list(r[:MAX_CELLS]) for r in weights[:MAX_CELLS]]
    n_rows, n_cols = len(rows), max((len(r) for r in rows), default=0)
    if not n_rows or not n_cols:
        return ""
    cut = len(weights) > MAX_CELLS or any(len(r) > MAX_CELLS for r in weights)
    cell = max(10, min(44, 300 // max(n_rows, n_cols)))
    left, top = 44, 40
    w, h = left + n_cols * cell + 8, top + n_rows * cell + 58
    every = 1 if max(n_rows, n_cols) <= 12 else 2 if max(n_rows, n_cols) <= 24 else 5
    has_nan = any(v < 0 for r in rows for v in r)
    label = f"{title}: heatmap of {n_rows} by {n_cols} weights, rows are {row_axis}s, columns are {col_axis}s"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
           f'role="img" aria-label="{escape(label)}" font-family="system-ui,sans-serif" font-size="11" '
           f'class="heatmap"><title>{escape(label)}</title>',
           f'<text x="{left + n_cols * cell / 2:.0f}" y="12" text-anchor="middle" fill="#1f1f1f">'
           f'{escape(col_axis)} →</text>',
           f'<text transform="translate(11 {top + n_rows * cell / 2:.0f}) rotate(-90)" text-anchor="middle" '
           f'fill="#1f1f1f">← {escape(row_axis)}</text>']  # read upwards: the arrow points down
    for j in range(0, n_cols, every):
        out.append(f'<text x="{left + j * cell + cell / 2:.1f}" y="{top - 6}" text-anchor="middle" '
                   f'fill="#333">{j}</text>')
    for i in range(0, n_rows, every):
        out.append(f'<text x="{left - 4}" y="{top + i * cell + cell / 2 + 4:.1f}" text-anchor="end" '
                   f'fill="#333">{i}</text>')
    ra, ca = escape(row_axis), escape(col_axis)
    for i, r in enumerate(rows):
        for j in range(n_cols):
            v = r[j] if j < len(r) else 0.0
            shown = "nan or inf" if v < 0 else f"{v:.3f}"
            out.append(f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell}" height="{cell}" '
                       f'fill="{shade(v / vmax if v >= 0 else v)}" stroke="#c8c8c8" stroke-width="0.5">'
                       f'<title>{ra} {i}, {ca} {j}: {shown}</title></rect>')
    # The colour scale: ten steps from 0 to 1, and nan/inf when present.
    y = top + n_rows * cell + 14
    step = min(16, (n_cols * cell) // 10 or 10)
    for k in range(11):
        out.append(f'<rect x="{left + k * step}" y="{y}" width="{step}" height="10" fill="{shade(k / 10)}" '
                   f'stroke="#c8c8c8" stroke-width="0.5"/>')
    out.append(f'<text x="{left}" y="{y + 23}" fill="#333">{escape(scale[0])}</text>'
               f'<text x="{left + 11 * step}" y="{y + 23}" text-anchor="end" fill="#333">{escape(scale[1])}</text>')
    if has_nan:
        out.append(f'<rect x="{left + 11 * step + 10}" y="{y}" width="10" height="10" fill="{NAN_COLOUR}"/>'
                   f'<text x="{left + 11 * step + 24}" y="{y + 9}" fill="#333">nan/inf</text>')
    if cut:
        out.append(f'<text x="{left}" y="{y + 38}" fill="#333">first {MAX_CELLS} positions of '
                   f'{len(weights)} × {max(len(r) for r in weights)}</text>')
    out.append("</svg>")
    return "".join(out)


def figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>" if svg else ""


def map_words(exercise: str) -> MapWords:
    """How an exercise's maps are labelled (its declaration's ``map_words``)."""
    try:
        return declaration(exercise).map_words
    except ValueError:  # results of an exercise this course does not declare: plain labels
        return MapWords()


def heatmap_pair(exercise: str, heat: dict, mine: str = "your weights") -> str:
    """The student's map first, then the expected one: the order of the text's side-by-side
    ("yours", then "expected")."""
    words = map_words(exercise)
    scale, what = words.scale, words.what
    mine_caption = f"{mine} ({what})" if what else mine
    expected_caption = f"expected weights ({what})" if what else "expected weights"
    return ("<div class='maps'>"
            + figure(heatmap_svg(heat.get("got") or [], f"{exercise}: {mine}", scale=scale), mine_caption)
            + figure(heatmap_svg(heat.get("expected") or [], f"{exercise}: expected", scale=scale),
                     expected_caption)
            + "</div>")


# ---------------------------------------------------------------- one student's tests, read for display

class Said(NamedTuple):
    """What a failed check's message says besides its diagnosis: its own words, and the arrays
    it compared."""
    words: str
    comparison: Comparison | None

    def __bool__(self) -> bool:
        return bool(self.words or self.comparison)


def exercise_findings(exercise: str, tests: list[TestResult]) -> tuple[list[tuple[str, str]], dict[int, Said]]:
    """For one exercise: its diagnoses, each once ((mistake, explanation) in the order first
    met, with the numbers of the first test that quoted them, else the catalogue's words), and
    per failed test what else it says, a message already shown left empty."""
    mistakes: list[str] = []
    quoted: dict[str, str] = {}
    for t in tests:
        m = t.misconception
        if m and t.status == "failed" and m != "crashed":
            if m not in mistakes:
                mistakes.append(m)
            if t.finding.explanation:
                quoted.setdefault(m, t.finding.explanation)
    details: dict[int, Said] = {}
    seen: set[tuple[str, str]] = set()
    for k, t in enumerate(tests):
        if t.status == "passed":
            continue
        said = Said(t.detail.strip(), t.finding.comparison)
        key = (said.words, said.comparison.text() if said.comparison else "")
        details[k] = Said("", None) if key in seen else said
        seen.add(key)
    return [(m, quoted.get(m) or explain(m, func=exercise)) for m in mistakes], details


def printed_once(segments: list[str]) -> tuple[str, bool]:
    """What the code printed (``segments``: each process's, Results.printed_parts), with what
    the cells printed again after a restart (they run from the top once more) shown once; and
    whether anything was left out."""
    shown = segments[0]
    for seg in segments[1:]:
        if seg.startswith(shown):
            shown = seg
            continue
        common = len(_common_prefix(shown, seg))
        if common >= min(len(shown), len(seg)) // 2 and common:
            shown = shown + seg[common:]  # the rerun's repeat left out, what it printed anew kept
        else:
            shown = shown + "\n--- printed after a restart ---\n" + seg
    return shown, len(segments) > 1


def _common_prefix(a: str, b: str) -> str:
    import os.path

    return os.path.commonprefix([a, b])


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


def fix_line(exercise: str, tests: list[TestResult], diagnoses: list[tuple[str, str]],
             details: dict[int, Said]) -> str:
    """One line naming what went wrong in an exercise, as HTML."""
    if diagnoses:
        m, text = diagnoses[0]
        more = f" (and {len(diagnoses) - 1} more)" if len(diagnoses) > 1 else ""
        return f"<span class='tag'>{escape(label(m))}</span>{markdown(first_sentence(plain(text)))}{more}"
    failed = next(k for k, t in enumerate(tests) if t.status == "failed")
    t = tests[failed]
    said = details.get(failed)
    why = (said.words or (said.comparison.headline() if said.comparison else "")) if said else ""
    why = why or t.output
    if t.kind in NO_RESULT_KINDS:
        return f"<span class='tag bad'>crashed</span>{markdown(first_sentence(plain(why)))}"
    if t.misconception == "crashed":
        return f"<span class='tag bad'>raised an error</span>{markdown(first_sentence(plain(why)))}"
    return f"{escape(t.title)}: {markdown(first_sentence(plain(why)))}"


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


def detail_html(said: Said) -> str:
    """A check's message beyond its diagnosis: its words (a block that keeps the lines and
    columns a judge wrote), then the arrays compared, their counts as a sentence and the rows
    as a block that keeps its columns (and scrolls sideways inside itself on a narrow screen)."""
    out = []
    if said.words:
        lines = said.words.split("\n")
        if len(lines) == 1:
            out.append(f"<p class='why'>{escape(plain(lines[0]))}</p>")
        else:
            out.append(f"<pre class='said'>{escape(plain(said.words))}</pre>")
    if said.comparison is not None:
        out.append(f"<p class='why'>{escape(said.comparison.headline())}</p>")
        table = said.comparison.table()
        if table:
            out.append(f"<pre class='arrays'>{escape(table)}</pre>")
    return f"<div class='detail'>{''.join(out)}</div>"


def feedback_html(student: str, assignment: str, results: Results) -> str:
    """Everything from the submission or the results is HTML-escaped; the name is also made
    readable (a newline or a byte that is not UTF-8 shows as an escape)."""
    student = readable(student)
    problems, printed = [p for p in results.problems if p.strip()], results.printed
    groups = by_exercise(results)
    common = nothing_ran(results)
    body = [f"<h1>{escape(assignment)}: feedback for {escape(student)}</h1>"]
    findings = {e: exercise_findings(e, ts) for e, ts in groups.items()}

    # The verdict: the score, then what to fix.
    fixes = []
    for e, ts in groups.items():
        got, of = sum(t.score for t in ts), sum(t.max_score for t in ts)
        if got < of and not common:
            fixes.append(f"<li><a href='#ex-{escape(e)}'><code>{escape(e)}</code></a> "
                         f"<span class='muted'>({got:g} / {of:g})</span>: {fix_line(e, ts, *findings[e])}</li>")
    verdict = [f"<section class='verdict' aria-label='verdict'><p class='big'>{results.score:g} / "
               f"{results.max_score:g}</p>"]
    if common:
        why = "".join(f"<li>{markdown(plain(line))}</li>" for line in why_nothing_ran(results) if line.strip())
        verdict.append(f"<h2>What to fix</h2><p><strong>Nothing in your submission could be run</strong>, so no "
                       f"check could pass:</p><ul>{why}</ul>")
    elif fixes:
        verdict.append(f"<h2>What to fix</h2><ul>{''.join(fixes)}</ul>")
    else:
        verdict.append("<p class='pass'>Every check passed: nothing to fix.</p>")
    verdict.append("</section>")
    body += verdict
    if problems and not common:
        cells = {p.line(): p for p in results.cell_problems}  # the typed problem behind a line, where one is
        lines = "".join(f"<li>{markdown(plain(line))}{escape(related(cells.get(line), groups))}</li>"
                        for line in problems)
        body.append(f"<h2>About your submission</h2><ul>{lines}</ul>")

    for e, ts in groups.items():
        got, of = sum(t.score for t in ts), sum(t.max_score for t in ts)
        diagnoses, details = findings[e]
        body.append(f"<section id='ex-{escape(e)}'><h2><code>{escape(e)}</code>"
                    f"<span class='pts'>{got:g} / {of:g}</span></h2>")
        if common:
            body.append(f"<p class='muted'>{len(ts)} checks; none could run.</p></section>")
            continue
        for m, text in diagnoses:
            body.append(f"<p><span class='tag'>{escape(label(m))}</span>{markdown(plain(text))}</p>")
        with_map = [t for t in ts if isinstance(t.extra_data, dict) and t.extra_data.get("heatmap")]
        pictured = next((t for t in with_map if t.status == "failed"), with_map[0] if with_map else None)
        if pictured is not None:
            body.append(heatmap_pair(e, pictured.extra_data["heatmap"]))
        items = []
        for k, t in enumerate(ts):
            ok = t.status == "passed"
            mark = "<span class='pass'>✔ pass</span>" if ok else "<span class='fail'>✘ fail</span>"
            item = f"<li>{mark} {escape(t.title)} <small class='muted'>({t.score:g}/{t.max_score:g})</small>"
            detail = None if ok or common else details.get(k)
            if detail:
                item += detail_html(detail)
            items.append(item + "</li>")
        body.append(f"<ul class='checks'>{''.join(items)}</ul></section>")

    if printed.strip():
        once, again = printed_once(results.printed_parts())
        note = " (shown once, though the cells ran again after a restart)" if again else ""
        body.append(f"<details><summary>What your code printed{escape(note)}</summary>"
                    f"<pre>{escape(once)}</pre></details>")
    return page(f"{assignment}: {student}", body)
