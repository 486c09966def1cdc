"""ov_circuit(W_V, W_O) -> W_V @ W_O, (d, d)."""
import numpy as np

from autograder.checks import (Call, Spec, Fail, Verdict, as_array, expect_close, leaves_inputs_unchanged,
                               matches_reference, returned)
from autograder.exercise import Boundary, Exercise

F = "ov_circuit"


def _moves_like_head(call, X):
    W_V, W_O = call.args

    def judge(outcomes, ref):
        W_OV = as_array(returned(outcomes[0], F), F, "W_OV")
        d = W_V.shape[0]
        if W_OV.shape != (d, d):
            raise Fail(f"W_OV should be (d, d) = {(d, d)}: it maps an embedding to what the head writes; "
                       f"yours is {W_OV.shape}.")
        # Attending fully to token x writes x W_V W_O: check that on a few tokens. X has more
        # tokens (7) than dimensions (5) and full column rank, so only W_V W_O passes.
        with np.errstate(all="ignore"):  # a student's inf or nan must not warn in the grader
            got = X @ W_OV
        expect_close(got, (X @ W_V) @ W_O, F, "what the head writes, x @ W_OV", X)
        return Verdict(True, "x @ W_OV is what the head writes for token x.")
    return judge


def checks(rng):
    vis = np.random.default_rng(6)
    c_vis = Call(F, (vis.standard_normal((5, 2)), vis.standard_normal((2, 5))))
    c_ref = Call(F, (rng.standard_normal((8, 3)), rng.standard_normal((3, 8))))
    c_32 = Call(F, (rng.standard_normal((6, 6)).astype(np.float32), rng.standard_normal((6, 6)).astype(np.float32)))
    return [
        Spec("reproduces what a small head writes", 1, visible=True).bind(
            (c_vis,), _moves_like_head(c_vis, vis.standard_normal((7, 5)))),
        Spec("matches the reference", 1).bind((c_ref,), matches_reference(c_ref)),
        Spec("square float32 projections", 1).bind((c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]


DOMAIN = (
    Boundary("W_V, W_O", "(d, d_v) and (d_v, d), d_v < d as well as square",
             ("reproduces what a small head writes", "matches the reference", "square float32 projections")),
    Boundary("dtype", "float64 and float32", ("matches the reference", "square float32 projections")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps3", build=checks, domain=DOMAIN)
