"""The notebooks' check cells: visible checks only, same verdicts and words as the grader."""
import pytest

from autograder import selfcheck
from autograder.nbgrader_bridge import cell_feedback
from autograder import results
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
    assert capsys.readouterr().out.startswith(f"softmax: {shown - 2}/{shown} checks pass: unstable softmax")


@pytest.mark.parametrize("name", ["softmax", "previous_token_head"])
def test_each_block_starts_with_the_function_it_is_about(name, capsys):
    # A cell that checks several functions (ps4's re-check cell) prints one block per function.
    selfcheck.check(name, load().solution(name))
    assert capsys.readouterr().out.startswith(f"{name}: ")


SCALED_BY_DK = ("scaled_dot_product_attention", "scale_by_dk")  # a mistake that fails several visible checks


def _failed_quoting(name, mistake):
    """The failed visible checks of ``name`` whose message quotes ``mistake``'s explanation."""
    verdicts = selfcheck.judged(name, dict(load().mistakes(name))[mistake])
    return [v for _, v in verdicts if not v.passed and v.misconception == mistake and v.finding.explanation]


def _checked(name, mistake, capsys) -> str:
    selfcheck.check(name, dict(load().mistakes(name))[mistake])
    return capsys.readouterr().out


def test_a_diagnosis_is_printed_once_per_exercise(capsys):
    quoting = _failed_quoting(*SCALED_BY_DK)
    assert len(quoting) >= 3  # the premise: three checks would each print it
    out = _checked(*SCALED_BY_DK, capsys)
    assert out.count("Your attention weights are too flat") == 1
    assert out.count(quoting[0].finding.explanation) == 1  # with the numbers of the first check that quoted it


def test_each_failed_check_still_says_what_else_it_found(capsys):
    quoting = _failed_quoting(*SCALED_BY_DK)
    shown = {line.strip() for line in _checked(*SCALED_BY_DK, capsys).splitlines()}
    own = [line.strip() for v in quoting for part in (v.finding.detail, v.finding.comparison)
           for line in (part if isinstance(part, str) else part.text() if part else "").splitlines()]
    assert [line for line in own if line and line not in shown] == []


def _result(title, mistake, explanation, detail):
    finding = results.Finding(results.Kind.WRONG, explanation, detail)
    return results.TestResult(f"softmax: {title}", 0.0, 1.0, "failed", finding.text(), "visible",
                      ["exercise:softmax", f"misconception:{mistake}"], finding=finding)


def test_the_graded_cell_gives_each_diagnosis_once_in_the_order_met():
    tests = [_result("a", "m1", "First mistake.", "a's own words"),
             _result("b", "m2", "Second mistake.", "b's own words"),
             _result("c", "m1", "First mistake.", "c's own words")]
    text = cell_feedback("softmax", tests)
    said = ("First mistake.", "Second mistake.", "a's own words", "b's own words", "c's own words")
    assert [text.count(s) for s in said] == [1] * len(said)
    assert text.index("First mistake.") < text.index("Second mistake.") < text.index("FAIL  softmax: a")


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
