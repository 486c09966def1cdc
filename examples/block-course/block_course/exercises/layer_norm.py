"""layer_norm(x, gamma, beta, eps=1e-5): each token normalised over its last axis."""
import numpy as np

from autograder.checks import Call, Spec, leaves_inputs_unchanged, matches_reference, matches_worked
from autograder.exercise import Boundary, Exercise

from ..worked_inputs import BETA, GAMMA, QUIET, TOKENS

F = "layer_norm"


def checks(rng):
    ones, zeros = np.ones(4), np.zeros(4)
    c_hand = Call(F, (TOKENS.copy(), GAMMA.copy(), BETA.copy()))
    c_quiet = Call(F, (QUIET.copy(), ones, zeros))
    # Three tokens of width 5: statistics over axis 0 (across tokens) give another answer.
    three = np.array([[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 6.0, 6.0, 9.0], [-1.0, 0.0, 1.0, 0.0, -1.0]])
    c_three = Call(F, (three, np.ones(5), np.zeros(5)))
    d = 8
    c_rand = Call(F, (rng.standard_normal((2, 6, d)) * 3 + 1, rng.standard_normal(d), rng.standard_normal(d)))
    c_32 = Call(F, tuple(a.astype(np.float32) for a in (rng.standard_normal((4, 16)), rng.standard_normal(16),
                                                         rng.standard_normal(16))))
    # Tokens whose spread is comparable to eps: a wrong or ignored eps shows in the output.
    small = rng.standard_normal((3, 6)) * 0.3
    c_eps = Call(F, (small, np.ones(6), np.zeros(6)), {"eps": 0.5})
    c_default = Call(F, (1 + rng.standard_normal((3, 6)) * 3e-3, np.ones(6), np.zeros(6)))
    return [
        Spec("two tokens by hand, scaled by gamma and shifted by beta", 1, visible=True).bind(
            (c_hand,), matches_worked(c_hand)),
        Spec("a nearly constant token (eps inside the square root)", 1, visible=True).bind(
            (c_quiet,), matches_worked(c_quiet, what="output for a nearly constant token")),
        Spec("each of three tokens is normalised on its own", 1, visible=True).bind(
            (c_three,), matches_worked(c_three)),
        Spec("matches the reference on a random batch", 2).bind((c_rand,), matches_reference(c_rand)),
        Spec("works on float32", 1).bind((c_32,), matches_reference(c_32)),
        Spec("uses the eps it is given", 1).bind((c_eps,), matches_reference(c_eps, what="output with eps=0.5")),
        Spec("eps defaults to 1e-5", 1).bind(
            (c_default,), matches_reference(c_default, what="output with the default eps")),
        leaves_inputs_unchanged(c_rand),
    ]


def numbers(call: Call) -> dict:
    """What an explanation may quote: the width of a token."""
    return {"d": int(np.shape(call.args[0])[-1])}


# The contract's domain, and the checks that try each edge of it.
DOMAIN = (
    Boundary("x", "(..., d): batch axes, every token normalised on its own",
             ("each of three tokens is normalised on its own", "matches the reference on a random batch")),
    Boundary("x", "a nearly constant token: variance below eps",
             ("a nearly constant token (eps inside the square root)",)),
    Boundary("eps", "1e-5 by default, or given", ("eps defaults to 1e-5", "uses the eps it is given")),
    Boundary("dtype", "float64 and float32", ("matches the reference on a random batch", "works on float32")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "block1", build=checks, numbers=numbers, domain=DOMAIN)
