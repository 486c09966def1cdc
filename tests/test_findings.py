"""What a check found travels typed (results.Finding: how it ended, the explanation apart
from the other words, the arrays compared), from the judge to the results file and back,
and grading one file does not go through the batch."""
from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import misconceptions
from autograder.checks import Call, Check, Fail, Spec, compare, failed, matches_reference, raised, returned, run_judge
from autograder.crashes import NO_RESULT, Ended, clause
from autograder.grade import grade, hidden_paths, to_test_result
from autograder.report.feedback import exercise_findings
from autograder import results as results_file
from autograder.results import RESTARTED, CellEnd, CellProblem, Comparison, Finding, Kind, Results, from_json
from autograder.sandbox import ExerciseRun, Sandbox, SandboxResult
from autograder.sandbox import call_one
from autograder.sandbox.frames import CallOutcome, Ending, through_wire
from autograder.sandbox.handle import last_characters
from test_engine_knows_no_chapter import imports

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import make_class

ROOT = Path(__file__).resolve().parent.parent
CORRECT = ROOT / "tests" / "submissions" / "ps2" / "correct_straightforward.py"
SDPA = "scaled_dot_product_attention"


def fail_of(judge) -> Fail:
    try:
        judge()
    except Fail as f:
        return f
    raise AssertionError("the judge did not fail")


def check_of(judge, func: str = SDPA) -> Check:
    return Check(func, Spec("a check", 1), (Call(func, (np.zeros((2, 2)),)),), judge)


# ---------------------------------------------------------------- how a call ended

@pytest.mark.parametrize("outcome, kind, mistake", [
    (CallOutcome.raised("ValueError", "ValueError: bad shapes", "line 3"), Kind.RAISED, "crashed"),
    (CallOutcome.raised("NotImplementedError", "NotImplementedError"), Kind.NOT_IMPLEMENTED, "not_implemented"),
    (CallOutcome.undefined(), Kind.UNDEFINED, None),
    (CallOutcome.malformed("a call's record with the fields ['x']"), Kind.MALFORMED, "crashed"),
])
def test_what_came_back_says_how_the_call_ended(outcome, kind, mistake):
    verdict = fail_of(lambda: returned(outcome, SDPA)).verdict
    assert (verdict.kind, verdict.misconception) == (kind, mistake)
    assert verdict.finding.error == (outcome.message if kind is Kind.RAISED else "")


def test_a_check_that_wants_an_exception_of_a_missing_function_says_it_is_missing():
    verdict = fail_of(lambda: raised(CallOutcome.undefined(), SDPA, "ValueError", "for a bad shape")).verdict
    assert verdict.kind is Kind.UNDEFINED and "is not defined in your submission" in verdict.message


def test_a_missing_function_comes_through_the_wire_as_undefined():
    (outcome,) = through_wire([call_one(None, (np.zeros(2),), {})])
    assert outcome.ending is Ending.UNDEFINED


class _NamedAsYouLike(type):
    """A class whose name reads as NameError once, then as the child's old words for a missing
    function: what a submission can make its exception's class and message say."""
    asked = 0

    @property
    def __name__(cls):
        _NamedAsYouLike.asked += 1
        return "NameError" if _NamedAsYouLike.asked == 1 else f"no function named {SDPA} was defined"


def test_a_function_whose_error_reads_as_a_missing_function_is_graded_as_raising():
    class Forged(Exception, metaclass=_NamedAsYouLike):
        def __str__(self):
            return ""

    def defined(x):
        raise Forged()
    _NamedAsYouLike.asked = 0
    (outcome,) = through_wire([call_one(defined, (np.zeros(2),), {})])
    assert (outcome.error, outcome.message) == ("NameError", f"no function named {SDPA} was defined")
    verdict = fail_of(lambda: returned(outcome, SDPA)).verdict
    assert verdict.kind is Kind.RAISED and verdict.misconception == "crashed"


class StubSandbox:
    def __init__(self, run):
        self.make = run

    def run(self, cells, exercises, timeout, memory):
        return SandboxResult({name: self.make(len(calls)) for name, calls in exercises}, [], (), 0.1)


@pytest.mark.parametrize("run, kind, ended", [
    (lambda n: ExerciseRun("timeout"), Kind.TIMEOUT, ""),
    (lambda n: ExerciseRun("crashed", detail=f"{clause(Ended('crash', 11))}, so {NO_RESULT}",
                           ended=Ended("crash", 11)), Kind.CRASHED, "crash"),
    (lambda n: ExerciseRun("malformed", detail="sent back something that is not a result"), Kind.UNTRUSTED, ""),
    (lambda n: ExerciseRun("ok", (CallOutcome.returned(1.0),) * (n + 1)), Kind.UNTRUSTED, ""),
])
def test_an_exercise_that_sent_no_usable_result_says_how_it_ended(run, kind, ended):
    results = grade(CORRECT, "ps2", sandbox=StubSandbox(run), student="ada", timeout=2)
    assert {t.kind for t in results.tests} == {kind}
    assert {t.finding.ended for t in results.tests} == {ended}
    if kind is Kind.TIMEOUT:
        assert all(t.finding.numbers == {"limit": 2} and t.finding.explanation == t.output for t in results.tests)


# ---------------------------------------------------------------- the explanation apart from the other words

def test_a_diagnosed_difference_keeps_its_parts():
    got, expected = np.full((3, 3), 0.5), np.eye(3)
    comparison = compare(got, expected, f"{SDPA}'s weights", 1e-6, 1e-6)
    verdict = failed(mistake="scale_by_dk", func=SDPA, numbers={"d_k": 16}, comparison=comparison).verdict
    f = verdict.finding
    assert f.explanation == misconceptions.explain("scale_by_dk", func=SDPA, d_k=16) and f.detail == ""
    assert f.numbers == {"d_k": 16} and f.comparison.differ == 9 and f.comparison.got[0] == (0.5, 0.5, 0.5)
    assert verdict.message == f.explanation + "\n" + comparison.text()


@pytest.mark.parametrize("words", [f"{SDPA}(X) is wrong.\n{{said}}\nyours   expected", "{said}\nmore",
                                   "divided by the wrong number"], ids=["around it", "after it", "reworded"])
def test_a_judge_that_writes_its_own_words_keeps_them_whole(words):
    """Nothing reads an explanation back out of a judge's words: a judge gives the parts by
    ``failed``, or its message is all there is."""
    message = words.format(said=misconceptions.explain("scale_by_dk", func=SDPA, d_k=4))

    def judge(outcomes, ref):
        raise Fail(message, "scale_by_dk")
    verdict = run_judge(check_of(judge), [CallOutcome.returned(np.zeros(2))], None)
    assert verdict.finding is None and verdict.message == message and verdict.misconception == "scale_by_dk"


def test_a_judge_that_names_a_mistake_by_failed_has_its_explanation_apart():
    def judge(outcomes, ref):
        raise failed(f"{SDPA}(X) is wrong.", "scale_by_dk", func=SDPA, numbers={"d_k": 4})
    f = run_judge(check_of(judge), [CallOutcome.returned(np.zeros(2))], None).finding
    assert (f.explanation, f.detail, f.numbers) == (misconceptions.explain("scale_by_dk", func=SDPA, d_k=4),
                                                   f"{SDPA}(X) is wrong.", {"d_k": 4})


def test_a_reference_mismatch_names_the_mistake_with_its_numbers_and_the_arrays():
    from autograder.reference import Answers, load

    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((4, 16)) for _ in range(3))
    call = Call(SDPA, (Q, K, V))
    scores = Q @ K.T / 16  # divided by d_k, not sqrt(d_k)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    judge = matches_reference(call, pick=lambda v: v[1] if isinstance(v, tuple) else v, what="weights")
    verdict = run_judge(check_of(judge), [CallOutcome.returned((weights @ V, weights))], Answers(load()))
    assert verdict.misconception == "scale_by_dk" and verdict.finding.numbers.get("d_k") == 16
    assert verdict.finding.explanation and verdict.finding.comparison.got_shape == (4, 4)
    assert verdict.message == verdict.finding.text()


# ---------------------------------------------------------------- the results file

@pytest.mark.parametrize("expected", [np.eye(2), np.array([[0.0, 0.0], [0.0, -np.inf]])], ids=["finite", "a mask"])
def test_a_finding_survives_the_results_file_with_nan_and_infinities(expected):
    got = np.array([[np.nan, np.inf], [-np.inf, 0.5]])
    comparison = compare(got, expected, "softmax's output", 1e-6, 1e-6)
    test = to_test_result("softmax", Spec("a", 1), failed("its rows do not sum to 1", comparison=comparison).verdict)
    back = from_json(Results(0, 1, 0.1, ["a problem"], [test], printed="hi\n").to_json()).tests[0]
    c = back.finding.comparison
    assert back.kind is Kind.WRONG and back.finding.detail == "its rows do not sum to 1"
    assert math.isnan(c.got[0][0]) and c.got[0][1] == math.inf and c.got[1][0] == -math.inf
    assert c.largest == (math.inf if np.isinf(expected).any() else 0.5)  # 0.5 against -inf, or against 1
    assert dataclasses.replace(c, got=()) == dataclasses.replace(comparison, got=())  # nan is no number to compare
    assert c.text() == comparison.text() and back.output == test.output


def test_problems_and_printing_are_kept_apart_and_make_the_output():
    results = Results(0, 0, 0.1, ["cell 2 raised NameError: x"], [], printed="Your code printed:\nfake\n",
                      printed_cut=True)
    back = from_json(results.to_json())
    assert back.problems == ["cell 2 raised NameError: x"] and back.printed == results.printed and back.printed_cut
    assert back.output == results.output and back.output.startswith("cell 2 raised NameError: x\nYour code printed")


class Printing:
    """A sandbox whose children each printed one of ``outputs``, and whose exercises all hung."""
    def __init__(self, *outputs):
        self.outputs = outputs

    def run(self, cells, exercises, timeout, memory):
        return SandboxResult({name: ExerciseRun("timeout") for name, _ in exercises}, [], self.outputs, 0.1)


def test_where_the_cells_ran_again_survives_the_results_file():
    results = grade(CORRECT, "ps2", sandbox=Printing("epoch 1\n", "epoch 1\nepoch 2\n"), student="ada")
    back = from_json(results.to_json())
    assert back.printed_parts() == ["epoch 1\n", "epoch 1\nepoch 2\n"] == results.printed_parts()
    assert f"epoch 1\n\n{RESTARTED}\nepoch 1\n" in back.output


def test_printing_the_restart_line_is_no_restart():
    said = f"epoch 1\n{RESTARTED}\nepoch 1\n"
    back = from_json(grade(CORRECT, "ps2", sandbox=Printing(said), student="ada").to_json())
    assert back.restarts == () and back.printed_parts() == [said]


@pytest.mark.parametrize("limit, parts, restarts", [(100, ["ab", "cd"], (2,)), (3, ["b", "cd"], (1,)),
                                                    (2, ["cd"], ()), (1, ["d"], ())])
def test_printing_cut_to_its_last_characters_keeps_where_each_process_began(limit, parts, restarts):
    fields = Results.printed_by(("ab", "", "cd"), limit)
    shown = Results(0, 0, 0.1, [], [], **fields)
    assert (shown.printed_parts(), shown.restarts, shown.printed_cut) == (parts, restarts, limit < 4)


@pytest.mark.parametrize("limit, kept", [(9, ("ab", "cd")), (3, ("b", "cd")), (2, ("cd",)), (0, ())])
def test_the_sandbox_keeps_each_childs_printing_apart_up_to_its_limit(limit, kept):
    assert last_characters(["ab", "", "cd"], limit) == kept


@pytest.mark.parametrize("restarts", [[3, 1], [0], [99], ["2"], [True], 2])
def test_restarts_that_do_not_fall_inside_the_printing_read_as_none(restarts):
    doc = json.loads(Results(0, 0, 0.1, [], [], printed="abcdef").to_json())
    doc["extra_data"]["printed_restarts"] = restarts
    assert from_json(json.dumps(doc)).restarts == ()


def test_a_cells_problem_survives_the_results_file_beside_its_line():
    cells = [CellProblem(3, CellEnd.RAISED, "ValueError", "ValueError: bad", "cell 4"),
             CellProblem(5, CellEnd.TIMEOUT, message="ran past the 2 s time limit", label="cell 6")]
    back = from_json(Results(0, 0, 0.1, [p.line() for p in cells], [], cell_problems=cells).to_json())
    assert back.cell_problems == cells
    assert back.problems == ["cell 4 raised ValueError: bad", "cell 6 ran past the 2 s time limit and was skipped"]


@pytest.mark.parametrize("doc", [{"cell": "3", "ending": "raised"}, {"cell": 3, "ending": "exploded"},
                                 {"cell": 3, "ending": "raised", "message": 5}, "cell 3", {"cell": 3}])
def test_a_cells_problem_that_does_not_read_is_left_out(doc):
    text = json.loads(Results(0, 0, 0.1, ["cell 4 raised X"], []).to_json())
    text["extra_data"]["cell_problems"] = [doc]
    back = from_json(json.dumps(text))
    assert back.cell_problems == [] and back.problems == ["cell 4 raised X"]


def test_a_results_file_of_an_earlier_grader_reads_with_only_passed_or_failed():
    doc = {"score": 0, "max_score": 1, "execution_time": 0.1, "output": "a problem\nanother", "extra_data": {},
           "tests": [{"name": "softmax: a", "score": 0, "max_score": 1, "status": "failed", "output": "no",
                      "visibility": "visible", "tags": ["exercise:softmax"], "extra_data": {}}]}
    results = from_json(json.dumps(doc))
    assert results.problems == ["a problem", "another"] and results.tests[0].kind is Kind.WRONG
    assert results.tests[0].detail == "no"


@pytest.mark.parametrize("finding", [{"kind": "exploded"}, {"kind": "wrong", "numbers": [1]}, "wrong",
                                     {"kind": "wrong", "comparison": {"what": "x"}}, {"kind": "raised", "error": 3}])
def test_a_finding_that_does_not_read_is_only_passed_or_failed(finding):
    doc = {"score": 0, "max_score": 1, "execution_time": 0.1, "output": "", "extra_data": {"problems": []},
           "tests": [{"name": "softmax: a", "score": 0, "max_score": 1, "status": "failed", "output": "no",
                      "visibility": "visible", "tags": ["exercise:softmax"], "extra_data": {"finding": finding}}]}
    assert from_json(json.dumps(doc)).tests[0].finding == Finding(Kind.WRONG)


def test_a_finding_with_an_explanation_says_what_else_its_message_holds():
    with pytest.raises(ValueError):
        Finding(Kind.WRONG, "an explanation")
    with pytest.raises(ValueError):
        Finding(Kind.WRONG, comparison=Comparison("x", (1,), (2,)))


# ---------------------------------------------------------------- grading one file

def reached(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += imports(m)
    return seen


@pytest.mark.parametrize("face", ["autograder.graded", "autograder.grade", "autograder.gradescope.run",
                                  "autograder.pytest_plugin", "autograder.nbgrader_bridge"])
def test_grading_one_file_does_not_go_through_the_batch(face):
    assert "autograder.batch" not in reached(face)


def test_the_reports_read_the_results_model_not_the_batch():
    for report in ("autograder.report.feedback", "autograder.report.dashboard", "autograder.report.table"):
        assert "autograder.batch" not in reached(report) and "autograder.results" in reached(report)


# ---------------------------------------------------------------- own mistakes before inherited ones

def _named(exercise: str, mistake: str, inherited: bool, k: int) -> results_file.TestResult:
    finding = Finding(Kind.WRONG, f"words of {mistake}", "", inherited=inherited)
    return results_file.TestResult(f"{exercise}: check {k}", 0, 1, "failed", f"words of {mistake}", "visible",
                      [f"exercise:{exercise}", f"misconception:{mistake}"], finding=finding)


def test_an_exercises_own_mistake_is_named_before_one_it_inherits():
    tests = [_named(SDPA, "softmax_divides_by_max", True, 1), _named(SDPA, "scale_by_dk", False, 2),
             _named(SDPA, "softmax_global_sum", True, 3)]
    diagnoses, _ = exercise_findings(SDPA, tests)
    assert [m for m, _ in diagnoses] == ["scale_by_dk", "softmax_divides_by_max", "softmax_global_sum"]


def test_inherited_survives_the_results_file():
    results = Results(0, 1, 0.1, [], [_named(SDPA, "softmax_divides_by_max", True, 1)])
    assert from_json(results.to_json()).tests[0].finding.inherited is True


def test_a_mistake_named_in_an_exercise_that_calls_its_function_is_marked_inherited(tmp_path):
    """softmax's own mistake, seen again through raw_self_attention (which calls softmax): there
    it is inherited; in softmax it is softmax's own."""
    path = tmp_path / "ps1.ipynb"
    path.write_text(make_class.archetype_notebook("ps1", "softmax_divides_by_max:softmax"), encoding="utf-8")
    with Sandbox(hide=hidden_paths(tmp_path)) as sandbox:
        results = grade(path, "ps1", sandbox=sandbox, student="ada")
    named = {(t.exercise, t.finding.inherited) for t in results.tests if t.misconception == "softmax_divides_by_max"}
    assert ("softmax", False) in named and ("raw_self_attention", True) in named, named



def first_exercise_tag(tags: list[str]) -> str:
    """What ``TestResult.exercise`` was written as before it became a loop (the reference)."""
    return next(t.split(":", 1)[1] for t in tags if t.startswith("exercise:"))


TAGS = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["exercise:", "misconception:", "exercise"]).flatmap(
    lambda prefix: st.text(max_size=12).map(lambda rest: prefix + rest))), max_size=5)


@settings(max_examples=300, deadline=None)
@given(TAGS, st.text(max_size=12), st.integers(0, 5))
def test_a_tests_exercise_is_what_its_first_exercise_tag_names(tags, name, at):
    tags = tags[:at] + [f"exercise:{name}"] + tags[at:]
    assert results_file.TestResult("n", 0, 1, "failed", "", "visible", tags).exercise == first_exercise_tag(tags)


@settings(max_examples=100, deadline=None)
@given(TAGS.map(lambda tags: [t for t in tags if not t.startswith("exercise:")]))
def test_a_test_without_an_exercise_tag_raises_as_before(tags):
    with pytest.raises(StopIteration):
        _ = results_file.TestResult("n", 0, 1, "failed", "", "visible", tags).exercise
