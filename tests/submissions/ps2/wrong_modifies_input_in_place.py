# expect: partial scaled_dot_product_attention
# expect: others full
# base: reference
# Right outputs, but scaled_dot_product_attention scales its input Q in place (Q *= scale).
# Only the 'leaves its inputs unchanged' check may fail: every call gets fresh inputs.

import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    d_k = Q.shape[-1]
    if scale is None:
        scale = 1.0 / np.sqrt(d_k)
    Q *= scale
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., T_q, T_k)
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
