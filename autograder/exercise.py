"""An exercise, declared once: its function's name, its problem set, and its checks'
titles, points and visibility, readable without drawing anyone's inputs.

Each module in a course's exercises/ declares one ``Exercise``; its ``build`` draws one
student's inputs and binds each declared ``Spec`` to the calls it makes and the judge that
reads their outcomes. Everything else (the assignments' lists, the notebooks' points, the
reports' columns, the packaging test) is derived from these declarations.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .spec import Bound, Call, Check, Spec


def no_numbers(call: Call) -> dict:
    return {}


@dataclass(frozen=True)
class MapWords:
    """How the feedback page labels an exercise's heatmaps: the ends of the colour scale, and
    what the map shows where it is not attention weights (a mask, say)."""
    scale: tuple[str, str] = ("0", "1")
    what: str | None = None


@dataclass(frozen=True)
class Exercise:
    name: str  # the function a student writes
    assignment: str  # the problem set it belongs to
    specs: tuple[Spec, ...]  # its checks, in the order they are reported
    build: Callable[[np.random.Generator], list[Bound]] = field(repr=False, compare=False)
    # Numbers an explanation of a mistake can quote, read off a call's inputs ({"d_k": 16}).
    numbers: Callable[[Call], dict] = field(default=no_numbers, repr=False, compare=False)
    map_words: MapWords = field(default=MapWords(), compare=False)

    def __post_init__(self):
        titles = [s.title for s in self.specs]
        if len(set(titles)) != len(titles):
            raise ValueError(f"{self.name}: two checks share a title")

    @property
    def points(self) -> float:
        total = sum(s.points for s in self.specs)
        return int(total) if float(total).is_integer() else total

    def checks(self, rng: np.random.Generator) -> list[Check]:
        """The checks with this student's inputs. The build must bind every declared spec
        once, in order: a check drawn but not declared could not be counted anywhere else."""
        bound = self.build(rng)
        if [b.spec for b in bound] != list(self.specs):
            raise ValueError(f"{self.name}: the checks built are not the checks declared")
        return [Check(self.name, b.spec, b.calls, b.judge) for b in bound]
