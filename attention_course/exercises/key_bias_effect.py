"""key_bias_effect(Q, K, b_K, base=10000.0) -> (plain, rotated): how much b_K moves the weights,
without positions (nothing, problem set 2's lesson) and under rotary positions (something)."""
import numpy as np

from autograder import worked_examples
from autograder.checks import (Call, Fail, Spec, Verdict, describe_value, failed, leaves_inputs_unchanged, returned,
                               tolerance)
from autograder.exercise import Boundary, Exercise
from autograder.misconceptions import context, diagnose
from ..worked_inputs import BIAS_B_K, BIAS_K, BIAS_Q

F = "key_bias_effect"
ROUNDING = 1e-8  # "0 up to rounding": float64 softmaxes of shifted rows differ by ~1e-13


def _pair(outcome):
    value = returned(outcome, F)
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise Fail(f"{F} should return two floats, (plain, rotated); it returned {describe_value(value)}.")
    if not all(isinstance(v, (float, np.floating)) and not isinstance(v, bool) for v in value):
        raise Fail(f"{F} should return two floats, (plain, rotated); it returned "
                   + ", ".join(describe_value(v) for v in value) + ". Use float(...) of the largest change.")
    return np.array([float(v) for v in value])  # (2,)


def _compare(call, got, want, named):
    atol, rtol = tolerance(*[a for a in call.args if isinstance(a, np.ndarray)])
    if np.isfinite(got).all() and np.allclose(got, want, atol=atol, rtol=rtol):
        return
    mistake = named(got)
    text = (f"{F} returned plain = {got[0]:.6g}, rotated = {got[1]:.6g}; expected plain = {want[0]:.3g} "
            f"(0 up to rounding) and rotated = {want[1]:.6g}.")
    raise failed(text, mistake, func=F, numbers=context(call))


def _worked(call):
    def judge(outcomes, ref):
        got = _pair(outcomes[0])
        want = np.array(worked_examples.answer(call), dtype=np.float64)
        _compare(call, got, want, lambda g: worked_examples.name(call, tuple(float(v) for v in g)))
        return Verdict(True, f"plain = {got[0]:.2g} (nothing but rounding), rotated = {got[1]:.4f}, "
                              "as in the notebook.")
    return judge


def _matches(call):
    def judge(outcomes, ref):
        got = _pair(outcomes[0])
        want = np.array(ref.output(call), dtype=np.float64)
        pick = lambda v: np.array([float(x) for x in v])  # noqa: E731 - the pair as an array, for diagnosis
        _compare(call, got, want, lambda g: diagnose(ref, call, g, pick, *tolerance(
            *[a for a in call.args if isinstance(a, np.ndarray)])))
        return Verdict(True, "both changes match.")
    return judge


def _plain_is_zero(call):
    matches = _matches(call)

    def judge(outcomes, ref):
        plain = _pair(outcomes[0])[0]
        if not (np.isfinite(plain) and abs(plain) <= ROUNDING):
            raise Fail(f"without positions b_K should change no weight (only rounding, under {ROUNDING:g}); yours "
                       f"says {plain:.3g}. Every score of a row moves by the same q . b_K, and softmax cancels it.")
        matches(outcomes, ref)  # a constant 0 is "unchanged" too: counts only with rotated right as well
        return Verdict(True, "without positions b_K changes nothing.")
    return judge


def checks(rng):
    c_worked = Call(F, (BIAS_Q, BIAS_K, BIAS_B_K))
    n = rng.standard_normal
    c_ref = Call(F, (n((2, 6, 8)), n((2, 6, 8)), n(8)))
    c_large = Call(F, (n((5, 4)), n((5, 4)), 30.0 * n(4)))
    c_base = Call(F, (n((5, 6)), n((5, 6)), n(6)), {"base": 100.0})
    return [
        Spec("three queries and keys of width 4", 1, visible=True).bind((c_worked,), _worked(c_worked)),
        Spec("matches the reference on a batch", 2).bind((c_ref,), _matches(c_ref)),
        Spec("a large b_K changes nothing without positions", 1).bind((c_large,), _plain_is_zero(c_large)),
        Spec("another base", 1).bind((c_base,), _matches(c_base)),
        # Its inputs pass through rope: a rope that rotates in place would change the caller's Q and K.
        leaves_inputs_unchanged(c_ref),
    ]


DOMAIN = (
    Boundary("Q, K", "(..., T, d), d even: batch axes",
             ("three queries and keys of width 4", "matches the reference on a batch")),
    Boundary("b_K", "any vector, a large one included: plain stays 0",
             ("a large b_K changes nothing without positions",)),
    Boundary("base", "10000 by default, or another", ("matches the reference on a batch", "another base")),
    Boundary("inputs", "left unchanged, through rope too", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps4", build=checks, domain=DOMAIN)
