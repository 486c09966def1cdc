"""The instructor's view of a whole class: how each exercise went and which catalogued
mistakes how many students made, as charts (class.html) and as a few printed lines."""
from __future__ import annotations

import base64
import io
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
            lines.append(f"  {m:<22} {len(students):>3} students ({100 * len(students) / n:.0f}%)")
    return "\n".join(lines)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _charts(rows, exercises, points) -> tuple[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    outcomes = exercise_outcomes(rows, exercises, points)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(exercises) + 1))
    left = [0] * len(exercises)
    for i, (label, color) in enumerate((("full marks", "#2e7d32"), ("partial", "#f9a825"), ("zero", "#c62828"))):
        widths = [outcomes[e][i] for e in exercises]
        ax.barh(list(exercises), widths, left=left, color=color, label=label)
        left = [a + b for a, b in zip(left, widths)]
    ax.invert_yaxis()
    ax.set_xlabel("students")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.6 / len(exercises)), ncol=3, fontsize=8, frameon=False)
    ax.set_title("How each exercise went")
    scores_png = _png(fig)
    plt.close(fig)

    counts = mistake_counts(rows)
    fig, ax = plt.subplots(figsize=(7, 0.4 * max(len(counts), 1) + 1))
    names = list(counts) or ["(none)"]
    ax.barh(names, [len(counts.get(m, [])) for m in names],
            color=["#9e9e9e" if m in ABOUT_CODE else "#5c6bc0" for m in names])
    ax.invert_yaxis()
    ax.set_xlabel("students")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Catalogued mistakes (grey: unfinished, hung or crashed code)")
    mistakes_png = _png(fig)
    plt.close(fig)
    return scores_png, mistakes_png


def class_html(assignment: str, rows: list[dict], exercises: tuple[str, ...], points: dict[str, float]) -> str:
    scores_png, mistakes_png = _charts(rows, exercises, points)
    n = max(len(rows), 1)
    parts = [f"<!doctype html><meta charset='utf-8'><title>{escape(assignment)}: class report</title>",
             f"<style>{STYLE}</style>", f"<h1>{escape(assignment)}: class report ({len(rows)} students)</h1>",
             f"<pre>{escape(summary_text(assignment, rows, exercises, points))}</pre>",
             f"<img alt='outcomes per exercise' src='{scores_png}'>",
             f"<img alt='mistakes' src='{mistakes_png}'>", "<h2>What the mistakes mean</h2><table>",
             "<tr><th>mistake</th><th>students</th><th>what it means</th></tr>"]
    for m, students in mistake_counts(rows).items():
        parts.append(f"<tr><td>{escape(m)}</td><td>{len(students)} ({100 * len(students) / n:.0f}%)</td>"
                     f"<td>{escape(explain(m, func='the function'))}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"
