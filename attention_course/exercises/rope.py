"""rope(X, base=10000.0) -> same shape: rotary positions, graded on values and on the property
that matters, that rope(Q)[m] . rope(K)[n] depends only on m - n.

The property check needs no reference: the same query vector q at every position and the
same key vector k at every position, rotated, must give a score table that is constant along
each diagonal (it depends only on m - n), keeps every vector's length (a rotation), and is not
constant altogether (position changes the score). Zeros, the input returned unchanged and a
constant output each break one of the three.
"""
import numpy as np

from autograder.checks import (Call, Fail, Spec, Verdict, as_array, leaves_inputs_unchanged,
                               matches_reference, matches_worked, provided, raised, returned)
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import ROPE_K, ROPE_PROPERTY_T, ROPE_Q, ROPE_X

F = "rope"
TOL = 1e-6  # relative to |q| |k|: float64 rounding is far below it, a wrong rotation far above


def _tiled(v, T):
    return np.tile(np.asarray(v, dtype=np.float64), (T, 1))  # (T, d): v at every position


def _relative(q_call, k_call):
    Q, K = q_call.args[0], k_call.args[0]
    T = Q.shape[0]

    def judge(outcomes, ref):
        RQ = as_array(returned(outcomes[0], F), F, "rope(Q)")
        RK = as_array(returned(outcomes[1], F), F, "rope(K)")
        for R, X, name in ((RQ, Q, "rope(Q)"), (RK, K, "rope(K)")):
            if R.shape != X.shape:
                raise Fail(f"{name} should have the shape of its input, {X.shape}; yours has {R.shape}.")
            if not np.isfinite(R).all():
                raise Fail(f"{name} holds nan or inf.")
            lengths, want = np.linalg.norm(R, axis=-1), np.linalg.norm(X, axis=-1)
            if not np.allclose(lengths, want, rtol=TOL, atol=0):
                raise Fail(f"a rotation keeps every vector's length, and {name} does not: the rows of its input "
                           f"all have length {want[0]:.4f}, yours have lengths {np.round(lengths, 4)}.")
        S = RQ @ RK.T  # (T, T): the score of query position m on key position n
        scale = np.linalg.norm(Q[0]) * np.linalg.norm(K[0])
        for offset in range(-(T - 1), T):
            diagonal = np.diag(S, k=-offset)  # every (m, n) with m - n = offset
            if np.ptp(diagonal) > TOL * scale:
                raise Fail(f"rope(Q)[m] . rope(K)[n] should depend only on m - n, and yours does not: with the "
                           f"same q and k at every position, the pairs with m - n = {offset} score "
                           f"{np.round(diagonal, 4)}. Each position p must be rotated by the angle p times the "
                           f"pair's frequency, the same rotation for queries and keys.")
        if np.ptp(S) <= 1e-3 * scale:
            raise Fail("every score is the same whatever the positions: your rope does not rotate anything "
                       "(position 0 keeps its vector, but position p > 0 must turn by p times each pair's "
                       "frequency).")
        return Verdict(True, "scores depend only on the distance m - n, and lengths are kept.")
    return judge


def _raises(why):
    return lambda o, ref: (raised(o[0], F, "ValueError", why), Verdict(True, "ValueError raised."))[1]


def checks(rng):
    c_worked = Call(F, (ROPE_X,))
    c_q, c_k = Call(F, (_tiled(ROPE_Q, ROPE_PROPERTY_T),)), Call(F, (_tiled(ROPE_K, ROPE_PROPERTY_T),))
    X = rng.standard_normal((2, 7, 8))
    c_ref = Call(F, (X,))
    c_base = Call(F, (rng.standard_normal((6, 6)),), {"base": 50.0})
    T = int(rng.integers(8, 14))
    c_qw, c_kw = Call(F, (_tiled(rng.standard_normal(16), T),)), Call(F, (_tiled(rng.standard_normal(16), T),))
    c_odd = Call(F, (rng.standard_normal((4, 5)),))
    c_32 = Call(F, (rng.standard_normal((3, 5, 6)).astype(np.float32),))
    return [
        Spec("three copies of (1, 0, 1, 0)", 1, visible=True).bind(
            (c_worked,), matches_worked(c_worked, what="rotated rows",
                                         expected_note="row 1 is about 0.540, 0.841, 1.000, 0.010")),
        Spec("scores depend only on m - n", 1, visible=True).bind((c_q, c_k), _relative(c_q, c_k)),
        Spec("matches the reference on a batch", 2).bind((c_ref,), matches_reference(c_ref)),
        Spec("another base", 1).bind((c_base,), matches_reference(c_base)),
        Spec("scores depend only on m - n, d = 16", 1).bind((c_qw, c_kw), _relative(c_qw, c_kw)),
        # Raising always rejects an odd d: the check counts only with the batch right too.
        Spec("rejects an odd d", 1).bind(
            (c_odd, c_ref), provided(_raises("when d is odd (d = 5)"), matches_reference(c_ref),
                "this check counts once rope is right for an even d too, and it is not:")),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]


DOMAIN = (
    Boundary("X", "(..., T, d), d even: batch axes; odd d: ValueError",
             ("three copies of (1, 0, 1, 0)", "matches the reference on a batch", "rejects an odd d")),
    Boundary("X", "the same vector at every position: scores depend on m - n alone",
             ("scores depend only on m - n", "scores depend only on m - n, d = 16")),
    Boundary("base", "10000 by default, or another", ("matches the reference on a batch", "another base")),
    Boundary("dtype", "float64 and float32", ("matches the reference on a batch", "float32 input")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps4", build=checks, domain=DOMAIN)
