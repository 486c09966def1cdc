"""The notebooks' check cells: visible checks only, same verdicts and words as the grader."""
import numpy as np
import pytest

from autograder import selfcheck
from autograder.assignments import ASSIGNMENTS, exercise_module
from autograder.reference import load

EXERCISES = [name for names in ASSIGNMENTS.values() for name in names]


@pytest.mark.parametrize("name", EXERCISES)
def test_every_exercise_has_a_visible_check(name):
    assert any(c.visible for c in exercise_module(name).checks(np.random.default_rng(0)))


@pytest.mark.parametrize("name", EXERCISES)
def test_reference_passes_every_visible_check(name):
    rows = selfcheck.run_visible(name, load().solution(name))
    assert [title for title, ok, _, _ in rows if not ok] == []


def test_stub_raises_not_implemented():
    def softmax(S, axis=-1):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError, match="softmax is not implemented yet"):
        selfcheck.check("softmax", softmax)


def test_mistake_is_named_in_the_summary(capsys):
    naive = dict(load().mistakes("softmax"))["unstable_softmax"]
    selfcheck.check("softmax", naive)
    assert capsys.readouterr().out.startswith("2/3 checks pass: unstable softmax")


def test_visible_checks_do_not_need_the_reference():
    # Judges of visible checks get ref=None: one that touched it would raise AttributeError.
    rows = selfcheck.run_visible("scaled_dot_product_attention", lambda Q, K, V, mask=None, scale=None: (V, V))
    assert len(rows) == 3 and not any(ok for _, ok, _, _ in rows)
