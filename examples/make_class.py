"""Generate a synthetic class of submissions, laid out the way nbgrader collects them.

    python examples/make_class.py OUTDIR [--assignments ps1 ps2 ps3 ps4] [--students 30] [--seed 0]

writes ``OUTDIR/submitted/<student>/<assignment>/<assignment>.ipynb`` for every student and
assignment, and ``OUTDIR/roster.json`` mapping each student to ``{assignment: archetype}``.

Every notebook starts as the released notebook (``assignments/<a>/<a>.ipynb``, cell ids and
nbgrader metadata untouched, as a student's saved copy would be) with each solution cell
filled with the reference answer: the matching cell of ``source/<a>/<a>.ipynb`` minus its
``### BEGIN/END SOLUTION`` lines. Then the student's archetype edits those answers:

- ``correct``, ``correct_<style>``: full marks, in different styles (log-sum-exp, einsum, ...);
- ``partial:<ex>[+<ex>]``: those exercises left as the released stub;
- ``<misconception id>:<ex>[:<label>]``: one entry of the catalogue of mistakes
  (solutions/mistakes.py: the right answer with one edit); an exercise that calls it (ps1's
  functions call ``softmax``, ps2's ``attention_with_biases`` calls
  ``scaled_dot_product_attention``) inherits the mistake;
- ``timeout:<ex>``, ``crashed:<ex>``: a loop that never ends (and swallows Ctrl-C), a crash;
- ``runtime_warning:<ex>``, ``prints_a_lot:<ex>``: right answers that warn or print a lot;
- ``malformed``: right answers in a notebook file cut off mid-JSON.

``expected(assignment, archetype)`` says what grading each archetype may give, so the test
corpus grades every archetype against it. The mix is chosen per assignment from ``--seed``:
one student per misconception id and per special archetype, then about two correct students
for every partly-right one. Import it as ``from make_class import make_class`` with
``examples/`` on ``sys.path``.
"""
from __future__ import annotations

import argparse
import copy
import importlib
import itertools
import json
import random
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from autograder import course
from autograder.assignments import ASSIGNMENTS
from autograder.catalogue import callers
from autograder.reference import PACKAGE as SOLUTIONS
from autograder.reference import load as load_reference
from autograder.work_edits import Work, WorkEdit, on, partials, stub, truncate, unchanged  # noqa: F401
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


# ---------------------------------------------------------------- the course's notebooks

def read_notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def source_of(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def solution_cells(nb: dict) -> dict[str, dict]:
    """Exercise name -> its solution cell (nbgrader grade_id ``<exercise>_code``)."""
    cells = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id", "").endswith("_code"):
            cells[meta["grade_id"][: -len("_code")]] = cell
    return cells


def reference_answers(assignment: str) -> dict[str, str]:
    """Exercise name -> the instructor's solution cell without the two marker lines."""
    nb = read_notebook(course.current().folder("source") / assignment / f"{assignment}.ipynb")
    return {ex: "\n".join(line for line in source_of(cell).splitlines()
                          if line.strip() not in MARKERS)
            for ex, cell in solution_cells(nb).items()}


# ---------------------------------------------------------------- the archetypes

def catalogue(assignment: str) -> list:
    """The catalogue's mistakes (solutions/mistakes.py) in this assignment's exercises."""
    return [m for m in load_reference().catalogue if m.func in ASSIGNMENTS[assignment]]


def mistakes(assignment: str) -> dict[str, WorkEdit]:
    """One archetype per catalogued mistake, named ``<id>:<exercise>[:<label>]``."""
    return {m.name: on(m.func, m.edit) for m in catalogue(assignment)}


def exercises_to_leave(assignment: str) -> list[str]:
    """The set's exercises a student may leave unfinished alone: those no other exercise of
    the set calls (a stub there would fail its callers too)."""
    source = reference_module_source(assignment)
    names = ASSIGNMENTS[assignment]
    return [ex for ex in names if not [c for c in callers(source, ex) if c in names]]


def course_archetypes(assignment: str) -> dict[str, WorkEdit]:
    """The course's own sample students (its solutions/archetypes.py, when it has one)."""
    load_reference()  # imports the course's solutions package, which holds the file
    try:
        module = importlib.import_module(f"{SOLUTIONS}.archetypes")
    except ModuleNotFoundError as e:
        if e.name != f"{SOLUTIONS}.archetypes":
            raise
        return {}
    return dict(module.ARCHETYPES.get(assignment, {}))


@lru_cache(maxsize=None)
def archetypes(assignment: str) -> dict[str, WorkEdit]:
    """Archetype -> the edit that turns the reference answers into that student's, named
    "<kind>[:<exercise>...]": the right answers, then those in the course's other styles, one
    student per catalogued mistake (the first entry of each id is the one every class gets),
    every way to leave one or two exercises unfinished, then the specials in SPECIAL's order
    (a file cut short, and the course's hangs, crashes, warnings and printing)."""
    own = course_archetypes(assignment)
    specials = {**{k: v for k, v in own.items() if category(k) == "special"}, "malformed": truncate}
    return {
        "correct": unchanged,
        **mistakes(assignment),
        **{k: v for k, v in own.items() if category(k) == "correct"},
        **partials(*exercises_to_leave(assignment)),
        **dict(sorted(specials.items(), key=lambda kv: SPECIAL.index(kv[0].split(":")[0]))),
    }


class _Archetypes(Mapping):
    """ARCHETYPES[assignment]: every set of the course, derived when first asked."""

    def __getitem__(self, assignment: str) -> dict[str, WorkEdit]:
        if assignment not in ASSIGNMENTS:
            raise KeyError(assignment)
        return archetypes(assignment)

    def __iter__(self):
        return iter(ASSIGNMENTS)

    def __len__(self) -> int:
        return len(ASSIGNMENTS)


ARCHETYPES: Mapping[str, dict[str, WorkEdit]] = _Archetypes()


def category(archetype: str) -> str:
    """correct, partial, misconception or special."""
    kind = archetype.split(":")[0]
    if kind.startswith("correct"):
        return "correct"
    if kind == "partial":
        return "partial"
    return "special" if kind in SPECIAL else "misconception"


SPECIAL = ("timeout", "crashed", "malformed", "runtime_warning", "prints_a_lot")


def expected(assignment: str, archetype: str) -> dict[str, set[tuple[str, frozenset]]]:
    """What grading this archetype's notebook may give, per exercise: the allowed pairs of
    (outcome, misconception tags), outcome being "full", "partial" or "zero".

    A mistake in exercise X with id I costs X points and names I there (a crash may come
    with it: ``x @ W.T`` only runs for square W); an exercise of the same problem set that
    calls X either passes or fails naming I; every other exercise gets full marks. A
    stub is the mistake ``not_implemented``; a hang ``timeout``; a crash ``crashed``.
    """
    names = ASSIGNMENTS[assignment]
    full = {("full", frozenset())}
    kind, _, rest = archetype.partition(":")
    if kind.startswith("correct") or kind in ("runtime_warning", "prints_a_lot"):
        return {ex: full for ex in names}
    if kind == "malformed":  # nothing can be read: every exercise scores 0, naming no mistake
        return {ex: {("zero", frozenset())} for ex in names}
    mistake = {"partial": "not_implemented"}.get(kind, kind)
    wrong = rest.split(":")[0].split("+")
    source = reference_module_source(assignment)
    allowed = {ex: full for ex in names}
    for ex in wrong:
        crash = category(archetype) == "misconception"  # a catalogued edit may also crash on some inputs
        tags = [frozenset({mistake})] + ([frozenset({mistake, "crashed"})] if crash else [])
        outcomes = ("zero",) if kind in ("partial", "timeout") else ("zero", "partial")
        allowed[ex] = {(o, t) for o in outcomes for t in tags}
    for ex in wrong:
        for caller in callers(source, ex):
            if caller not in wrong:
                allowed[caller] = full | {(o, frozenset({mistake})) for o in ("zero", "partial")}
    return allowed


def reference_module_source(assignment: str) -> str:
    """Every answer of the assignment, as one module's source (the notebook's answer cells)."""
    return "\n\n\n".join(reference_answers(assignment).values())


# ---------------------------------------------------------------- choosing the class

def class_mix(assignment: str, n: int, rng: random.Random) -> list[str]:
    """``n`` archetypes, shuffled: each misconception id and each special once, the rest
    about two correct students for every partly-right one."""
    names = list(ARCHETYPES[assignment])
    by = {c: [a for a in names if category(a) == c] for c in ("correct", "partial", "misconception", "special")}
    seen: set[str] = set()
    firsts = []
    for a in by["misconception"]:  # the catalogue's first entry of each id
        kind = a.split(":")[0]
        if kind not in seen:
            firsts.append(a)
        seen.add(kind)
    fixed = firsts + by["special"]
    if n <= len(fixed):  # a small class: one right answer, then the mistakes
        mix = (by["correct"][:1] + fixed)[:n]
    else:
        rest = n - len(fixed)
        n_partial = round(rest / 3)
        styles = itertools.cycle(by["correct"])
        pool = rng.sample(by["partial"], len(by["partial"]))
        mix = fixed + [next(styles) for _ in range(rest - n_partial)] + [pool[i % len(pool)] for i in range(n_partial)]
    rng.shuffle(mix)
    return mix


def student_names(n: int) -> list[str]:
    width = max(2, len(str(n)))
    return [f"student{i:0{width}d}" for i in range(1, n + 1)]


# ---------------------------------------------------------------- writing notebooks

def as_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def archetype_notebook(assignment: str, archetype: str) -> str:
    """The text of the notebook a student of ``archetype`` hands in for ``assignment``."""
    released = read_notebook(course.current().folder("assignments") / assignment / f"{assignment}.ipynb")
    return student_notebook(released, reference_answers(assignment), ARCHETYPES[assignment][archetype])


def student_notebook(released: dict, reference: dict[str, str], edit: WorkEdit) -> str:
    """The text of one student's saved notebook."""
    nb = copy.deepcopy(released)
    cells = solution_cells(nb)
    work = Work(answers=dict(reference), stubs={ex: source_of(c) for ex, c in cells.items()})
    edit(work)
    for ex, cell in cells.items():
        code = work.answers[ex]
        compile(code, f"<{ex}>", "exec")  # an archetype must still parse: its effect is at run time
        cell["source"] = as_lines(code)
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # as Jupyter saves it
    if work.truncated:
        text = text[: len(text) * 3 // 5]  # the save stopped part-way
    return text


def make_class(out_dir: Path, assignments=tuple(ASSIGNMENTS), students: int = 30, seed: int = 0) -> dict:
    """Write the class under ``out_dir`` and return the roster {student: {assignment: archetype}}."""
    out_dir = Path(out_dir)
    names = student_names(students)
    roster: dict[str, dict[str, str]] = {s: {} for s in names}
    for a in assignments:
        if a not in ARCHETYPES:
            raise ValueError(f"unknown assignment {a!r}; choose from {', '.join(ARCHETYPES)}")
        released = read_notebook(course.current().folder("assignments") / a / f"{a}.ipynb")
        reference = reference_answers(a)
        mix = class_mix(a, students, random.Random(f"make_class/{seed}/{a}"))
        texts: dict[str, str] = {}  # the same archetype gives the same notebook
        for student, archetype in zip(names, mix, strict=True):
            if archetype not in texts:
                texts[archetype] = student_notebook(released, reference, ARCHETYPES[a][archetype])
            path = out_dir / "submitted" / student / a / f"{a}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(texts[archetype], encoding="utf-8")
            roster[student][a] = archetype
    (out_dir / "roster.json").write_text(json.dumps(roster, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return roster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--assignments", nargs="+", default=list(ARCHETYPES), choices=sorted(ARCHETYPES))
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    roster = make_class(args.out_dir, args.assignments, args.students, args.seed)
    print(f"wrote {len(roster)} students x {len(args.assignments)} assignments under {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
