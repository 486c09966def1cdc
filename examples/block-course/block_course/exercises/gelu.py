"""gelu(x): GPT-2's tanh approximation, elementwise."""
import numpy as np

from autograder.checks import Call, Spec, leaves_inputs_unchanged, matches_reference, matches_worked
from autograder.exercise import Boundary, Exercise

from ..worked_inputs import GELU_POINTS

F = "gelu"


def checks(rng):
    c_points = Call(F, (GELU_POINTS.copy(),))
    c_rand = Call(F, (rng.standard_normal((3, 4, 5)) * 2,))
    c_32 = Call(F, (rng.standard_normal((6, 7)).astype(np.float32) * 2,))
    c_far = Call(F, (np.concatenate([rng.uniform(-60, -20, 4), rng.uniform(20, 60, 4)]),))
    return [
        Spec("five points by hand, from -3 to 3", 1, visible=True).bind((c_points,), matches_worked(c_points)),
        Spec("matches the reference on a random batch", 2).bind((c_rand,), matches_reference(c_rand)),
        Spec("works on float32", 1).bind((c_32,), matches_reference(c_32)),
        Spec("stays finite far from 0", 1).bind((c_far,), matches_reference(c_far)),
        leaves_inputs_unchanged(c_rand),
    ]


DOMAIN = (
    Boundary("x", "any float array, elementwise",
             ("five points by hand, from -3 to 3", "matches the reference on a random batch")),
    Boundary("x", "far from 0 (|x| from 20 to 60): finite, about x or 0", ("stays finite far from 0",)),
    Boundary("dtype", "float64 and float32", ("matches the reference on a random batch", "works on float32")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "block1", build=checks, domain=DOMAIN)
