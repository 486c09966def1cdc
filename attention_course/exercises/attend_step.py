"""attend_step(q, K_cache, V_cache, scale=None) -> (out (d_v,), weights (t,)): one decoding step."""
import numpy as np

from autograder.checks import (Call, Spec, Verdict, all_of, expect_close, first_of, leaves_inputs_unchanged,
                               matches_reference, matches_worked, parts, provided, returned)
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import STEP_K_CACHE, STEP_QUERY, STEP_V_CACHE

F = "attend_step"


def _known(call, weights, what):
    """A step whose answer needs no reference: these weights, and their blend of the values."""
    V = call.args[2]

    def judge(outcomes, ref):
        out, got = parts(returned(outcomes[0], F), 2, F, "out, weights")
        expect_close(got, weights, F, f"weights {what}", *call.args)
        expect_close(out, weights @ V, F, f"output {what}", *call.args, expected_note="weights @ V_cache")
        return Verdict(True, f"the step {what} is right.")
    return judge


def checks(rng):
    c_sat = Call(F, (STEP_QUERY, STEP_K_CACHE, STEP_V_CACHE))
    c_zero = Call(F, (STEP_QUERY, STEP_K_CACHE, STEP_V_CACHE), {"scale": 0.0})
    c_first = Call(F, (STEP_QUERY, STEP_K_CACHE[:1], STEP_V_CACHE[:1]))  # the first step: one cached key
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
            (c_sat,), all_of(matches_worked(c_sat, first_of(1), "weights", expected_note="about 0.140, 0.284, 0.576"),
                matches_worked(c_sat, first_of(0), "output", expected_note="about 1.284, 0.564"))),
        Spec("scores over 1000 stay finite", 1, visible=True).bind(
            (c_loud, c_sat), matches_worked(c_loud, first_of(1), "weights", loud=True)),
        Spec("scale = 0.0 gives uniform weights", 1, visible=True).bind(
            (c_zero,), _known(c_zero, np.full(3, 1 / 3), "with scale=0.0 (1/3 on each of the 3 keys)")),
        # One key gets all the weight whatever its score: counts only with sat's step right too.
        Spec("a cache of one key", 1, visible=True).bind((c_first, c_sat), provided(
            _known(c_first, np.ones(1), "against a cache of one key (all the weight on it)"),
            all_of(matches_worked(c_sat, first_of(1), "weights"), matches_worked(c_sat, first_of(0), "output")),
            "one key takes all the weight whatever it scores; this check counts once sat's step is right too, "
            "and it is not:")),
        Spec("matches the reference", 2).bind((c_ref,), all_of(matches_reference(c_ref, first_of(1), "weights"),
                                                matches_reference(c_ref, first_of(0), "out"))),
        Spec("an explicit scale is used", 1).bind((c_scale,), matches_reference(c_scale, first_of(1), "weights")),
        Spec("float32 cache", 1).bind((c_32,), matches_reference(c_32, first_of(0), "out")),
        leaves_inputs_unchanged(c_ref),
    ]


def _d_k(call):
    """d_k, for explanations: q is (d_k,)."""
    return {"d_k": call.args[0].shape[-1]}


DOMAIN = (
    Boundary("q, K_cache, V_cache", "(d_k,), (t, d_k), (t, d_v): t = 1 (the first step) and more, d_k != d_v",
             ("a cache of one key", "matches the reference", "float32 cache")),
    Boundary("scale", "None: 1/sqrt(d_k); given, 0.0 included (uniform weights)",
             ("sat's step against the cache of the cat sat", "an explicit scale is used",
              "scale = 0.0 gives uniform weights")),
    Boundary("q, K_cache", "scores past exp()'s 709", ("scores over 1000 stay finite",)),
    Boundary("dtype", "float64 and float32", ("matches the reference", "float32 cache")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps4", build=checks, numbers=_d_k, domain=DOMAIN)
