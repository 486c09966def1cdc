"""qk_circuit(W_Q, W_K) -> W_Q @ W_K.T, (d, d)."""
import numpy as np

from autograder.checks import (Call, Spec, Fail, Verdict, as_array, expect_close, leaves_inputs_unchanged,
                               matches_reference, returned)
from autograder.exercise import Boundary, Exercise

F = "qk_circuit"


def _scores_agree(call, X):
    W_Q, W_K = call.args

    def judge(outcomes, ref):
        W_QK = as_array(returned(outcomes[0], F), F, "W_QK")
        d = W_Q.shape[0]
        if W_QK.shape != (d, d):
            raise Fail(f"W_QK should be (d, d) = {(d, d)}, one entry per pair of embedding axes; "
                       f"yours is {W_QK.shape}.")
        # x_i W_QK x_j^T must equal q_i . k_j for every pair: a check that needs no reference.
        # X has more tokens (7) than dimensions (5) and full column rank, so only W_Q W_K^T passes.
        with np.errstate(all="ignore"):  # a student's inf or nan must not warn in the grader
            got = X @ W_QK @ X.T
        expect_close(got, (X @ W_Q) @ (X @ W_K).T, F, "scores x_i W_QK x_j^T", X)
        return Verdict(True, "x_i W_QK x_j^T reproduces every score q_i · k_j.")
    return judge


def checks(rng):
    vis = np.random.default_rng(5)
    c_vis = Call(F, (vis.standard_normal((5, 2)), vis.standard_normal((5, 2))))
    c_ref = Call(F, (rng.standard_normal((8, 3)), rng.standard_normal((8, 3))))
    c_32 = Call(F, (rng.standard_normal((6, 6)).astype(np.float32), rng.standard_normal((6, 6)).astype(np.float32)))
    return [
        Spec("reproduces the scores of a small head", 1, visible=True).bind(
            (c_vis,), _scores_agree(c_vis, vis.standard_normal((7, 5)))),
        Spec("matches the reference", 1).bind((c_ref,), matches_reference(c_ref)),
        Spec("square float32 projections", 1).bind((c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]


DOMAIN = (
    Boundary("W_Q, W_K", "(d, d_k) each, d_k < d as well as square",
             ("reproduces the scores of a small head", "matches the reference", "square float32 projections")),
    Boundary("dtype", "float64 and float32", ("matches the reference", "square float32 projections")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps3", build=checks, domain=DOMAIN)
