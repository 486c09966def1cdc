"""The course's exercises and problem sets (the contract's table), derived from the
declarations of the course this process grades for (autograder/course.py). Nothing here
names an exercise: a course's ``EXERCISES`` is the one list its author extends.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from . import course

TYPE_CHECKING = False  # typing's, without importing it: `autograder grade` imports this before its launch
if TYPE_CHECKING:  # the declarations import numpy; `autograder grade` imports this module before it
    from .exercise import Exercise


class _Assignments(Mapping):
    """assignment -> its exercises, in notebook order: a view of the current course's sets,
    read when asked, so that importing this module chooses no course."""

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return course.current().assignments[name]

    def __iter__(self) -> Iterator[str]:
        return iter(course.current().assignments)

    def __len__(self) -> int:
        return len(course.current().assignments)

    def __repr__(self) -> str:
        return repr(dict(self))


ASSIGNMENTS: Mapping[str, tuple[str, ...]] = _Assignments()


def exercises(assignment: str) -> tuple[str, ...]:
    try:
        return ASSIGNMENTS[assignment]
    except KeyError:
        raise ValueError(
            f"unknown assignment {assignment!r}; choose one of {', '.join(ASSIGNMENTS)}"
        ) from None


def exercise(name: str) -> Exercise:
    """The declaration of exercise ``name``."""
    declared = course.current().exercises
    try:
        return declared[name]
    except KeyError:
        raise ValueError(f"unknown exercise {name!r}; choose one of {', '.join(declared)}") from None


def exercise_points(name: str) -> float:
    """Points an exercise is worth: the sum over its declared checks."""
    return exercise(name).points


def assignment_of(name: str) -> str:
    return exercise(name).assignment
