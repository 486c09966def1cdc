"""An exercise, declared once: its function's name, its problem set, and its checks'
titles, points and visibility, read off a build with a fixed seed (no student's inputs).

Each module in a course's exercises/ declares one ``Exercise``; its ``build`` draws one
student's inputs and binds each check (a ``Spec``: title, points, visibility, declared once,
where it is bound) to the calls it makes and the judge that reads their outcomes. Everything
else (the assignments' lists, the notebooks' points, the reports' columns, the packaging
test) is derived from these declarations.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Callable

import numpy as np

from .spec import Bound, Call, Check, Spec


def no_numbers(call: Call) -> dict:
    return {}


def shared(make: Callable[[], list[Bound]]) -> Callable[[], list[Bound]]:
    """``make``'s checks, made once per process and shared by every student's build: for the
    checks whose inputs are the same for everyone (the notebook's worked examples), which
    drawing again for each student only cost time. Their calls' arrays are frozen, so nothing
    that reads them for one student can change them for the next."""
    @cache  # no arguments: one entry
    def made() -> list[Bound]:
        bound = make()
        for b in bound:
            for call in b.calls:
                for a in (*call.args, *call.kwargs.values()):
                    if isinstance(a, np.ndarray):
                        a.setflags(write=False)
        return bound
    return made


@dataclass(frozen=True)
class MapWords:
    """How the feedback page labels an exercise's heatmaps: the ends of the colour scale, and
    what the map shows where it is not attention weights (a mask, say)."""
    scale: tuple[str, str] = ("0", "1")
    what: str | None = None


@dataclass(frozen=True)
class Boundary:
    """One edge of an exercise's contract, written beside its declaration: an argument (or
    the inputs, or the dtype) and a value or case at the limit of what it may be, and the
    checks, by title, that try it. The course contract suite holds every title to a check."""
    argument: str  # "scale", "mask", "X", "dtype", "inputs", ...
    case: str  # "0.0: honoured (uniform weights), not taken for None"
    checks: tuple[str, ...]


@dataclass(frozen=True)
class Exercise:
    name: str  # the function a student writes
    assignment: str  # the problem set it belongs to
    build: Callable[[np.random.Generator], list[Bound]] = field(repr=False, compare=False)
    # Numbers an explanation of a mistake can quote, read off a call's inputs ({"d_k": 16}).
    numbers: Callable[[Call], dict] = field(default=no_numbers, repr=False, compare=False)
    map_words: MapWords = field(default=MapWords(), compare=False)
    # The contract's domain: every argument's allowed values and boundaries, each with its checks.
    domain: tuple[Boundary, ...] = field(default=(), compare=False)

    @cached_property
    def specs(self) -> tuple[Spec, ...]:
        """Its checks, in the order they are reported: the ones ``build`` binds, each declared
        once, where it is bound (read off a build with a fixed seed: no student's inputs)."""
        specs = tuple(b.spec for b in self.build(np.random.default_rng(0)))
        titles = [s.title for s in specs]
        if len(set(titles)) != len(titles):
            raise ValueError(f"{self.name}: two checks share a title")
        return specs

    @property
    def points(self) -> float:
        total = sum(s.points for s in self.specs)
        return int(total) if float(total).is_integer() else total

    def checks(self, rng: np.random.Generator) -> list[Check]:
        """The checks with this student's inputs. Every build binds the same checks, in the
        same order, whatever the inputs: a check drawn for one student and not another could
        not be counted anywhere else."""
        bound = self.build(rng)
        if [b.spec for b in bound] != list(self.specs):
            raise ValueError(f"{self.name}: this build's checks are not the exercise's checks")
        return [Check(self.name, b.spec, b.calls, b.judge) for b in bound]
