"""The worked examples, written once: the notebook's demo cells and the visible checks use
the same arrays. Public data; nothing here computes an answer."""
import numpy as np


def _frozen(rows) -> np.ndarray:
    a = np.array(rows, dtype=np.float64)
    a.setflags(write=False)  # shared by every check and notebook: nobody may change it
    return a


# Two tokens of width 4. Row 0's biased variance is 1.25 and its unbiased one 5/3, so
# dividing by d - 1 instead of d shows in the second decimal.
TOKENS = _frozen([[1.0, 2.0, 3.0, 4.0],
                  [2.0, -2.0, 0.0, 4.0]])
GAMMA = _frozen([1.0, 1.0, 2.0, 0.5])
BETA = _frozen([0.0, 0.5, 0.0, -1.0])
# A nearly constant token: its variance (about 1e-6) is below eps = 1e-5, where
# sqrt(var + eps) and sqrt(var) + eps part ways by a factor of three.
QUIET = _frozen([[1.000, 1.001, 0.999, 1.002]])
# GELU's worked points: at 0 it is 0, far right it is x, far left 0; at ±1 and ±3 the cubic
# term moves the value in the second decimal.
GELU_POINTS = _frozen([-3.0, -1.0, 0.0, 1.0, 3.0])
