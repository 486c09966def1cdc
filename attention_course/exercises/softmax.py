"""softmax(S, axis=-1): stable, rows sum to 1, -inf gets exactly 0."""
import numpy as np

from autograder.checks import (Call, Fail, Spec, Verdict, as_array, each, expect_close,
                               leaves_inputs_unchanged, matches_reference, matches_worked, returned, side_by_side)
from autograder.exercise import Boundary, Exercise

F = "softmax"


# softmax of the visible check's scores (below), to 9 decimals: a worked example, so that
# rows which merely sum to 1 (uniform weights, say) do not pass for softmax.
FIXED = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0], [-1.0, 5.0, 2.0, 0.5]])
FIXED_SOFTMAX = np.array([[0.032058603, 0.087144319, 0.236882818, 0.643914260],
                          [0.25, 0.25, 0.25, 0.25],
                          [0.002331024, 0.940402184, 0.046819868, 0.010446925]])
OVERFLOW = np.log(np.finfo(np.float64).max)  # exp() of a score above this is inf


def _sums_to_one(call):
    S = call.args[0]

    def judge(outcomes, ref):
        W = as_array(returned(outcomes[0], F), F)
        if W.shape != S.shape:
            raise Fail(f"softmax should keep the shape {S.shape}, but returned {W.shape}.")
        sums = W.sum(axis=-1)
        if not (np.isfinite(W).all() and (W >= 0).all() and np.allclose(sums, 1.0, atol=1e-6, rtol=0)):
            wrong_axis = bool(np.isfinite(W).all() and (W >= 0).all() and np.allclose(W.sum(0), 1, atol=1e-6, rtol=0))
            hint = " Your columns sum to 1: normalise along axis=-1." if wrong_axis else ""
            raise Fail(f"each row of softmax(S) should be non-negative and sum to 1; yours sum to "
                       f"{np.round(sums, 3).tolist()}.{hint}", "softmax_wrong_axis" if wrong_axis else None)
        if not np.allclose(W, FIXED_SOFTMAX, atol=1e-6, rtol=0):
            # Rows that sum to 1 count only when they are softmax's: exp(s) / sum(exp(s)).
            raise Fail("your rows sum to 1, but they are not softmax of the scores: a score larger by 1 "
                       "gets e = 2.718 times the weight.\n" + side_by_side(W, FIXED_SOFTMAX, "yours", "expected"))
        return Verdict(True, "rows are non-negative and sum to 1.")
    return judge


def _known(call, expected, what):
    S = call.args[0]

    def judge(outcomes, ref):
        arr = as_array(returned(outcomes[0], F), F)
        if arr.shape != expected.shape:
            raise Fail(f"softmax should keep the shape {S.shape}, but returned {arr.shape}.")
        bad = ~np.isfinite(arr)
        # Overflow's signature: nan or inf only in rows holding a score exp() cannot take,
        # beside finite entries (the smaller scores' weights stay finite).
        overflow = (S > OVERFLOW).any(axis=-1, keepdims=True)
        if bad.any() and not bad.all() and not (bad & ~overflow).any():
            raise Fail("softmax returned nan or inf. Subtract each row's maximum before "
                       "exponentiating: exp of a large score overflows.", "unstable_softmax")
        expect_close(arr, expected, F, what, *call.args)
        return Verdict(True, f"{what}: correct.")
    return judge


def checks(rng):
    fixed = FIXED.copy()
    big = np.array([[1e4, 0.0, -1e4], [1e4, 1e4, 0.0]])
    neg_inf = np.array([[0.0, -np.inf, 0.0], [-np.inf, 2.0, -np.inf]])
    c_fixed, c_big, c_inf = Call(F, (fixed,)), Call(F, (big,)), Call(F, (neg_inf,))
    S = rng.standard_normal((6, 6)) * 3
    S32 = (rng.standard_normal((2, 5, 7)) * 3).astype(np.float32)
    S3 = rng.standard_normal((3, 4, 5)) * 2
    c_rand, c_32 = Call(F, (S,)), Call(F, (S32,))
    c_axis0, c_axis1 = Call(F, (S3,), {"axis": 0}), Call(F, (S3,), {"axis": 1})
    c_huge = Call(F, (rng.standard_normal((4, 5)) * 5000,))
    # Rows a thousand apart: one maximum for the whole array leaves the low row 0/0.
    c_far = Call(F, (np.array([[1000.0, 1001.0, 999.0], [0.0, 1.0, -1.0]]),))
    c_axis = Call(F, (FIXED.copy(),), {"axis": 0})
    c_row = Call(F, (FIXED[2].copy(),))  # one row, no batch axis at all
    c_axis_neg = Call(F, (S3,), {"axis": -2})
    # float16 holds exp() only up to 11.09: scores about 16 overflow it without the max shift.
    # Close to each other, so the weights are spread: one score far above the rest would make
    # every row nearly one-hot, which a constant or a division by the largest exp() matches.
    # One score of about 8 per row, which exp() holds: unshifted, that row is nan beside 0, not
    # the nan everywhere of a function that computes nothing.
    S16 = 16.0 + rng.standard_normal((4, 6))
    S16[:, -1] -= 8.0
    c_16 = Call(F, (S16.astype(np.float16),))
    return [
        Spec("rows are non-negative and sum to 1", 1, visible=True).bind((c_fixed,), _sums_to_one(c_fixed)),
        Spec("stays finite for scores of 1e4", 1, visible=True).bind(
            (c_big,), _known(c_big, np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]),
                "weights for scores of ±1e4")),
        Spec("-inf gets weight exactly 0", 1, visible=True).bind(
            (c_inf,), _known(c_inf, np.array([[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]]),
                "weights with -inf scores")),
        Spec("each row is shifted by its own maximum", 1, visible=True).bind(
            (c_far,), matches_worked(c_far, what="weights for rows a thousand apart")),
        Spec("normalises along the axis it is given", 1, visible=True).bind(
            (c_axis,), matches_worked(c_axis, what="output with axis=0")),
        Spec("a single row of scores (1-D)", 1, visible=True).bind(
            (c_row,), matches_worked(c_row, what="weights of a 1-D row")),
        Spec("matches the reference on random scores", 2).bind((c_rand,), matches_reference(c_rand)),
        Spec("works on float32 and batched input", 1).bind((c_32,), matches_reference(c_32)),
        Spec("honours the axis argument", 1).bind(
            (c_axis0, c_axis1, c_axis_neg), each(matches_reference(c_axis0, what="output with axis=0"),
                matches_reference(c_axis1, what="output with axis=1"),
                matches_reference(c_axis_neg, what="output with axis=-2"))),
        Spec("stays finite for random scores in the thousands", 1).bind((c_huge,), matches_reference(c_huge)),
        Spec("float16 scores", 1).bind((c_16,), matches_reference(c_16, what="weights of float16 scores")),
        leaves_inputs_unchanged(c_rand),
    ]


# The contract's domain (CONTRACTS.md), and the checks that try each edge of it.
DOMAIN = (
    Boundary("S", "any float array with one axis or more: a single row, batch axes before the last",
             ("a single row of scores (1-D)", "works on float32 and batched input")),
    Boundary("S", "entries of -inf: weight exactly 0", ("-inf gets weight exactly 0",)),
    Boundary("S", "scores of 1e4 and in the thousands: finite (exp() overflows past 709)",
             ("stays finite for scores of 1e4", "stays finite for random scores in the thousands")),
    Boundary("S", "rows a thousand apart: each shifted by its own maximum",
             ("each row is shifted by its own maximum",)),
    Boundary("axis", "any axis of S, negative ones included; -1 by default",
             ("normalises along the axis it is given", "honours the axis argument",
              "matches the reference on random scores")),
    Boundary("dtype", "float64, float32, float16 (whose exp() overflows past 11)",
             ("matches the reference on random scores", "works on float32 and batched input", "float16 scores")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps1", build=checks, domain=DOMAIN)
