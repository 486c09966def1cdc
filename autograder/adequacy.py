"""How adequate a course's checks are: each catalogued mistake against each check it meets.

For course authors. A catalogued mistake (solutions/mistakes.py) reaches its own exercise and
every exercise whose reference calls the edited function (a wrong softmax makes attention
wrong too). For each exercise it reaches, the matrix says which of its checks fail, visible
and hidden, and which of them name the mistake, over several students' draws: a hidden
check's inputs are drawn per student, so its verdict could depend on the draw, and a wrong
answer must lose the same points whatever the student's seed.

A mistake that passes every visible check of an exercise it reaches is *blind* there: the
student learns of it from the grade alone, or, where no hidden check fails either, not at
all. The course owes each such pair a visible check, unless the catalogue entry says why
none can exist there (``visible_blind``: a mistake that changes nothing the exercise
computes, say, or one that shows only on inputs no check can afford).

Everything runs in this process, on the course's own reference and catalogue (trusted code,
as in reference.py), with the judges the grader uses: the visible checks on the notebook's
inputs without the reference (as a notebook's check cell runs them), the hidden ones on each
student's inputs with it. Nothing here names a course.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from . import misconceptions, reference
from .assignments import ASSIGNMENTS, exercise
from .checks import Check, run_judge
from .errors import GraderError
from .sandbox import call_one, frames

STUDENTS = 8  # draws per hidden check: enough that a verdict which depends on the draw shows


@dataclass(frozen=True)
class Cell:
    """One check, for one mistake in one exercise, over the students' draws."""
    title: str
    visible: bool
    points: float
    failed: int  # students whose draw fails it (a visible check: all or none)
    named: int  # of those, the ones whose verdict names the mistake's id
    students: int
    # The catalogued ids (not the engine's own outcomes, a crash say) that failing verdicts
    # named instead: each a wrong diagnosis, since a mistake is named only by its own output.
    misnamed: tuple[str, ...] = ()

    @property
    def mark(self) -> str:
        """``N`` fails naming it, ``x`` fails without naming it, ``.`` passes; ``3/8`` on some draws."""
        if not self.failed:
            return "."
        symbol = "N" if self.named == self.failed else "x" if not self.named else "n"
        return symbol if self.failed == self.students else f"{symbol}{self.failed}/{self.students}"


@dataclass(frozen=True)
class Row:
    """A catalogued mistake in one exercise it reaches."""
    mistake: str  # the entry's name, <id>:<exercise>[:<label>]
    id: str
    exercise: str
    inherited: bool  # reached through a function the exercise calls
    blind_reason: str  # the entry's visible_blind: why no visible check can see it ('' if none)
    cells: tuple[Cell, ...]
    lost: tuple[float, ...]  # points lost, per student

    @property
    def visible_fails(self) -> bool:
        return any(c.failed for c in self.cells if c.visible)

    @property
    def visible_names(self) -> bool:
        return any(c.named for c in self.cells if c.visible)

    @property
    def costs(self) -> bool:
        """It loses points for some student."""
        return any(self.lost)

    @property
    def misnamed(self) -> tuple[tuple[str, str], ...]:
        """(check, id) for each check that named another catalogued mistake than this one."""
        return tuple((c.title, m) for c in self.cells for m in c.misnamed)

    @property
    def blind(self) -> bool:
        """Every visible check passes: a student learns of it from the grade alone, or (where
        nothing fails at all) not at all."""
        return not self.visible_fails

    @property
    def stable(self) -> bool:
        """Every student loses the same points (within rounding of the points' sum)."""
        return max(self.lost) - min(self.lost) < 1e-9


@dataclass(frozen=True)
class Matrix:
    rows: tuple[Row, ...]
    students: int

    @cached_property
    def blind(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.blind)

    @cached_property
    def unstable(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if not r.stable)

    @cached_property
    def misnamed(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.misnamed)

    def for_mistake(self, name: str) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.mistake == name)


def student_names(n: int) -> list[str]:
    return [f"adequacy-{k}" for k in range(n)]


def judged(check: Check, func: Callable, ref) -> tuple[bool, str | None]:
    """Run one check on ``func`` in this process, as the grader judges it: (passed, misconception)."""
    outcomes = frames.through_wire([call_one(func, c.args, c.kwargs, c.echo) for c in check.calls])
    verdict = run_judge(check, outcomes, ref)
    return verdict.passed, verdict.misconception


def compute(students: int = STUDENTS, mistakes: tuple[str, ...] | None = None) -> Matrix:
    """The matrix for the current course: every catalogued mistake (or those named) in every
    exercise it reaches, over ``students`` students' draws. Fails closed (GraderError) when
    the reference itself fails a check: a matrix measured against a wrong answer means nothing."""
    from .grade import plan  # the students' draws, exactly as grading makes them
    from .selfcheck import visible_checks

    ref_data = reference.load()
    names = student_names(students)
    plans = {(a, s): plan(a, s) for a in ASSIGNMENTS for s in names}
    answers = {key: reference.Answers(ref_data) for key in plans}  # one grade's cache of the reference's outputs
    set_of = {name: a for a in ASSIGNMENTS for name in ASSIGNMENTS[a]}
    for (a, s), checks in plans.items():
        for name, cs in checks.items():
            for check in cs:
                ok, _ = judged(check, ref_data.solution(name), None if check.visible else answers[a, s])
                if not ok:
                    raise GraderError(f"the reference fails {check.name!r} for student {s}: fix the check first")
    rows = []
    for entry in ref_data.catalogue:
        if mistakes is not None and entry.name not in mistakes:
            continue
        for name, func in ref_data.reaches[entry.name].items():
            if name not in set_of:
                continue  # a helper of the solutions, not an exercise
            visible = [judged(c, func, None) for c in visible_checks(name)]
            hidden = [[judged(c, func, answers[set_of[name], s]) for c in plans[set_of[name], s][name]
                       if not c.visible] for s in names]
            rows.append(_row(entry, name, visible, hidden, students))
    return Matrix(tuple(rows), students)


def _row(entry, name: str, visible: list, hidden: list[list], students: int) -> Row:
    specs = exercise(name).specs
    shown = iter(visible)
    per_student = [iter(h) for h in hidden]
    cells, lost = [], [0.0] * students
    for spec in specs:
        if spec.visible:
            ok, named = next(shown)
            verdicts = [(ok, named)] * students
        else:
            verdicts = [next(it) for it in per_student]
        for k, (ok, _) in enumerate(verdicts):
            lost[k] += 0.0 if ok else spec.points
        failed = [named for ok, named in verdicts if not ok]
        others = tuple(sorted({n for n in failed if n and n != entry.id and n not in misconceptions.OWN}))
        cells.append(Cell(spec.title, spec.visible, spec.points, len(failed),
                          sum(named == entry.id for named in failed), students, others))
    return Row(entry.name, entry.id, name, name != entry.func, entry.blind_reason(name), tuple(cells), tuple(lost))


# ---------------------------------------------------------------- what an author reads

def summary(matrix: Matrix) -> str:
    blind = matrix.blind
    costly = [r for r in blind if r.costs]
    excused = [r for r in blind if r.blind_reason]
    named = [r for r in matrix.rows if r.visible_names]
    return (f"{len(matrix.rows)} (mistake, exercise) pairs over {matrix.students} students' draws: "
            f"{len(matrix.rows) - len(blind)} fail a visible check ({len(named)} name the mistake there); "
            f"{len(blind)} pass every visible check ({len(costly)} of them cost points, "
            f"{len(excused)} declared visible_blind); {len(matrix.unstable)} lose points that depend on the draw; "
            f"{len(matrix.misnamed)} are named as another mistake.")


def text(matrix: Matrix) -> str:
    """One block per exercise: its checks as columns (v visible, h hidden), a line per mistake."""
    out = ["Marks: N fails and names the mistake, x fails naming another or none, n both on different draws, "
           ". passes; k/n: on k of n students' draws. (inherited): reached through a function it calls.", ""]
    for name in dict.fromkeys(r.exercise for r in matrix.rows):
        rows = [r for r in matrix.rows if r.exercise == name]
        specs = exercise(name).specs
        out.append(f"{name}")
        out += [f"  {i + 1:>2} {'v' if s.visible else 'h'} {s.points:g} pt  {s.title}" for i, s in enumerate(specs)]
        width = max(len(r.mistake) + (12 if r.inherited else 0) for r in rows)
        out.append("  " + " " * width + "  " + " ".join(f"{i + 1:>4}" for i in range(len(specs))) + "   lost")
        for r in rows:
            label = r.mistake + (" (inherited)" if r.inherited else "")
            flags = ("  BLIND" + (f" (declared: {r.blind_reason})" if r.blind_reason else "")) if r.blind else ""
            flags += "  UNSTABLE" if not r.stable else ""
            flags += "".join(f"  NAMED {m} (check {title!r})" for title, m in r.misnamed)
            lost = f"{min(r.lost):g}" if r.stable else f"{min(r.lost):g}..{max(r.lost):g}"
            out.append(f"  {label:<{width}}  " + " ".join(f"{c.mark:>4}" for c in r.cells) + f"   {lost:>4}{flags}")
        out.append("")
    out.append(summary(matrix))
    return "\n".join(out) + "\n"


CSV_COLUMNS = ("mistake", "id", "exercise", "inherited", "check", "visible", "points", "failed", "named",
               "students", "misnamed", "blind", "visible_blind")


def csv_rows(matrix: Matrix) -> list[tuple]:
    return [(r.mistake, r.id, r.exercise, r.inherited, c.title, c.visible, c.points, c.failed, c.named,
             c.students, " ".join(c.misnamed), r.blind, r.blind_reason) for r in matrix.rows for c in r.cells]
