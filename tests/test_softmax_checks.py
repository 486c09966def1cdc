"""The float16 check tells a softmax from what only looks like one on its input.

Its scores must overflow float16's exp() without the max shift (past 11.09) and still give
spread weights: with one score far above the rest every row came out nearly one-hot, so a
softmax that divides by its largest exp(), and a constant one-hot array, passed it.
"""
import numpy as np
import pytest

from autograder import reference
from autograder.checks import run_judge
from autograder.grade import plan
from autograder.sandbox import call_one, frames

TITLE = "float16 scores"


@pytest.fixture(scope="module")
def ref():
    return reference.load()


def float16_check(student: str):
    (check,) = [c for c in plan("ps1", student)["softmax"] if c.spec.title == TITLE]
    return check


def verdict(check, ref, func):
    (call,) = check.calls
    outcome = frames.through_wire([call_one(func, call.args, call.kwargs, call.echo)])[0]
    return run_judge(check, [outcome], reference.Answers(ref))


def divides_by_max(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.max(axis=axis, keepdims=True)


def one_hot_first(S, axis=-1):
    out = np.zeros_like(S)
    out[..., 0] = 1
    return out


def unshifted(S, axis=-1):
    e = np.exp(S)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("student", ["ada", "ben", "cy"])
def test_the_reference_passes(ref, student):
    assert verdict(float16_check(student), ref, ref.solution("softmax")).passed


@pytest.mark.parametrize("student", ["ada", "ben", "cy"])
@pytest.mark.parametrize("wrong", [divides_by_max, one_hot_first, unshifted], ids=lambda f: f.__name__)
def test_what_only_looks_like_a_softmax_fails(ref, student, wrong):
    assert not verdict(float16_check(student), ref, wrong).passed


@pytest.mark.parametrize("student", ["ada", "ben", "cy"])
def test_its_scores_overflow_float16_without_the_shift(student):
    (S,) = float16_check(student).calls[0].args
    assert S.dtype == np.float16
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(S)).any(axis=-1).all()  # every row
