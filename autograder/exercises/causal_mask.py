"""causal_mask(T): 0 on and below the diagonal, -inf above."""
import numpy as np

from ..checks import Call, Check, Fail, Verdict, as_array, matches_reference, returned, side_by_side
from ..misconceptions import explain

F = "causal_mask"


def _t3(outcomes, ref):
    M = as_array(returned(outcomes[0], F), F, "the mask")
    expected = np.array([[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]])
    if M.shape != (3, 3) or not np.array_equal(M, expected):
        mistake = None
        if M.shape == (3, 3) and np.array_equal(M, expected.T):
            mistake = "mask_wrong_direction"
        elif M.shape == (3, 3) and np.isinf(np.diag(M)).any():
            mistake = "mask_wrong_direction"
        text = (explain(mistake) + "\n" if mistake else "") + side_by_side(
            M.reshape(-1, M.shape[-1]) if M.ndim else M.reshape(1, 1), expected, "yours", "expected")
        raise Fail("causal_mask(3) is wrong.\n" + text, mistake)
    return Verdict(True, "causal_mask(3) is right.")


def _float(outcomes, ref):
    M = as_array(returned(outcomes[0], F), F, "the mask")
    if M.dtype.kind != "f" or M.shape != (3, 3):
        raise Fail(f"causal_mask(3) should be a (3, 3) float array (it holds -inf); yours is {M.dtype} "
                   f"of shape {M.shape}.")
    return Verdict(True, "the mask is a float array.")


def checks(rng):
    T = int(rng.integers(5, 12))
    c3, c1, cT = Call(F, (3,)), Call(F, (1,)), Call(F, (T,))
    return [
        Check("causal_mask: T = 3", 1, (c3,), _t3, visible=True),
        Check("causal_mask: is a float array", 1, (c3,), _float, visible=True),
        Check("causal_mask: a longer T matches the reference", 1, (cT,), matches_reference(cT, what="mask")),
        Check("causal_mask: T = 1 is a single 0", 1, (c1,), matches_reference(c1, what="mask")),
    ]
