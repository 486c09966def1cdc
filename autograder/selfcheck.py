"""What a released notebook's check cells call: the visible checks, run on the student's
own function, in the student's own kernel (no sandbox: it is their code on their machine).
No reference is loaded here and none is needed: visible checks are worked examples and
properties, judged with ``ref=None``. The grader runs the same checks, with the same
messages, on the same inputs, in its sandbox."""
from __future__ import annotations

import numpy as np

from . import misconceptions
from .assignments import exercise
from .checks import Check, run_judge
from .sandbox import call_one, frames


def visible_checks(name: str) -> list[Check]:
    """Exercise ``name``'s visible checks, on the inputs every notebook's check cell uses
    (the grader's ``--visible`` mode runs exactly these, so its messages are the cell's)."""
    return [check for check in exercise(name).checks(np.random.default_rng(0)) if check.visible]


def run_visible(name: str, func) -> list[tuple[str, bool, str, str | None]]:
    """(title, passed, message, misconception) for each visible check of exercise ``name``."""
    rows = []
    for check in visible_checks(name):
        # Through the wire, so a judge sees exactly the plain data it sees when grading.
        outcomes = frames.through_wire([call_one(func, c.args, c.kwargs, c.echo) for c in check.calls])
        verdict = run_judge(check, outcomes, None)
        rows.append((check.title, verdict.passed, verdict.message, verdict.misconception))
    return rows


def check(name: str, func) -> None:
    """Print which visible checks pass. A stub says so in one line and lets the notebook go
    on: an exception here would stop *Restart & Run All* before the later exercises' checks."""
    rows = run_visible(name, func)
    if rows and all(m == "not_implemented" for _, _, _, m in rows):
        print(f"{name} is not implemented yet: replace the `raise NotImplementedError()` line in its cell.")
        return
    passed = sum(ok for _, ok, _, _ in rows)
    mistakes = sorted({m for _, ok, _, m in rows if not ok and m})
    summary = f"{passed}/{len(rows)} checks pass"
    if mistakes:
        summary += ": " + ", ".join(misconceptions.label(m) for m in mistakes)
    print(summary)
    print("\n".join(check_line(ok, title, message) for title, ok, message, _ in rows))
    if passed == len(rows):
        print("More checks on random inputs decide the grade.")


def check_line(passed: bool, title: str, message: str = "", points: str = "") -> str:
    """One check as a notebook shows it: PASS or FAIL, its title, and why it failed."""
    line = f"  {'PASS' if passed else 'FAIL'}  {title}" + (f"  ({points})" if points else "")
    if passed or not message:
        return line
    return "\n".join([line] + ["        " + text for text in message.splitlines()])
