"""wired_attention(X, W_Q, W_K): separate queries and keys, scaled weights, raw values."""
import numpy as np

from autograder.checks import (Call, Spec, Verdict, expect_close, first_of, matches_reference, parts, returned,
                               leaves_inputs_unchanged)
from autograder.exercise import Exercise
from ..worked_inputs import RIVER_BANK, W_K_RIVER, W_Q_RIVER
from autograder import worked_examples

F = "wired_attention"


def _hand_wiring(call):
    def judge(outcomes, ref):
        out, weights, scores = parts(returned(outcomes[0], F), 3, F, "out, weights, scores")
        want_out, want_weights, want_scores = worked_examples.answer(call)
        expect_close(scores, want_scores, F, "scores (unscaled Q @ K.T: bank on river is 1.62)", *call.args)
        expect_close(weights, want_weights, F, "weights (bank on river is 0.500)", atol=5e-4)  # the table's 3 decimals
        expect_close(out, weights @ call.args[0], F, "out (should be weights @ X)", *call.args)
        return Verdict(True, "the hand-wired river-bank scores, weights and output match the worked example.")
    return judge


def checks(rng):
    c_bank = Call(F, (RIVER_BANK, W_Q_RIVER, W_K_RIVER))
    d, d_k = 6, 3
    X = rng.standard_normal((5, d))
    c_x = Call(F, (X, rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k))))
    Xs = rng.standard_normal((4, d))
    c_square = Call(F, (Xs, rng.standard_normal((d, d)), rng.standard_normal((d, d))))
    X32 = rng.standard_normal((5, d)).astype(np.float32)
    c_32 = Call(F, (X32, rng.standard_normal((d, 8)).astype(np.float32),
                    rng.standard_normal((d, 8)).astype(np.float32)))
    return [
        Spec("the hand-wired river-bank example", 2, visible=True).bind((c_bank,), _hand_wiring(c_bank)),
        Spec("scores match the reference", 1).bind((c_x,), matches_reference(c_x, first_of(2), "scores")),
        Spec("weights match the reference", 2).bind(
            (c_x,), matches_reference(c_x, first_of(1), "weights", heatmap=lambda w: w)),
        Spec("square projections", 1).bind((c_square,), matches_reference(c_square, first_of(1), "weights")),
        Spec("output blends the raw embeddings", 1).bind((c_x,), matches_reference(c_x, first_of(0), "out")),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32, first_of(1), "weights")),
        leaves_inputs_unchanged(c_x),
    ]


def _d_k(call):
    """d_k, for explanations: W_K is (d, d_k)."""
    return {"d_k": call.args[2].shape[-1]}


EXERCISE = Exercise(F, "ps1", build=checks, numbers=_d_k)
