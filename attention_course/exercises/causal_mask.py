"""causal_mask(T): 0 on and below the diagonal, -inf above."""
import numpy as np

from autograder.checks import (Call, Fail, Spec, Verdict, as_array, describe_value, failed, matches_reference, provided,
                               returned, side_by_side)
from autograder.exercise import Boundary, Exercise, MapWords
from ..worked_inputs import CAUSAL_MASK_3 as T3  # the mask the notebook shows for T = 3

F = "causal_mask"


def _allowed(M):
    """The mask as a picture for the feedback page: 1 where a query may attend, 0 where hidden."""
    return np.isfinite(np.asarray(M, dtype=float)).astype(float)


def _t3(outcomes, ref):
    M = as_array(returned(outcomes[0], F), F, "the mask")
    if M.shape != (3, 3):
        raise Fail(f"causal_mask(3) should have shape (3, 3); yours has shape {M.shape}.")
    if not np.array_equal(M, T3):
        mistake = None
        if np.array_equal(M, T3.T):
            mistake = "mask_wrong_direction"
        elif np.isneginf(np.diag(M)).all() and np.array_equal(np.triu(M, 1), np.triu(T3, 1)):
            mistake = "mask_wrong_direction"  # hides the diagonal as well as the future
        raise failed("causal_mask(3) is wrong.\n" + side_by_side(M, T3, "yours", "expected"), mistake,
                     heatmap=(_allowed(T3), _allowed(M)))
    return Verdict(True, "causal_mask(3) is right.", heatmap=(_allowed(T3), _allowed(M)))


def _float(outcomes, ref):
    M = returned(outcomes[0], F)
    if not (isinstance(M, np.ndarray) and M.dtype.kind == "f" and M.shape == (3, 3)):
        raise Fail(f"causal_mask(3) should be a (3, 3) float array (it holds -inf); yours is "
                   f"{describe_value(M)}.")
    if not np.array_equal(M, T3):
        # Any (3, 3) float array is one: the check counts only for the right mask.
        raise Fail("causal_mask(3) is a float array, but this check counts only once it is the right mask "
                   "(0 on and below the diagonal, -inf above), and it is not.")
    return Verdict(True, "the mask is a float array.")


def checks(rng):
    T = int(rng.integers(5, 12))
    c3, c1, cT = Call(F, (3,)), Call(F, (1,)), Call(F, (T,))
    return [
        Spec("T = 3", 1, visible=True).bind((c3,), _t3),
        Spec("is a float array", 1, visible=True).bind((c3,), _float),
        Spec("a longer T matches the reference", 1).bind((cT,), matches_reference(cT, what="mask", heatmap=_allowed)),
        # For T = 1 zeros are right: the check counts only with a longer mask right too.
        Spec("T = 1 is a single 0", 1).bind(
            (c1, cT), provided(matches_reference(c1, what="mask"), matches_reference(cT, what="mask"),
                f"causal_mask(1) is a single 0 for a mask of zeros as well; this check counts once "
                f"causal_mask({T}) is right too, and it is not:")),
    ]


# A mask is not attention weights: its maps say what 0 and 1 mean.
MASK_MAPS = MapWords(scale=("0 hidden", "1 may attend"), what="mask (1: may attend)")

DOMAIN = (
    Boundary("T", "a positive int: 1 (a single 0), 3, and longer", ("T = 1 is a single 0", "T = 3",
                                                                    "a longer T matches the reference")),
    Boundary("result", "a float array of 0 and exactly -inf (not a finite fill, not booleans)",
             ("T = 3", "is a float array")),
)

EXERCISE = Exercise(F, "ps2", build=checks, map_words=MASK_MAPS, domain=DOMAIN)
