"""The worked examples' table (attention_course/worked_examples.json) and what it buys a student
before the deadline: every catalogued mistake fails a visible check and is named there."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder import selfcheck, worked_examples
from autograder.assignments import ASSIGNMENTS, exercise
from autograder.reference import load
from autograder.sandbox import call_one

ROOT = Path(__file__).resolve().parent.parent

EXERCISES = [name for names in ASSIGNMENTS.values() for name in names]
CATALOGUE = load().catalogue


from test_course_contract import same_value  # noqa: E402  (the table compares at a tolerance)


@pytest.mark.parametrize("value, other, same", [
    (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1.4e-15]), True),  # another CPU's last bits
    (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-6]), False),  # a real change
    (np.array([1.0, 2.0]), np.array([1.0, 2.0], dtype=np.float32), False),
    (np.array([1.0, 2.0]), np.array([[1.0, 2.0]]), False),
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), True),
    (np.array([1.0, np.nan]), np.array([1.0, 0.0]), False),
    ((0.0, 0.27), (0.0, 0.27 + 1e-16), True),
    ((0.0, 0.27), [0.0, 0.27], False),
    (3, 3.0, False),
    (np.array([True, False]), np.array([True, True]), False),
])
def test_the_staleness_check_tolerates_only_the_last_bits(value, other, same):
    assert same_value(other, value) is same


@pytest.mark.parametrize("name", EXERCISES)
def test_visible_inputs_are_the_same_for_every_student(name):
    def visible_args(seed):
        checks = exercise(name).checks(np.random.default_rng(seed))
        return [worked_examples.call_key(c) for check in checks if check.visible for c in check.calls]
    assert visible_args(0) == visible_args(12345)


@pytest.mark.parametrize("name", EXERCISES)
def test_every_visible_call_with_an_answer_has_it_in_the_table(name):
    ref = load()
    for check in exercise(name).checks(np.random.default_rng(0)):
        for call in (c for c in check.calls if check.visible):
            if call_one(ref.solution(name), call.args, call.kwargs).get("error") == "ValueError":
                continue  # a visible call that wants a ValueError has no answer to store
            worked_examples.answer(call)  # raises GraderError when missing


@pytest.mark.parametrize("mistake", CATALOGUE, ids=[m.name for m in CATALOGUE])
def test_every_catalogued_mistake_fails_a_visible_check(mistake):
    rows = selfcheck.run_visible(mistake.func, load().edited[mistake.name])
    assert not all(ok for _, ok, _, _ in rows)


@pytest.mark.parametrize("mistake", CATALOGUE, ids=[m.name for m in CATALOGUE])
def test_every_catalogued_mistake_is_named_in_the_notebook(mistake):
    rows = selfcheck.run_visible(mistake.func, load().edited[mistake.name])
    named = {m for _, ok, _, m in rows if not ok}
    assert mistake.id in named


def test_a_value_is_named_only_when_it_is_the_mistakes_output():
    call = next(c for check in exercise("softmax").checks(np.random.default_rng(0))
                if check.title == "normalises along the axis it is given" for c in check.calls)
    ignored = load().edited["axis_ignored:softmax"](*call.args, **call.kwargs)
    assert worked_examples.name(call, ignored) == "axis_ignored"
    assert worked_examples.name(call, ignored + 1e-3) is None
    assert worked_examples.name(call, ignored.astype(np.float32)[:, :2]) is None


def test_nan_is_reproduced_only_where_the_mistake_has_it():
    stored = np.array([[0.5, np.nan], [0.25, 0.75]])
    assert worked_examples.reproduces(stored.copy(), stored)
    assert not worked_examples.reproduces(np.array([[0.5, 0.5], [0.25, 0.75]]), stored)
    assert not worked_examples.reproduces(np.array([[np.nan, np.nan], [0.25, 0.75]]), stored)


def test_a_mistake_is_named_with_its_explanation_and_the_same_words_as_the_grader():
    rows = selfcheck.run_visible("softmax", load().edited["softmax_global_max:softmax"])
    message = next(msg for _, ok, msg, m in rows if not ok and m == "softmax_global_max")
    assert message.startswith("One maximum was subtracted for the whole array")
