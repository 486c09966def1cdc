"""The instructor's view of a whole class: how each exercise went and which catalogued
mistakes how many students made, as charts (class.html) and as a few printed lines. Both
are drawn from a ``batch.BatchSummary``, the class already counted."""
from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ..misconceptions import explain
from .feedback import STYLE

if TYPE_CHECKING:
    from ..batch import BatchSummary

ABOUT_CODE = ("not_implemented", "timeout", "crashed")  # outcomes, not misunderstandings


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
        for m, students in list(mistakes.items())[:5]:
            lines.append(f"  {m:<22} {len(students):>3} student{'s' if len(students) > 1 else ' '} "
                         f"({100 * len(students) / n:.0f}%)")
    return "\n".join(lines)


def bar_chart_svg(title: str, labels: list[str], series: list[tuple[str, str, list[int]]], total: int) -> str:
    """Horizontal stacked bars as inline SVG: one row per label, one colour per series."""
    row, left, width = 26, 210, 420
    height = 40 + row * len(labels) + 24
    scale = width / max(total, 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" '
           f'font-family="system-ui,sans-serif" font-size="12" role="img" aria-label="{escape(title)}">',
           f'<text x="0" y="16" font-weight="600" font-size="14">{escape(title)}</text>']
    for i, label in enumerate(labels):
        y = 30 + i * row
        out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        x = left
        for name, colour, values in series:
            w = values[i] * scale
            if w > 0:
                out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 6}" fill="{colour}">'
                           f'<title>{escape(label)}: {values[i]} {escape(name)}</title></rect>')
                if w > 18:
                    out.append(f'<text x="{x + w / 2:.1f}" y="{y + 15}" fill="white" '
                               f'text-anchor="middle">{values[i]}</text>')
            x += w
    y = 30 + len(labels) * row + 14
    for j, (name, colour, _) in enumerate(series):
        if len(series) > 1:
            out.append(f'<rect x="{left + j * 150}" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
                       f'<text x="{left + j * 150 + 16}" y="{y}">{escape(name)}</text>')
    out.append(f'<text x="{left + width}" y="{y}" text-anchor="end" fill="#666">of {total} students</text></svg>')
    return "".join(out)


def _charts(summary: BatchSummary) -> tuple[str, str]:
    tallies = summary.exercises
    scores = bar_chart_svg("How each exercise went", list(tallies), [
        ("full marks", "#2e7d32", [t.full for t in tallies.values()]),
        ("partial", "#f9a825", [t.partial for t in tallies.values()]),
        ("zero", "#c62828", [t.zero for t in tallies.values()])], summary.students)
    counts = summary.mistakes
    names = list(counts)
    mistakes = bar_chart_svg("Catalogued mistakes (grey: unfinished code, code that hung or raised an error)", names, [
        ("misunderstanding", "#5c6bc0", [len(counts[m]) if m not in ABOUT_CODE else 0 for m in names]),
        ("unfinished, hung, raised an error", "#9e9e9e", [len(counts[m]) if m in ABOUT_CODE else 0 for m in names])],
        summary.students)
    return scores, mistakes


def class_html(summary: BatchSummary) -> str:
    scores_svg, mistakes_svg = _charts(summary)
    assignment = summary.assignment
    n = max(summary.students, 1)
    parts = [f"<!doctype html><meta charset='utf-8'><title>{escape(assignment)}: class report</title>",
             f"<style>{STYLE}</style>", f"<h1>{escape(assignment)}: class report ({summary.students} students)</h1>",
             f"<pre>{escape(summary_text(summary))}</pre>",
             f"<p>{scores_svg}</p>", f"<p>{mistakes_svg}</p>", "<h2>What the mistakes mean</h2><table>",
             "<tr><th>mistake</th><th>students</th><th>what it means</th></tr>"]
    for m, students in summary.mistakes.items():
        parts.append(f"<tr><td>{escape(m)}</td><td>{len(students)} ({100 * len(students) / n:.0f}%)</td>"
                     f"<td>{escape(explain(m, func='the function'))}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"
