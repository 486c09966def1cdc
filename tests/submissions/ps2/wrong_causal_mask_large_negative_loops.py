# expect: zero causal_mask
# expect: tag causal_mask mask_filled_finite
# expect: others full
# mistake: causal_mask mask_filled_finite
# base: reference
# Two loops and a "very negative" number instead of -inf.

import numpy as np


def causal_mask(T):
    M = np.zeros((T, T))
    for i in range(T):
        for j in range(T):
            if j > i:
                M[i, j] = -1e9
    return M
