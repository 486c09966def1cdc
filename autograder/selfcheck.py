"""What a released notebook's check cells call: the visible checks, run on the student's
own function, in the student's own kernel (no sandbox: it is their code on their machine).
No reference is loaded here and none is needed: visible checks are worked examples and
properties, judged with ``ref=None``. The grader runs the same checks, with the same
messages, on the same inputs, in its sandbox."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import misconceptions
from .assignments import exercise
from .checks import Check, run_judge
from .results import Finding, named_once
from .sandbox import call_one, frames
from .spec import Verdict


def visible_checks(name: str) -> list[Check]:
    """Exercise ``name``'s visible checks, on the inputs every notebook's check cell uses
    (the grader's ``--visible`` mode runs exactly these, so its messages are the cell's)."""
    return [check for check in exercise(name).checks(np.random.default_rng(0)) if check.visible]


def judged(name: str, func) -> list[tuple[str, Verdict]]:
    """(title, verdict) for each visible check of exercise ``name``."""
    rows = []
    for check in visible_checks(name):
        # Through the wire, so a judge sees exactly the plain data it sees when grading.
        outcomes = frames.through_wire([call_one(func, c.args, c.kwargs, c.echo) for c in check.calls])
        rows.append((check.title, run_judge(check, outcomes, None)))
    return rows


def run_visible(name: str, func) -> list[tuple[str, bool, str, str | None]]:
    """(title, passed, message, misconception) for each visible check of exercise ``name``."""
    return [(title, v.passed, v.message, v.misconception) for title, v in judged(name, func)]


def check(name: str, func) -> None:
    """Print which visible checks pass, under a line naming the exercise (a cell may check
    several functions), each diagnosis once. A stub says so in one line and lets the notebook
    go on: an exception here would stop *Restart & Run All* before the later exercises' checks."""
    verdicts = judged(name, func)
    if verdicts and all(v.misconception == "not_implemented" for _, v in verdicts):
        print(f"{name} is not implemented yet: replace the `raise NotImplementedError()` line in its cell.")
        return
    shown = [Shown(title, v.passed, v.message, v.misconception, v.finding) for title, v in verdicts]
    passed = sum(s.passed for s in shown)
    print("\n".join([summary(name, f"{passed}/{len(shown)} checks pass", shown), *check_lines(shown)]))
    if passed == len(shown):
        print("More checks on random inputs decide the grade.")


class Shown(NamedTuple):
    """One check as a notebook shows it: the check cell's (a Verdict's) or the grader's (a TestResult's)."""
    title: str
    passed: bool
    message: str  # whole: the diagnosis, then what else the check says
    misconception: str | None
    finding: Finding | None
    points: str = ""


def summary(name: str, counted: str, shown: list[Shown]) -> str:
    """The block's first line: the exercise, how its checks went, the mistakes they name."""
    named = [m for m, _ in named_once((s.misconception, s.finding) for s in shown if not s.passed and s.misconception)]
    return f"{name}: {counted}" + (": " + ", ".join(misconceptions.label(m) for m in named) if named else "")


def diagnoses(shown: list[Shown]) -> dict[str, str]:
    """Each named mistake's explanation, once, with the numbers of the first check that quoted
    it, in the feedback page's order (results.named_once)."""
    return dict(named_once((s.misconception, s.finding) for s in shown if _diagnosed(s)))


def _diagnosed(s: Shown) -> bool:
    return not s.passed and bool(s.misconception) and s.finding is not None and bool(s.finding.explanation)


def check_lines(shown: list[Shown]) -> list[str]:
    """The diagnoses, each once, then every check: a failed check whose diagnosis is above
    says only what else it found."""
    lines = [_indented(f"The likely mistake ({misconceptions.label(m)}): {text}", "  ")
             for m, text in diagnoses(shown).items()]
    for s in shown:
        if _diagnosed(s):
            f = s.finding
            rest = "\n".join(x for x in (f.detail or "", f.comparison.text() if f.comparison else "") if x)
            lines.append(check_line(False, s.title, rest or "(the likely mistake above)", s.points))
        else:
            lines.append(check_line(s.passed, s.title, s.message, s.points))
    return lines


def _indented(text: str, first: str) -> str:
    head, *more = text.splitlines() or [""]
    return "\n".join([first + head] + ["    " + line for line in more])


def check_line(passed: bool, title: str, message: str = "", points: str = "") -> str:
    """One check as a notebook shows it: PASS or FAIL, its title, and why it failed."""
    line = f"  {'PASS' if passed else 'FAIL'}  {title}" + (f"  ({points})" if points else "")
    if passed or not message:
        return line
    return "\n".join([line] + ["        " + text for text in message.splitlines()])
