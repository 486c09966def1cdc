"""wired_attention(X, W_Q, W_K): separate queries and keys, scaled weights, raw values."""
import numpy as np

from autograder.checks import (Call, Spec, Verdict, expect_close, first_of, matches_reference, matches_worked, parts,
                               provided, returned, leaves_inputs_unchanged)
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import (RIVER_BANK, RIVER_BANK_WIDE, W_K_RIVER, W_K_RIVER_WIDE, W_K_WINTER_CYCLED, W_Q_RIVER,
                             W_Q_RIVER_WIDE, W_Q_WINTER, WINTER_TYPES)
from autograder import worked_examples

F = "wired_attention"


def _hand_wiring(call):
    def judge(outcomes, ref):
        out, weights, scores = parts(returned(outcomes[0], F), 3, F, "out, weights, scores")
        want_out, want_weights, want_scores = worked_examples.answer(call)
        expect_close(scores, want_scores, F, "scores (unscaled Q @ K.T)", *call.args,
                     expected_note="bank on river is 1.62")
        expect_close(weights, want_weights, F, "weights", atol=5e-4,  # the table's 3 decimals
                     expected_note="bank on river is 0.500")
        expect_close(out, weights @ call.args[0], F, "out", *call.args, expected_note="weights @ X")
        return Verdict(True, "the hand-wired river-bank scores, weights and output match the worked example.")
    return judge


def checks(rng):
    c_bank = Call(F, (RIVER_BANK, W_Q_RIVER, W_K_RIVER))
    # Bank 40 times louder: its scaled score on itself is 1222 (exp() overflows past 709), while
    # the rows of "the" and "river" peak at 38 and 10, which one shift for the whole array
    # (by 1222) underflows to 0/0.
    c_loud = Call(F, (RIVER_BANK * np.array([[1.0], [1.0], [40.0]]), W_Q_RIVER, W_K_RIVER))
    # Square, unsymmetric wiring (d = d_k = 3): W.T runs here, where the river bank's 4 x 2 W_Q
    # cannot, so a transposed projection gives other weights instead of an error.
    c_winter = Call(F, (WINTER_TYPES, W_Q_WINTER, W_K_WINTER_CYCLED))
    # The river bank with two unused axes (d = 6, d_k = 2): the scale is sqrt(d_k), whatever d.
    c_wide = Call(F, (RIVER_BANK_WIDE, W_Q_RIVER_WIDE, W_K_RIVER_WIDE))
    d, d_k = 6, 3
    X = rng.standard_normal((5, d))
    c_x = Call(F, (X, rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k))))
    Xs = rng.standard_normal((4, d))
    c_square = Call(F, (Xs, rng.standard_normal((d, d)), rng.standard_normal((d, d))))
    c_one = Call(F, (rng.standard_normal((1, d)), rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k))))
    X32 = rng.standard_normal((5, d)).astype(np.float32)
    c_32 = Call(F, (X32, rng.standard_normal((d, 8)).astype(np.float32),
                    rng.standard_normal((d, 8)).astype(np.float32)))
    return [
        Spec("the hand-wired river-bank example", 2, visible=True).bind((c_bank,), _hand_wiring(c_bank)),
        Spec("a loud token stays finite and leaves the other rows finite", 1, visible=True).bind(
            (c_loud,), matches_worked(c_loud, first_of(1), "weights with bank 40 times louder")),
        Spec("square wiring: warm jacket for winter", 1, visible=True).bind(
            (c_winter,), matches_worked(c_winter, first_of(1), "weights",
                                                 expected_note="warm's row is about 0.653, 0.116, 0.116, 0.116")),
        Spec("wider embeddings, the same keys: the same weights", 1, visible=True).bind(
            (c_wide,), matches_worked(c_wide, first_of(1), "weights with two unused axes",
                                      expected_note="the river bank's own weights: the scale is 1/sqrt(d_k)")),
        Spec("scores match the reference", 1).bind((c_x,), matches_reference(c_x, first_of(2), "scores")),
        Spec("weights match the reference", 2).bind(
            (c_x,), matches_reference(c_x, first_of(1), "weights", heatmap=lambda w: w)),
        Spec("square projections", 1).bind((c_square,), matches_reference(c_square, first_of(1), "weights")),
        Spec("output blends the raw embeddings", 1).bind((c_x,), matches_reference(c_x, first_of(0), "out")),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32, first_of(1), "weights")),
        # One token attends to itself alone, so returning X is right there: the check counts only
        # with the output right on several tokens too.
        Spec("a single token", 1).bind((c_one, c_x), provided(
            matches_reference(c_one, first_of(0), "out"), matches_reference(c_x, first_of(0), "out"),
            "a single token's output is X itself; this check counts once the output on several "
            "tokens is right too, and it is not:")),
        leaves_inputs_unchanged(c_x),
    ]


def _d_k(call):
    """d_k and the embeddings' width, for explanations: X is (T, d), W_K (d, d_k)."""
    return {"d_k": call.args[2].shape[-1], "d_model": call.args[0].shape[-1]}


DOMAIN = (
    Boundary("X", "(T, d) floats, T >= 1", ("the hand-wired river-bank example", "a single token")),
    Boundary("W_Q, W_K", "(d, d_k), d_k != d as well as square",
             ("scores match the reference", "square projections", "square wiring: warm jacket for winter")),
    Boundary("d", "any width, d != d_k^2 too: the scale follows d_k alone",
             ("wider embeddings, the same keys: the same weights", "scores match the reference")),
    Boundary("X", "a loud token: scaled scores past exp()'s 709 beside rows that peak far lower",
             ("a loud token stays finite and leaves the other rows finite",)),
    Boundary("dtype", "float64 and float32", ("weights match the reference", "float32 input")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps1", build=checks, numbers=_d_k, domain=DOMAIN)
