"""raw_self_attention(X): queries, keys and values are all X; unscaled scores."""
import numpy as np

from autograder.checks import (Call, Fail, Spec, Verdict, as_array, expect_close, first_of,
                               leaves_inputs_unchanged, matches_reference, matches_worked, parts, provided, returned)
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import RIVER_BANK
from autograder import worked_examples

F = "raw_self_attention"


def _river_bank(call):
    def judge(outcomes, ref):
        out, weights = parts(returned(outcomes[0], F), 2, F, "out, weights")
        weights, out = as_array(weights, F, "weights"), as_array(out, F, "out")
        if weights.shape != (3, 3) or out.shape != (3, 4):
            raise Fail(f"for X of shape (3, 4) expected out (3, 4) and weights (3, 3); "
                       f"got {out.shape} and {weights.shape}.")
        _, want = worked_examples.answer(call)
        # within the notebook's table, which has 3 decimals
        expect_close(weights, want, F, "river-bank weights", atol=5e-4,
                     expected_note="as in the table, the keeps 0.576 on itself")
        expect_close(out, weights @ RIVER_BANK, F, "out", RIVER_BANK, expected_note="weights @ X")
        return Verdict(True, "the river-bank weights match the worked example.")
    return judge


def checks(rng):
    c_bank = Call(F, (RIVER_BANK,))
    # A feature of 30 that every token shares adds 900 to every score: the weights are the
    # river bank's (softmax ignores a shift), but exp(900) overflows without the max shift.
    c_loud = Call(F, (np.hstack([np.full((3, 1), 30.0), RIVER_BANK]),))
    # Bank 40 times louder scores 1584 on itself and at most 1 elsewhere: shifted by the array's
    # largest score instead of its own row's, the row of "the" underflows to 0/0.
    c_loud_bank = Call(F, (RIVER_BANK * np.array([[1.0], [1.0], [40.0]]),))
    X = rng.standard_normal((6, 5)) * 0.6
    X32 = (rng.standard_normal((5, 8)) * 0.5).astype(np.float32)
    c_x, c_32 = Call(F, (X,)), Call(F, (X32,))
    c_one = Call(F, (rng.standard_normal((1, 4)),))
    c_big = Call(F, (rng.standard_normal((4, 6)) * 40,))
    weights = first_of(1)
    return [
        Spec("the river-bank example", 2, visible=True).bind((c_bank,), _river_bank(c_bank)),
        Spec("the river bank with a loud shared feature stays finite", 1, visible=True).bind(
            (c_loud, c_bank), matches_worked(c_loud, first_of(1), "weights", loud=True)),
        Spec("a loud token leaves the other rows finite", 1, visible=True).bind(
            (c_loud_bank,), matches_worked(c_loud_bank, first_of(1), "weights with bank 40 times louder")),
        Spec("weights match the reference", 2).bind(
            (c_x,), matches_reference(c_x, weights, "weights", heatmap=lambda w: w)),
        Spec("output matches the reference", 1).bind((c_x,), matches_reference(c_x, first_of(0), "out")),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32, first_of(0), "out")),
        # One token can only attend to itself, so returning X is right there: the check counts
        # only with the output right on several tokens too.
        Spec("a single token", 1).bind((c_one, c_x), provided(
            matches_reference(c_one, first_of(0), "out"), matches_reference(c_x, first_of(0), "out"),
            "a single token's output is X itself; this check counts once the output on several "
            "tokens is right too, and it is not:")),
        # Large embeddings make each token attend to itself almost entirely, so weights = I is
        # right there: the check counts only with the weights right on ordinary inputs too.
        Spec("large embeddings stay finite", 1).bind((c_big, c_x), provided(
            matches_reference(c_big, weights, "weights"), matches_reference(c_x, weights, "weights"),
            "large embeddings make the weights almost the identity; this check counts once the "
            "weights on ordinary embeddings are right too, and they are not:")),
        leaves_inputs_unchanged(c_x),
    ]


DOMAIN = (
    Boundary("X", "(T, d) floats, T >= 1: a single token attends to itself alone",
             ("the river-bank example", "a single token")),
    Boundary("X", "large entries: scores past exp()'s 709, shared by every token or one token's own",
             ("the river bank with a loud shared feature stays finite", "a loud token leaves the other rows finite",
              "large embeddings stay finite")),
    Boundary("dtype", "float64 and float32", ("weights match the reference", "float32 input")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps1", build=checks, domain=DOMAIN)
