"""gelu(x): GPT-2's tanh approximation, elementwise."""
import numpy as np

from autograder.checks import Call, Spec, UNCHANGED, leaves_inputs_unchanged, matches_reference, matches_worked
from autograder.exercise import Exercise

from ..worked_inputs import GELU_POINTS

F = "gelu"

FIVE_POINTS = Spec("five points by hand, from -3 to 3", 1, visible=True)
MATCHES_REFERENCE = Spec("matches the reference on a random batch", 2)
FLOAT32 = Spec("works on float32", 1)
FAR_OUT = Spec("stays finite far from 0", 1)


def checks(rng):
    c_points = Call(F, (GELU_POINTS.copy(),))
    c_rand = Call(F, (rng.standard_normal((3, 4, 5)) * 2,))
    c_32 = Call(F, (rng.standard_normal((6, 7)).astype(np.float32) * 2,))
    c_far = Call(F, (np.concatenate([rng.uniform(-60, -20, 4), rng.uniform(20, 60, 4)]),))
    return [
        FIVE_POINTS.bind((c_points,), matches_worked(c_points)),
        MATCHES_REFERENCE.bind((c_rand,), matches_reference(c_rand)),
        FLOAT32.bind((c_32,), matches_reference(c_32)),
        FAR_OUT.bind((c_far,), matches_reference(c_far)),
        leaves_inputs_unchanged(c_rand),
    ]


EXERCISE = Exercise(F, "block1", build=checks, specs=(FIVE_POINTS, MATCHES_REFERENCE, FLOAT32, FAR_OUT, UNCHANGED))
