"""The instructor's view of a whole class: how each exercise went and which catalogued
mistakes how many students made, as charts (class.html) and as a few printed lines."""
from __future__ import annotations

from html import escape

from ..misconceptions import explain
from .feedback import STYLE

ABOUT_CODE = ("not_implemented", "timeout", "crashed")  # outcomes, not misunderstandings


def mistake_counts(rows: list[dict]) -> dict[str, list[str]]:
    """misconception id -> the students who made it, most common first."""
    counts: dict[str, list[str]] = {}
    for row in rows:
        for m in row["misconceptions"]:
            counts.setdefault(m, []).append(row["student"])
    return dict(sorted(counts.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def exercise_outcomes(rows: list[dict], exercises: tuple[str, ...], points: dict[str, float]) -> dict[str, tuple]:
    """exercise -> (students with full marks, with some, with none)."""
    out = {}
    for e in exercises:
        got = [r["exercises"].get(e, 0) for r in rows]
        out[e] = (sum(g == points[e] for g in got), sum(0 < g < points[e] for g in got), sum(g == 0 for g in got))
    return out


def summary_text(assignment: str, rows: list[dict], exercises, points) -> str:
    n = len(rows)
    if not n:
        return f"{assignment}: no submissions."
    total = sum(points.values())
    mean = sum(r["score"] for r in rows) / n
    lines = [f"{assignment}: {n} students, mean {mean:.1f} / {total:g}"]
    for e, (full, some, none) in exercise_outcomes(rows, exercises, points).items():
        lines.append(f"  {e:<30} full {full:>3}  partial {some:>3}  zero {none:>3}")
    mistakes = {m: s for m, s in mistake_counts(rows).items() if m not in ABOUT_CODE}
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
                    out.append(f'<text x="{x + w / 2:.1f}" y="{y + 15}" fill="white" text-anchor="middle">{values[i]}</text>')
            x += w
    y = 30 + len(labels) * row + 14
    for j, (name, colour, _) in enumerate(series):
        if len(series) > 1:
            out.append(f'<rect x="{left + j * 150}" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
                       f'<text x="{left + j * 150 + 16}" y="{y}">{escape(name)}</text>')
    out.append(f'<text x="{left + width}" y="{y}" text-anchor="end" fill="#666">of {total} students</text></svg>')
    return "".join(out)


def _charts(rows, exercises, points) -> tuple[str, str]:
    outcomes = exercise_outcomes(rows, exercises, points)
    scores = bar_chart_svg("How each exercise went", list(exercises), [
        ("full marks", "#2e7d32", [outcomes[e][0] for e in exercises]),
        ("partial", "#f9a825", [outcomes[e][1] for e in exercises]),
        ("zero", "#c62828", [outcomes[e][2] for e in exercises])], len(rows))
    counts = mistake_counts(rows)
    names = list(counts)
    mistakes = bar_chart_svg("Catalogued mistakes (grey: unfinished, hung or crashed code)", names, [
        ("misunderstanding", "#5c6bc0", [len(counts[m]) if m not in ABOUT_CODE else 0 for m in names]),
        ("unfinished, hung, crashed", "#9e9e9e", [len(counts[m]) if m in ABOUT_CODE else 0 for m in names])],
        len(rows))
    return scores, mistakes


def class_html(assignment: str, rows: list[dict], exercises: tuple[str, ...], points: dict[str, float]) -> str:
    scores_svg, mistakes_svg = _charts(rows, exercises, points)
    n = max(len(rows), 1)
    parts = [f"<!doctype html><meta charset='utf-8'><title>{escape(assignment)}: class report</title>",
             f"<style>{STYLE}</style>", f"<h1>{escape(assignment)}: class report ({len(rows)} students)</h1>",
             f"<pre>{escape(summary_text(assignment, rows, exercises, points))}</pre>",
             f"<p>{scores_svg}</p>", f"<p>{mistakes_svg}</p>", "<h2>What the mistakes mean</h2><table>",
             "<tr><th>mistake</th><th>students</th><th>what it means</th></tr>"]
    for m, students in mistake_counts(rows).items():
        parts.append(f"<tr><td>{escape(m)}</td><td>{len(students)} ({100 * len(students) / n:.0f}%)</td>"
                     f"<td>{escape(explain(m, func='the function'))}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"
