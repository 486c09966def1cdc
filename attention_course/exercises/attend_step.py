"""attend_step(q, K_cache, V_cache, scale=None) -> (out (d_v,), weights (t,)): one decoding step."""
import numpy as np

from autograder.checks import (Call, Spec, all_of, first_of, leaves_inputs_unchanged, matches_reference,
                               matches_worked)
from autograder.exercise import Exercise
from ..worked_inputs import STEP_K_CACHE, STEP_QUERY, STEP_V_CACHE

F = "attend_step"


def checks(rng):
    c_sat = Call(F, (STEP_QUERY, STEP_K_CACHE, STEP_V_CACHE))
    # A shared extra coordinate of 40 adds 1600 to every score: exp() overflows without the
    # max shift, and the weights stay those of the small scores.
    loud = np.full((3, 1), 40.0)
    c_loud = Call(F, (np.append(STEP_QUERY, 40.0), np.hstack([STEP_K_CACHE, loud]), STEP_V_CACHE))
    t, d_k, d_v = int(rng.integers(5, 10)), 16, 3
    args = (rng.standard_normal(d_k), rng.standard_normal((t, d_k)), rng.standard_normal((t, d_v)))
    c_ref = Call(F, args)
    c_scale = Call(F, args, {"scale": 0.3})
    c_32 = Call(F, tuple(a.astype(np.float32) for a in (
        rng.standard_normal(8), rng.standard_normal((6, 8)), rng.standard_normal((6, 4)))))
    return [
        Spec("sat's step against the cache of the cat sat", 1, visible=True).bind(
            (c_sat,), all_of(matches_worked(c_sat, first_of(1), "weights (about 0.140, 0.284, 0.576)"),
                matches_worked(c_sat, first_of(0), "output (about 1.284, 0.564)"))),
        Spec("scores over 1000 stay finite", 1, visible=True).bind(
            (c_loud, c_sat), matches_worked(c_loud, first_of(1), "weights", loud=True)),
        Spec("matches the reference", 2).bind((c_ref,), all_of(matches_reference(c_ref, first_of(1), "weights"),
                                                matches_reference(c_ref, first_of(0), "out"))),
        Spec("an explicit scale is used", 1).bind((c_scale,), matches_reference(c_scale, first_of(1), "weights")),
        Spec("float32 cache", 1).bind((c_32,), matches_reference(c_32, first_of(0), "out")),
        leaves_inputs_unchanged(c_ref),
    ]


def _d_k(call):
    """d_k, for explanations: q is (d_k,)."""
    return {"d_k": call.args[0].shape[-1]}


EXERCISE = Exercise(F, "ps4", build=checks, numbers=_d_k)
