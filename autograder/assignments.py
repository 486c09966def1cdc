"""Every exercise's declaration, and the assignments (CONTRACTS.md's table) derived from them.

``COURSE`` is the one list to extend: the modules of autograder/exercises/, in the order the
notebooks teach them. An exercise's module says which problem set it belongs to; the
assignments, their exercise lists and every exercise's points follow from the declarations.
"""
from __future__ import annotations

import importlib

from .exercise import Exercise

COURSE = (
    "softmax", "raw_self_attention", "wired_attention", "score_spread",
    "causal_mask", "scaled_dot_product_attention", "attention_shapes", "fused_self_attention",
    "attention_with_biases",
    "previous_token_head", "qk_circuit", "ov_circuit", "multi_head_attention",
    "attend_step", "decode_with_cache", "sinusoidal_positions", "rope", "key_bias_effect", "induction_heads",
)

_EXERCISES: dict[str, Exercise] = {}
ASSIGNMENTS: dict[str, tuple[str, ...]] = {}  # assignment -> its exercises, in notebook order


def register(exercise: Exercise) -> Exercise:
    """Add an exercise to its assignment (at the end), creating the assignment if new."""
    if exercise.name in _EXERCISES:
        raise ValueError(f"an exercise named {exercise.name!r} is already declared")
    _EXERCISES[exercise.name] = exercise
    ASSIGNMENTS[exercise.assignment] = ASSIGNMENTS.get(exercise.assignment, ()) + (exercise.name,)
    return exercise


def unregister(name: str) -> None:
    """Take an exercise out again (an exercise added for a test)."""
    exercise = _EXERCISES.pop(name)
    rest = tuple(n for n in ASSIGNMENTS[exercise.assignment] if n != name)
    if rest:
        ASSIGNMENTS[exercise.assignment] = rest
    else:
        del ASSIGNMENTS[exercise.assignment]


for _module in COURSE:
    register(importlib.import_module(f"autograder.exercises.{_module}").EXERCISE)


def exercises(assignment: str) -> tuple[str, ...]:
    try:
        return ASSIGNMENTS[assignment]
    except KeyError:
        raise ValueError(
            f"unknown assignment {assignment!r}; choose one of {', '.join(ASSIGNMENTS)}"
        ) from None


def exercise(name: str) -> Exercise:
    """The declaration of exercise ``name``."""
    try:
        return _EXERCISES[name]
    except KeyError:
        raise ValueError(f"unknown exercise {name!r}; choose one of {', '.join(_EXERCISES)}") from None


def exercise_points(name: str) -> float:
    """Points an exercise is worth: the sum over its declared checks."""
    return exercise(name).points


def assignment_of(name: str) -> str:
    return exercise(name).assignment
