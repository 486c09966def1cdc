"""The shortcuts judging and drawing take keep their answers: checks shared between students
are made once and cannot be changed by one of them, and each faster comparison says what the
slower one said on the cases it skips."""
import numpy as np
import pytest

from autograder.checks import Call, Spec, Verdict, _unchanged
from autograder.closeness import TOLERANCE, tolerance
from autograder.exercise import shared
from autograder.grade import to_test_result


def _one_check(made: list):
    def make():
        made.append(1)
        return [Spec("an example", 1, visible=True).bind((Call("f", (np.zeros(3),), {"mask": np.ones(2)}),),
                                                         lambda outcomes, ref: Verdict(True))]
    return shared(make)


def test_shared_checks_are_made_once():
    made = []
    build = _one_check(made)
    assert build() is build()
    assert made == [1]


@pytest.mark.parametrize("where", ["args", "kwargs"])
def test_shared_checks_inputs_cannot_be_changed(where):
    call = _one_check([])()[0].calls[0]
    array = call.args[0] if where == "args" else call.kwargs["mask"]
    with pytest.raises(ValueError):
        array[0] = 1.0


def test_a_nan_left_in_place_is_unchanged():
    before = np.array([1.0, np.nan, -np.inf])
    assert _unchanged(before.copy(), before)


def test_a_changed_entry_is_a_change():
    before = np.array([1.0, np.nan, 3.0])
    after = before.copy()
    after[2] = 3.5
    assert not _unchanged(after, before)


@pytest.mark.parametrize("dtypes, loosest", [
    ((np.float64, np.float64), np.float64),
    ((np.float64, np.float32), np.float32),
    ((np.float32, np.float16, np.float64), np.float16),
    ((np.int64, np.float64), np.float64),
    ((np.longdouble,), np.float64),
])
def test_tolerance_is_the_narrowest_floats(dtypes, loosest):
    assert tolerance(*[np.zeros(2, dtype=d) for d in dtypes]) == TOLERANCE[np.dtype(loosest)]


def _heatmap_got(got):
    verdict = Verdict(True, "ok", heatmap=(np.zeros_like(got), got))
    return to_test_result("f", Spec("a map", 1), verdict).extra_data["heatmap"]["got"]


def test_a_heatmaps_nan_shows_as_minus_one_and_inf_as_the_largest_float():
    assert _heatmap_got(np.array([[np.nan, np.inf, -np.inf]])) == [[-1.0, np.finfo(float).max, -np.finfo(float).max]]


def test_a_finite_heatmap_is_rounded_to_four_decimals():
    assert _heatmap_got(np.array([[0.123456, 0.5]])) == [[0.1235, 0.5]]
