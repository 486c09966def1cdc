"""The notebooks' check cells: visible checks only, same verdicts and words as the grader."""
import pytest

from autograder import selfcheck
from autograder.assignments import ASSIGNMENTS, exercise
from autograder.reference import load

EXERCISES = [name for names in ASSIGNMENTS.values() for name in names]


@pytest.mark.parametrize("name", EXERCISES)
def test_every_exercise_has_a_visible_check(name):
    assert any(spec.visible for spec in exercise(name).specs)


@pytest.mark.parametrize("name", EXERCISES)
def test_reference_passes_every_visible_check(name):
    rows = selfcheck.run_visible(name, load().solution(name))
    assert [title for title, ok, _, _ in rows if not ok] == []


def test_stub_is_reported_in_one_line_without_raising(capsys):
    def softmax(S, axis=-1):
        raise NotImplementedError()

    selfcheck.check("softmax", softmax)  # returns: the notebook's later check cells still run
    assert capsys.readouterr().out.splitlines() == [
        "softmax is not implemented yet: replace the `raise NotImplementedError()` line in its cell."]


def test_mistake_is_named_in_the_summary(capsys):
    naive = dict(load().mistakes("softmax"))["unstable_softmax"]
    selfcheck.check("softmax", naive)
    shown = len(selfcheck.visible_checks("softmax"))  # it fails two: scores of 1e4, rows a thousand apart
    assert capsys.readouterr().out.startswith(f"{shown - 2}/{shown} checks pass: unstable softmax")


MISTAKES = [(name, mistake, fn) for name in EXERCISES for mistake, fn in load().mistakes(name)]


@pytest.mark.parametrize(("name", "mistake", "fn"), MISTAKES,
                         ids=[f"{name}-{mistake}-{i}" for i, (name, mistake, _) in enumerate(MISTAKES)])
def test_visible_checks_judge_a_mistake_without_the_reference(name, mistake, fn):
    # Judges of visible checks get ref=None. One that reached for the reference on a failing
    # path would raise AttributeError, which run_judge turns into a GraderError here.
    rows = selfcheck.run_visible(name, fn)
    assert rows and all(isinstance(ok, bool) for _, ok, _, _ in rows)


def test_run_visible_rows_are_titles_without_the_exercise_name():
    rows = selfcheck.run_visible("softmax", load().solution("softmax"))
    assert [title for title, _, _, _ in rows] == [s.title for s in exercise("softmax").specs if s.visible]
