# expect: tag raw_self_attention scaled_too_early
# expect: others full
# mistake: raw_self_attention scaled_too_early
# base: reference
# Raw self-attention through a helper that already divides by sqrt(d), as in the lecture's
# later formula.

import numpy as np


def _attend(queries, keys, values):
    d = queries.shape[1]
    s = queries @ keys.T / np.sqrt(d)
    w = softmax(s)
    return w @ values, w


def raw_self_attention(X):
    out, weights = _attend(X, X, X)
    return out, weights
