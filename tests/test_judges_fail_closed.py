"""Every judge fails closed: a value that is not an answer earns no check (issue 8).

The checks are the ones a student gets (``grade.plan``), judged on typed outcomes
(``sandbox.frames.CallOutcome``) as the sandbox's records parse into: returned (with
``inputs_after`` for a call that echoes its inputs) or raised.
Each non-answer is built from the reference's own output on the call, so it has the
contract's structure (tuples, shapes) and differs only in what makes it not an answer.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.assignments import ASSIGNMENTS
from autograder.checks import Call, Check, Spec, Verdict, matches_reference, run_judge
from autograder.errors import GraderError
from autograder.grade import plan
from autograder.reference import Answers, load
from autograder.sandbox.frames import CallOutcome
from autograder.wire import Opaque, materialize

STUDENT = "issue-8-fail-closed"  # any name: inputs are drawn per student
CHECKS = [check for assignment in ASSIGNMENTS for checks in plan(assignment, STUDENT).values() for check in checks]
CHECK_IDS = [check.name for check in CHECKS]


@pytest.fixture(scope="module")
def ref():
    return Answers(load())


def run(fn, call: Call):
    """``fn`` on the call's inputs as the sandbox passes them (an Rng placeholder becomes a Generator)."""
    with np.errstate(all="ignore"):
        return fn(*materialize(call.args), **materialize(call.kwargs))


def reference_output(ref, call: Call):
    """The reference's return value on ``call``, or None where it raises (a ValueError case)."""
    try:
        return run(ref.solution(call.func), call)
    except Exception:  # noqa: BLE001 - the calls that must raise have no output to imitate
        return None


def like(tree, array_fn, scalar_fn):
    """``tree`` (a reference output) with every array and number replaced, structure kept."""
    if isinstance(tree, tuple):
        return tuple(like(t, array_fn, scalar_fn) for t in tree)
    if isinstance(tree, dict):
        return {k: like(v, array_fn, scalar_fn) for k, v in tree.items()}
    if isinstance(tree, np.ndarray):
        return array_fn(tree)
    if isinstance(tree, (int, float, np.number)):
        return scalar_fn(tree)
    return array_fn(np.zeros(3))  # no reference output: any array


def flip_int_float(x):
    """The wrong kind of number: ints where floats are due, floats where ints are."""
    return float(x) if isinstance(x, (int, np.integer)) else int(round(x)) if np.isfinite(x) else 0


NON_ANSWERS = {
    "nan": (lambda a: np.full(a.shape, np.nan), lambda x: float("nan")),
    "inf": (lambda a: np.full(a.shape, np.inf), lambda x: float("inf")),
    "-inf": (lambda a: np.full(a.shape, -np.inf), lambda x: float("-inf")),
    "nan in one entry": (lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, np.nan, np.nan_to_num(a)),
                         lambda x: float("nan")),
    "empty array": (lambda a: np.empty((0,)), lambda x: np.empty((0,))),
    "ints": (lambda a: np.nan_to_num(a, posinf=0, neginf=-(10**6)).round().astype(np.int64), flip_int_float),
    "bools": (lambda a: np.zeros(a.shape, bool), lambda x: True),
    "opaque object": (lambda a: Opaque("Sneaky"), lambda x: Opaque("Sneaky")),
    "string": (lambda a: "0.5", lambda x: str(x)),
    "None": (lambda a: None, lambda x: None),
    "extra axis": (lambda a: np.zeros(a.shape + (1,)), lambda x: np.array([x], dtype=float)),
    "flattened": (lambda a: np.zeros(a.size + 1), lambda x: [x]),
    "zeros": (lambda a: np.zeros(a.shape), lambda x: 0.0),
    "ones": (lambda a: np.ones(a.shape), lambda x: 1.0),
    "uniform": (lambda a: np.full(a.shape, 1.0 / a.shape[-1] if a.ndim and a.shape[-1] else 1.0),
                lambda x: 0.125),
}


def outcome(call: Call, value) -> CallOutcome:
    """What call_one sends back for a function that returned ``value`` and left its inputs alone."""
    after = tuple(np.array(a, copy=True) for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray))
    return CallOutcome.returned(value, 0.001, after if call.echo else None)


def verdict_for(check: Check, ref, make_value) -> Verdict:
    outcomes = [outcome(call, make_value(reference_output(ref, call))) for call in check.calls]
    return run_judge(check, outcomes, ref)


# ---------------------------------------------------------------- non-answers earn nothing

@pytest.mark.parametrize("kind", sorted(NON_ANSWERS))
@pytest.mark.parametrize("check", CHECKS, ids=CHECK_IDS)
def test_non_answer_earns_no_points(ref, check, kind):
    array_fn, scalar_fn = NON_ANSWERS[kind]
    verdict = verdict_for(check, ref, lambda expected: like(expected, array_fn, scalar_fn))
    assert verdict.passed is False, verdict.message


@pytest.mark.parametrize("check", CHECKS, ids=CHECK_IDS)
def test_lone_array_for_a_tuple_earns_no_points(ref, check):
    # first_of(n) hands a lone value over whole: a function returning only its weights
    # instead of (out, weights) must not pass the weights checks.
    def lone(expected):
        if isinstance(expected, tuple) and expected and isinstance(expected[-1], np.ndarray):
            return expected[-1]
        return None
    verdict = verdict_for(check, ref, lone)
    assert verdict.passed is False, verdict.message


@pytest.mark.parametrize("error", ["ValueError", "NotImplementedError", "RuntimeError"])
@pytest.mark.parametrize("check", CHECKS, ids=CHECK_IDS)
def test_raising_on_every_call_earns_no_points(ref, check, error):
    # A check that wants a ValueError on bad inputs also wants real output on good ones.
    outcomes = [CallOutcome.raised(error, f"{error}: no") for _ in check.calls]
    assert run_judge(check, outcomes, ref).passed is False


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.floats(allow_nan=True, allow_infinity=True, width=64))
@pytest.mark.parametrize("check", CHECKS, ids=CHECK_IDS)
def test_constant_of_the_right_shapes_earns_no_points(ref, check, value):
    verdict = verdict_for(check, ref, lambda expected: like(expected, lambda a: np.full(a.shape, value),
                                                             lambda x: value))
    assert verdict.passed is False, verdict.message


# ---------------------------------------------------------------- the answer still earns every point

@pytest.mark.parametrize("check", CHECKS, ids=CHECK_IDS)
def test_reference_output_passes(ref, check):
    # The other side of failing closed: none of the above holds by failing everything.
    def answer(call):
        try:
            return outcome(call, run(ref.solution(call.func), call))
        except ValueError as e:
            return CallOutcome.raised("ValueError", f"ValueError: {e}")
    verdict = run_judge(check, [answer(call) for call in check.calls], ref)
    assert verdict.passed is True, verdict.message


# ---------------------------------------------------------------- judge bugs are the grader's

def test_judge_exception_is_a_grader_error(ref):
    def buggy(outcomes, ref):
        return {}["missing"]
    check = Check("softmax", Spec("a buggy judge", 1), (Call("softmax", (np.zeros((2, 2)),)),), buggy)
    with pytest.raises(GraderError, match="softmax: a buggy judge"):
        run_judge(check, [CallOutcome.returned(np.zeros((2, 2)))], ref)


def test_judge_returning_no_verdict_is_a_grader_error(ref):
    check = Check("softmax", Spec("returns True", 1), (Call("softmax", (np.zeros((2, 2)),)),), lambda o, r: True)
    with pytest.raises(GraderError):
        run_judge(check, [CallOutcome.returned(np.zeros((2, 2)))], ref)


@pytest.mark.parametrize("value, named", [(Opaque("Widget"), "Widget"), ("0.5", "str"), (None, "None"),
                                          (np.zeros((2, 2), dtype=np.int64), "int64"), ([0.5, 0.5], "list")])
def test_malformed_value_fails_naming_what_came_back(ref, value, named):
    call = Call("softmax", (np.zeros((2, 2)),))
    check = Check("softmax", Spec("matches", 1), (call,), matches_reference(call))
    verdict = run_judge(check, [CallOutcome.returned(value)], ref)
    assert verdict.passed is False and named in verdict.message


# ---------------------------------------------------------------- mistakes are named whatever their shape

def fused_checks():
    return plan("ps2", STUDENT)["fused_self_attention"]


def blend_x(call: Call) -> dict:
    """fused_self_attention's mistake: the weights blend the raw inputs X, (..., T, d) wide."""
    X, W_qkv, scale = call.args
    h = W_qkv.shape[1] // 3
    Q, K = X @ W_qkv[:, :h], X @ W_qkv[:, h:2 * h]
    s = (Q @ np.swapaxes(K, -1, -2)) * scale
    w = np.exp(s - s.max(-1, keepdims=True))
    return outcome(call, (w / w.sum(-1, keepdims=True)) @ X)


@pytest.mark.parametrize("name", [c.name for c in fused_checks() if not c.visible])
def test_values_not_projected_output_has_another_shape(ref, name):
    # The premise of the next test: X is d = 8 wide, the answer h = 4.
    call = next(c for c in fused_checks() if c.name == name).calls[0]
    assert blend_x(call).value.shape != ref.output(call).shape


@pytest.mark.parametrize("name", [c.name for c in fused_checks() if not c.visible])
def test_values_not_projected_is_named_whatever_the_shape(ref, name):
    check = next(c for c in fused_checks() if c.name == name)
    verdict = run_judge(check, [blend_x(call) for call in check.calls], ref)
    assert (verdict.passed, verdict.misconception) == (False, "values_not_projected")


def mistake_cases():
    """Each entry of the catalogue, as its own exercise's mistake. (A function that calls it
    inherits it too, but may never show it: wired_attention's scaled scores never overflow.)"""
    reference = load()
    return [(m.func, m.id, reference.edited[m.name]) for m in reference.catalogue]


@pytest.mark.parametrize("func, mistake, fn", mistake_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_catalogued_mistake_is_named_by_some_check(ref, func, mistake, fn):
    assignment = next(a for a, names in ASSIGNMENTS.items() if func in names)
    named = set()
    for check in plan(assignment, STUDENT)[func]:
        outcomes = []
        for call in check.calls:
            try:
                outcomes.append(outcome(call, run(fn, call)))
            except Exception as e:  # noqa: BLE001 - the mistake crashes on these inputs, as a student's would
                outcomes.append(CallOutcome.raised(type(e).__name__, str(e)))
        verdict = run_judge(check, outcomes, ref)
        named |= {verdict.misconception} if not verdict.passed else set()
    assert mistake in named
