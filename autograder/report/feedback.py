"""One student's feedback page: per exercise what passed, what failed and why, and the
expected attention pattern beside theirs, drawn as a grid of shaded cells."""
from __future__ import annotations

from html import escape

from ..misconceptions import explain, label
from ..names import readable
from ..results import Results

STYLE = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem} h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
.score{float:right;font-weight:600} .pass{color:#1a7f37} .fail{color:#c62828}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;font-size:.85rem;white-space:pre-wrap}
.tag{display:inline-block;background:#fff3cd;border:1px solid #e0c36c;border-radius:4px;padding:0 .4rem;font-size:.8rem}
.maps{display:flex;gap:2rem;margin:.5rem 0 1rem} .map{display:grid;gap:1px;background:#ccc;border:1px solid #ccc}
.map div{width:18px;height:18px} .cap{font-size:.8rem;text-align:center;margin-top:.2rem}
table{border-collapse:collapse} td,th{padding:.2rem .6rem;border-bottom:1px solid #eee;text-align:left}
"""
MAX_CELLS = 24  # rows and columns of a heatmap drawn; larger patterns are cut


def heatmap_html(weights: list[list[float]], caption: str) -> str:
    rows = [r[:MAX_CELLS] for r in weights[:MAX_CELLS]]
    n_cols = max((len(r) for r in rows), default=0)
    cells = []
    for r in rows:
        for v in r + [0.0] * (n_cols - len(r)):
            shade = "#888" if v < 0 else f"rgba(33,90,180,{min(max(v, 0.0), 1.0):.3f})"  # -1: nan/inf
            cells.append(f'<div style="background:{shade}" title="{v:.3f}"></div>')
    return (f'<div><div class="map" style="grid-template-columns:repeat({n_cols},18px)">{"".join(cells)}</div>'
            f'<div class="cap">{escape(caption)}</div></div>')


def feedback_html(student: str, assignment: str, results: Results) -> str:
    """Everything from the submission or the results is HTML-escaped; the name is also made
    readable (a newline or a byte that is not UTF-8 shows as an escape)."""
    student = readable(student)
    parts = [f"<!doctype html><meta charset='utf-8'><title>{escape(assignment)}: {escape(student)}</title>",
             f"<style>{STYLE}</style>",
             f"<h1>{escape(assignment)} feedback for {escape(student)}"
             f"<span class='score'>{results.score:g} / {results.max_score:g}</span></h1>"]
    if results.output.strip():
        parts.append(f"<h2>About your submission</h2><pre>{escape(results.output)}</pre>")
    by_exercise: dict[str, list] = {}
    for t in results.tests:
        by_exercise.setdefault(t.exercise, []).append(t)
    for exercise, tests in by_exercise.items():
        got, of = sum(t.score for t in tests), sum(t.max_score for t in tests)
        parts.append(f"<h2><code>{escape(exercise)}</code><span class='score'>{got:g} / {of:g}</span></h2>")
        mistakes = sorted({t.misconception for t in tests if t.misconception and t.status == "failed"})
        for m in mistakes:
            if m not in ("crashed", "not_implemented", "timeout"):
                parts.append(f"<p><span class='tag'>{escape(label(m))}</span> "
                             f"{escape(explain(m, func=exercise))}</p>")
        with_map = [t for t in tests if isinstance(t.extra_data, dict) and t.extra_data.get("heatmap")]
        pictured = next((t for t in with_map if t.status == "failed"), with_map[0] if with_map else None)
        for t in tests:
            ok = t.status == "passed"
            mark = "<span class='pass'>✔</span>" if ok else "<span class='fail'>✘</span>"
            parts.append(f"<p>{mark} {escape(t.title)} <small>({t.score:g}/{t.max_score:g})</small></p>")
            if not ok and t.output:
                parts.append(f"<pre>{escape(t.output)}</pre>")
            if t is pictured:
                heat = t.extra_data["heatmap"]
                parts.append("<div class='maps'>" + heatmap_html(heat["expected"], "expected weights")
                             + heatmap_html(heat["got"], "your weights") + "</div>")
    return "\n".join(parts) + "\n"
