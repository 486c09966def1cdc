"""Edits of a whole hand-in: what one sample student does to the reference answers of a
problem set (examples/make_class.py builds a class from them; a course adds its own in
solutions/archetypes.py). Each is a function of a ``Work``, the answers before they are
written into the released notebook."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

from .catalogue import Edit, EditError


@dataclass
class Work:
    """What one student hands in for one assignment, before it is written to disk."""
    answers: dict[str, str]  # exercise -> the code in its solution cell
    stubs: dict[str, str]  # exercise -> the released, untouched stub
    truncated: bool = False  # the file was saved only part-way (broken JSON)


WorkEdit = Callable[[Work], None]


def on(exercise: str, *edits: Edit) -> WorkEdit:
    """Apply text edits (autograder/catalogue.py) to one exercise's answer."""
    def edit(work: Work) -> None:
        try:
            for e in edits:
                work.answers[exercise] = e(work.answers[exercise])
        except EditError as err:
            raise EditError(f"{exercise}: {err}") from None
    return edit


def every(*edits: WorkEdit) -> WorkEdit:
    def edit(work: Work) -> None:
        for e in edits:
            e(work)
    return edit


def stub(*exercises: str) -> WorkEdit:
    """Leave exercises as released: `raise NotImplementedError()` under `# YOUR CODE HERE`."""
    def edit(work: Work) -> None:
        for ex in exercises:
            work.answers[ex] = work.stubs[ex]
    return edit


def truncate(work: Work) -> None:
    work.truncated = True


def unchanged(work: Work) -> None:
    """The right answers as they are: the edit that edits nothing."""
    return None


def partials(*exercises: str) -> dict[str, WorkEdit]:
    """Every way to leave one or two of ``exercises`` unfinished."""
    combos = [(e,) for e in exercises] + list(itertools.combinations(exercises, 2))
    return {"partial:" + "+".join(c): stub(*c) for c in combos}
