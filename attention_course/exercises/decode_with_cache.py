"""decode_with_cache(X, W_Q, W_K, W_V) -> out (T, d_v): one position at a time, from a growing cache.

The contract: equal to causal attention on the same projections. The visible checks need no
reference: the worked "cat sat" (problem set 2's causal head, row by row), and the rule
that makes a cache a cache, that a token added later cannot change an earlier row.
"""
import numpy as np

from autograder.checks import (Call, Fail, Spec, Verdict, as_array, failed, leaves_inputs_unchanged, led,
                               matches_reference, matches_worked, passed, returned)
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import CAT_SAT, W_K_CAT_SAT, W_Q_CAT_SAT, W_V_CAT_SAT

F = "decode_with_cache"
FUTURE = 1e3  # how much louder the later tokens of the look-ahead inputs are


def _with_loud_last(X):
    """X with its last token replaced by a loud one: a cache may not let it change earlier rows."""
    X = np.array(X, dtype=np.float64)
    X[-1] = FUTURE * np.arange(1, X.shape[1] + 1)
    return X


def _future_blind(call, worked):
    T, d_v = call.args[0].shape[0], call.args[3].shape[1]

    def judge(outcomes, ref):
        before = as_array(returned(outcomes[0], F), F)
        after = as_array(returned(outcomes[1], F), F)
        for out in (before, after):
            if out.shape != (T, d_v):
                raise Fail(f"with T = {T} tokens and values of width {d_v}, out should have shape {(T, d_v)}; "
                           f"yours has {out.shape}.")
        changed = [t for t in range(T - 1) if not np.allclose(after[t], before[t], atol=1e-9, rtol=1e-9)]
        if changed:
            raise failed(f"changing only the last token (position {T - 1}) changed your rows {changed}.",
                         "cache_sees_future")
        try:  # zeros never change either: the check counts only for the right rows
            passed(worked(outcomes[:1], ref))
        except Fail as f:
            raise led("no earlier row changes when the last token does, but this check counts once the rows are "
                      "right too, and they are not:", f.verdict) from None
        return Verdict(True, "earlier rows do not change when a later token does.")
    return judge


def checks(rng):
    W = (W_Q_CAT_SAT, W_K_CAT_SAT, W_V_CAT_SAT)
    c_cat = Call(F, (CAT_SAT, *W))
    c_loud_last = Call(F, (_with_loud_last(CAT_SAT), *W))
    # One more feature, 40 for every token, that W_Q and W_K both carry into a coordinate of its
    # own: 1600 more on every score (924 once scaled by 1/sqrt(3)), past exp()'s 709.
    loud_X = np.hstack([CAT_SAT, np.full((3, 1), 40.0)])
    extra = np.zeros((4, 1))
    own = np.array([[0.0, 0.0, 1.0]])
    loud_W = (np.vstack([np.hstack([W_Q_CAT_SAT, extra]), own]), np.vstack([np.hstack([W_K_CAT_SAT, extra]), own]),
              np.vstack([W_V_CAT_SAT, np.zeros((1, 2))]))
    c_loud_scores = Call(F, (loud_X, *loud_W))
    T, d, d_k, d_v = int(rng.integers(6, 10)), 6, 4, 3
    n = rng.standard_normal
    args = (n((T, d)), n((d, d_k)) / np.sqrt(d), n((d, d_k)) / np.sqrt(d), n((d, d_v)))
    c_ref = Call(F, args)
    X_loud = args[0].copy()
    X_loud[T // 2:] *= FUTURE  # a cache that looks ahead is swamped by these keys and values
    c_loud = Call(F, (X_loud, *args[1:]))
    c_32 = Call(F, tuple(a.astype(np.float32) for a in (n((5, 4)), n((4, 4)), n((4, 4)), n((4, 2)))))
    worked = matches_worked(c_cat, what="rows", expected_note="row 2, sat, is about 1.284, 0.564")
    return [
        Spec("the causal cat sat, one position at a time", 1, visible=True).bind((c_cat,), worked),
        Spec("a later token changes no earlier row", 1, visible=True).bind(
            (c_cat, c_loud_last), _future_blind(c_cat, worked)),
        Spec("scores over 1000 stay finite", 1, visible=True).bind(
            (c_loud_scores, c_cat), matches_worked(c_loud_scores, what="rows", loud=True)),
        Spec("matches causal attention", 2).bind((c_ref,), matches_reference(c_ref)),
        Spec("huge future tokens", 2).bind((c_loud,), matches_reference(c_loud)),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]


def _d_k(call):
    """d_k, for explanations: W_K is (d, d_k)."""
    return {"d_k": call.args[2].shape[-1]}


DOMAIN = (
    Boundary("X", "(T, d), T >= 1: position 0 sees its own key alone",
             ("the causal cat sat, one position at a time", "matches causal attention")),
    Boundary("X", "later tokens never change earlier rows, however loud",
             ("a later token changes no earlier row", "huge future tokens")),
    Boundary("X, W_Q, W_K", "scores past exp()'s 709", ("scores over 1000 stay finite",)),
    Boundary("dtype", "float64 and float32", ("matches causal attention", "float32 input")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps4", build=checks, numbers=_d_k, domain=DOMAIN)
