# expect: zero decode_with_cache
# expect: tag decode_with_cache cache_sees_future
# expect: others full
# base: reference
# A cache one step ahead of itself: position t attends to keys 0..t+1. Only the visible
# check that changes a later token can name it; the hidden ones see wrong rows.

import numpy as np


def decode_with_cache(X, W_Q, W_K, W_V):
    K, V = X @ W_K, X @ W_V  # (T, d_k), (T, d_v)
    return np.stack([attend_step(X[t] @ W_Q, K[: t + 2], V[: t + 2])[0] for t in range(X.shape[0])])
