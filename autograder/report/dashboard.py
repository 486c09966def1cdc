"""The lecturer's page for one graded assignment (``OUTDIR/class.html``), and the printed summary.

Built at the end of a batch from the ``BatchSummary`` and the students' results files in
OUTDIR (so it is the same whether or not the batch was interrupted), it shows: when and how
the class was graded; the submissions that need a look (unreadable, hung, crashed, not
graded) by name; a score histogram and how each exercise went; per catalogued mistake, who
made it in which exercise, explained about the student; a class-average attention heatmap
per exercise that produces weights; and a sortable roster linking every feedback page. It
links the index of every problem set graded beside it (index.py).

It is one self-contained file (templates/dashboard.html.j2): inline CSS and SVG, one small
inline script that sorts the roster (without it the roster stays sorted by name), nothing
loaded from elsewhere, so it opens from the file system. The template escapes every name
and text it prints.
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata
import statistics
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

import numpy as np
from markupsafe import Markup

from ..class_results import BatchSummary, Failure, StudentRow, results_path
from ..misconceptions import Audience, explain, known, label
from ..names import file_stem, one_line, readable
from ..results import Results, from_json, write_atomic
from . import charts
from .feedback import ABOUT_CODE, by_exercise, nothing_ran, why_nothing_ran
from .index import write_set_index
from .outcomes import OUTCOMES, TIMEOUT, outcome
from .render import render
from .svg import drawn

BROKEN = ("unreadable", "hung", "ended", "not graded")  # the kinds of flag listed by name at the top
HEADINGS = {"unreadable": "Could not be read (nothing in them ran)",
            "hung": "Hung (ran past the time limit)",
            "ended": "Crashed, exited or killed (no result came back from their process)",
            "not graded": "Not graded: the grader itself failed (no grade stored; run the same command again)"}


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


# ---------------------------------------------------------------- words about the student

def mistake_meaning(mistake: str, exercise: str) -> str:
    """A mistake explained about the student: the course's template in the instructor's words
    (misconceptions.WORDS); an outcome in which the code gave no answer in outcomes.py's."""
    if mistake in OUTCOMES:
        return "The student " + OUTCOMES[mistake].about
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
    # (exercise, mistake) of each failed test that names one: a catalogued mistake's id, or for
    # code that gave no answer, its outcome's (outcomes.OUTCOMES: "raised", "exited", ...)
    mistakes: tuple[tuple[str, str], ...]
    isolation: str

    @classmethod
    def of(cls, results: Results) -> "Marks":
        extra = results.extra_data if isinstance(results.extra_data, dict) else {}
        made = []
        for t in results.tests:
            if t.status == "failed" and t.misconception:
                ended = outcome(t) if t.misconception in ABOUT_CODE else None
                made.append((t.exercise, ended.key if ended else t.misconception))
        return cls(results.score, results.exercise_scores(), tuple(made), str(extra.get("isolation", "?")))


class Flag(NamedTuple):
    """What is wrong with a submission beyond its mistakes."""
    kind: str  # BROKEN's, or "error", "unfinished", "problems"
    words: str  # the badge
    why: str  # one line


@dataclass
class Student:
    name: str  # the raw name (the key); shown through readable()
    marks: Marks | None  # None: not graded (the grader failed)
    flags: list[Flag] = field(default_factory=list)

    @property
    def shown(self) -> str:
        return readable(self.name)

    @property
    def href(self) -> str:
        return f"feedback/{quote(file_stem(self.name))}.html"

    @property
    def broken(self) -> bool:
        return any(f.kind in BROKEN for f in self.flags)

    @property
    def caught(self) -> list[str]:
        """The catalogued mistakes the roster shows beside the flags, not the outcomes (the
        flags say those): each once and sorted, ignoring case (as Jinja's unique and sort,
        which the roster used, compare)."""
        if self.marks is None:
            return []
        once: dict[str, str] = {}
        for _, m in self.marks.mistakes:
            if m not in OUTCOMES:
                once.setdefault(m.lower(), m)
        return sorted(once.values(), key=str.lower)


def flags_of(results: Results) -> list[Flag]:
    """What is wrong with a submission beyond its mistakes, each with one line of why; one
    flag per kind, the words and reasons of several exercises together."""
    if nothing_ran(results):
        return [Flag("unreadable", "unreadable", one_line(why_nothing_ran(results)[0], 200))]
    flags: list[Flag] = []
    for e, tests in by_exercise(results).items():
        ends = [(t, outcome(t)) for t in tests if t.status == "failed"]
        if any(o is TIMEOUT for _, o in ends):
            flags.append(Flag("hung", "hung", f"{e} ran past the time limit"))
        died = next(((t, o) for t, o in ends if o is not None and o.broken and o is not TIMEOUT), None)
        if died is not None:
            flags.append(Flag("ended", died[1].badge, one_line(died[0].output, 200)))
        elif any(o is not None and o.key == "raised" for _, o in ends):
            flags.append(Flag("error", "raised an error", f"{e} raised an error"))
        if any(o is not None and o.key == "not_implemented" for _, o in ends):
            flags.append(Flag("unfinished", "unfinished", f"{e} not implemented"))
    problems = [p for p in results.problems if p.strip()]
    if problems:
        flags.append(Flag("problems", "problems", one_line(problems[0], 200)))
    merged: dict[str, list[Flag]] = {}
    for f in flags:
        merged.setdefault(f.kind, []).append(f)
    return [Flag(kind, ", ".join(dict.fromkeys(f.words for f in fs)), "; ".join(f.why for f in fs))
            for kind, fs in merged.items()]


@dataclass(frozen=True)
class Seen:
    """What the dashboard keeps of one student's results: their marks and flags, and each
    heatmap as (exercise, check, the heatmap's {"expected", "got"})."""
    student: Student
    maps: tuple[tuple[str, str, dict], ...]

    @classmethod
    def of(cls, student: str, results: Results) -> "Seen":
        return cls(Student(student, Marks.of(results), flags_of(results)),
                   tuple((t.exercise, t.name, t.extra_data["heatmap"]) for t in results.tests
                         if isinstance(t.extra_data, dict) and isinstance(t.extra_data.get("heatmap"), dict)))


class ClassReader:
    """The class as its results files say: each graded student's marks and flags, and each
    exercise's heatmaps, summed. Each student is taken once: as grade-batch's workers saw their
    results (``add``: the worker that wrote the file sends what the page keeps of it, so this
    process need not read it back), or read from their file when asked for (``read``: a
    student graded by an earlier run). One results file is in memory at a time, so the page
    costs the same memory for any class size."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.students: dict[str, Student] = {}
        self.maps: dict[str, MapTally] = {}

    def read(self, student: str) -> None:
        if student in self.students:
            return
        try:
            results = from_json(results_path(self.out, student).read_text())
        except (OSError, ValueError, TypeError, KeyError):
            return
        self.add(Seen.of(student, results))

    def add(self, seen: Seen) -> None:
        if seen.student.name in self.students:
            return
        self.students[seen.student.name] = seen.student
        for exercise, check, heatmap in seen.maps:
            self.maps.setdefault(exercise, MapTally()).add(check, heatmap)

    def load(self, rows: list[StudentRow], failures: list[Failure]) -> tuple[list[Student], dict[str, MapTally]]:
        """Every student: the graded ones (``rows``, each read now unless it was already), then
        those the grader failed on; and each exercise's heatmaps, summed over the graded."""
        for row in rows:
            self.read(row.student)
        graded = {row.student for row in rows}
        if set(self.students) - graded:
            raise ValueError("read a student who has no row: the heatmaps would count them")
        students = [self.students[s] for s in graded if s in self.students]
        for f in failures:
            students.append(Student(f.student, None, [Flag("not graded", "not graded",
                                                           f"the grader failed: {one_line(f.reason, 200)}")]))
        return sorted(students, key=lambda s: s.name), self.maps


def load_class(out: Path, rows: list[StudentRow], failures: list[Failure]
               ) -> tuple[list[Student], dict[str, MapTally]]:
    """Every student (``ClassReader.load``), every results file read now."""
    return ClassReader(out).load(rows, failures)


# ---------------------------------------------------------------- the class's attention weights

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


class ClassMaps(NamedTuple):
    """One exercise's averaged maps on the page."""
    exercise: str
    note: str  # which check, over how many students
    figures: list[tuple[Markup | None, str]]  # (heatmap drawn, caption)


def class_average_maps(tally: MapTally | None, exercise: str) -> ClassMaps | None:
    """The class's attention weights in one exercise, averaged: for the check most students
    have a heatmap for, over the students whose map has the most common shape and no nan."""
    if tally is None or not tally.checks:
        return None
    # A check whose expected weights are the same for every student (a worked example, public
    # inputs) averages into a picture of what the class did; otherwise the most common check.
    checks = tally.checks
    name = max(checks, key=lambda n: (checks[n].same and checks[n].count > 1, checks[n].count, n))
    chosen = checks[name]
    if not chosen.shapes:
        return None
    shape = max(chosen.shapes, key=lambda k: chosen.shapes[k].n)  # the first seen of the most common
    sums = chosen.shapes[shape]
    if not shape[0] or not sums.finite:
        return None
    got, expected = (sums.got / sums.finite).tolist(), (sums.expected / sums.finite).tolist()
    off = (sums.off / sums.finite).tolist()
    top = max(max(max(r) for r in off), 0.05)  # below that the differences are noise: near white
    check = name.split(": ", 1)[-1]
    note = (f"Check “{check}”{' (the same inputs for everyone)' if chosen.same else ''}, "
            f"{sums.finite} students with {shape[0]} × {shape[1]} weights"
            + (f" ({sums.n - sums.finite} with nan left out)" if sums.finite < sums.n else "") + ".")
    pictures = drawn([charts.heatmap(got, f"{exercise}: class average"),
                      charts.heatmap(expected, f"{exercise}: expected"),
                      charts.heatmap(off, f"{exercise}: where the class is off", vmax=top, scale=("0", f"{top:.2g}"))])
    return ClassMaps(exercise, note, list(zip(pictures, [
        "class average of the students' weights",
        "expected weights" if chosen.same else "expected weights, averaged over the same inputs",
        "where the class is off: mean |student − expected| (its own scale)"], strict=True)))


def _shape(m) -> tuple[int, int]:
    if not isinstance(m, list) or not m or not all(isinstance(r, list) for r in m):
        return (0, 0)
    widths = {len(r) for r in m}
    return (len(m), widths.pop()) if len(widths) == 1 else (0, 0)



# ---------------------------------------------------------------- the page

class Mistake(NamedTuple):
    """One mistake, or one way code gave no answer, and who made it in which exercise."""
    key: str
    badge: str
    bad: bool  # an outcome in which the code gave no answer, not a misunderstanding
    count: int  # students
    meaning: str  # markdown, about the student
    where: dict[str, list[Student]]  # exercise -> who


def mistakes_made(graded: list[Student]) -> list[Mistake]:
    """The catalogued mistakes, most students first, then the outcomes (outcomes.py)."""
    made: dict[str, dict[str, list[Student]]] = {}
    for s in graded:
        for e, m in s.marks.mistakes:
            who = made.setdefault(m, {}).setdefault(e, [])
            # Once each: a student's mistakes come one after another, so they are the last listed
            # if they are there at all (``s not in who`` compared each with every one before:
            # quadratic in the students who made the mistake, seconds for a few thousand).
            if not who or who[-1] is not s:
                who.append(s)
    out = []
    for m, where in made.items():
        count = len({s.name for who in where.values() for s in who})
        ended = OUTCOMES.get(m)
        out.append(Mistake(m, ended.badge if ended else label(m), ended is not None, count,
                           mistake_meaning(m, next(iter(where))), where))
    return sorted(out, key=lambda k: (k.bad, -k.count, k.key))


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




def dashboard_html(summary: BatchSummary, students: list[Student], maps: dict[str, MapTally],
                   settings: dict[str, str], graded: str, version: str, integrity: bool = False) -> str:
    """``integrity``: OUTDIR has an integrity.html (``autograder integrity``) to link; this page is
    the instructor's, so it may (a student's feedback page never does)."""
    exercises = list(summary.exercises)
    graded_ones = [s for s in students if s.marks is not None]
    scores = [s.marks.score for s in graded_ones]
    n = len(graded_ones)
    line = (f"{n} graded, mean {summary.mean:.1f} / {summary.max_score:g}"
            + (f", {len(students) - n} not graded" if len(students) > n else ""))
    tallies = summary.exercises
    bars = charts.stacked_bars("How each exercise went", exercises, [
        ("full marks", "#17692e", [t.full for t in tallies.values()]),
        ("partial", "#f2b01e", [t.partial for t in tallies.values()]),
        ("zero", "#b3261e", [t.zero for t in tallies.values()])], n)
    broken = [(heading, [(s, f) for s in students for f in s.flags if f.kind == kind])
              for kind, heading in HEADINGS.items()]
    return render("dashboard.html.j2", summary=summary, line=line, graded=graded, version=version,
                  integrity=integrity, n=n, students=students, exercises=exercises,
                  median=statistics.median(scores) if scores else 0,
                  full=sum(1 for s in scores if s == summary.max_score),
                  needs_look=sum(1 for s in students if s.broken), need_look=[b for b in broken if b[1]],
                  broken_kinds=BROKEN,
                  histogram=charts.histogram(scores, summary.max_score), bars=bars,
                  mistakes=mistakes_made(graded_ones),
                  averages=[m for m in (class_average_maps(maps.get(e), e) for e in exercises) if m is not None],
                  settings=settings)


def write_dashboard(out: Path, summary: BatchSummary, rows: list[StudentRow], failures: list[Failure] = (), *,
                    root: Path | None = None, timeout: float | None = None, jobs: int | None = None,
                    grading: dict[str, str] | None = None, reader: ClassReader | None = None) -> Path:
    """Write ``out/class.html`` and ``out/index.html`` (and again the index of each set graded
    beside it: index.write_set_index); return the index's path (the page to open).
    ``grading``: where the class was graded, as settings lines (the pool's describe()).
    ``reader``: the results files of ``out`` read so far (grade-batch's, as it graded)."""
    out = Path(out)
    students, maps = (reader or ClassReader(out)).load(rows, list(failures))
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
    return write_set_index(out)

