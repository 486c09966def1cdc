# expect: zero decode_with_cache
# expect: tag decode_with_cache cache_overwritten
# expect: others full
# mistake: decode_with_cache cache_overwritten
# base: reference
# The "cache" is reassigned at every step, so it only ever holds the current position.

import numpy as np


def decode_with_cache(X, W_Q, W_K, W_V):
    outputs = []
    cache_k = cache_v = None
    for t in range(len(X)):
        cache_k = (X[t] @ W_K)[None, :]
        cache_v = (X[t] @ W_V)[None, :]
        o, _ = attend_step(X[t] @ W_Q, cache_k, cache_v)
        outputs.append(o)
    return np.array(outputs)
