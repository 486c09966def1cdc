"""Per-student inputs: a grade is reproducible (the same student gets the same inputs every
time) and outputs cannot be copied (two students get different inputs in every exercise).

Only ``plan``, ``seed_for``, ``Check.calls`` and ``Call.args`` are used, so the exercises'
own layout may change freely."""
from __future__ import annotations

import os

import numpy as np
import pytest

from autograder.assignments import ASSIGNMENTS
from autograder.grade import plan, seed_for

STUDENTS = ["ada", "ben", os.fsdecode(b"jos\xe9"), "new\nline", ""]  # the last three: odd names on disk


def exact(value):
    """A value as something ``==`` compares exactly: an array by dtype, shape and bytes (so
    nan equals nan and -0.0 is not 0.0), containers item by item, anything else by repr."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(exact(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, exact(v)) for k, v in value.items())))
    return (type(value).__name__, repr(value))


def inputs(assignment: str, student: str) -> dict[str, list[list]]:
    """Every call's args of every check, by exercise, in the plan's order."""
    return {name: [[exact(call.args) for call in check.calls] for check in checks]
            for name, checks in plan(assignment, student).items()}


EXERCISES = [(a, name) for a in ASSIGNMENTS for name in plan(a, "anyone")]


@pytest.mark.parametrize("student", STUDENTS, ids=repr)
@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_the_same_student_gets_the_same_inputs_twice(assignment, student):
    assert inputs(assignment, student) == inputs(assignment, student)


@pytest.fixture
def global_random_state():
    """numpy's global random state, put back afterwards: other tests are not disturbed."""
    saved = np.random.get_state()
    yield
    np.random.set_state(saved)


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_the_inputs_do_not_depend_on_numpys_global_random_state(assignment, global_random_state):
    np.random.seed(1)
    first = inputs(assignment, "ada")
    np.random.seed(2)
    np.random.standard_normal(1000)
    assert inputs(assignment, "ada") == first


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_every_check_has_calls_with_arguments(assignment):
    planned = inputs(assignment, "ada")
    assert planned and all(checks for checks in planned.values())
    assert all(calls for checks in planned.values() for calls in checks)


@pytest.mark.parametrize("assignment, exercise", EXERCISES, ids=[f"{a}/{e}" for a, e in EXERCISES])
def test_two_students_get_different_inputs_in_every_exercise(assignment, exercise):
    ada, ben = inputs(assignment, "ada")[exercise], inputs(assignment, "ben")[exercise]
    assert len(ada) == len(ben)  # the same checks...
    assert any(a != b for a, b in zip(ada, ben, strict=True))  # ...but not all on the same inputs


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_students_whose_names_differ_by_one_byte_get_different_inputs(assignment):
    assert inputs(assignment, os.fsdecode(b"jos\xe9")) != inputs(assignment, "jos\xe9")


@pytest.mark.parametrize("student", STUDENTS, ids=repr)
def test_seed_for_differs_by_assignment(student):
    seeds = [seed_for(a, student) for a in ASSIGNMENTS]
    assert len(set(seeds)) == len(ASSIGNMENTS)


def test_seed_for_differs_by_student():
    seeds = [seed_for("ps2", s) for s in STUDENTS]
    assert len(set(seeds)) == len(STUDENTS)


@pytest.mark.parametrize("student", STUDENTS, ids=repr)
def test_seed_for_is_the_same_every_time(student):
    assert seed_for("ps1", student) == seed_for("ps1", student)
