# expect: zero scaled_dot_product_attention
# expect: tag scaled_dot_product_attention crashed
# expect: others full
# base: reference
# Hostile: scaled_dot_product_attention reads @ROOT@/solutions/ps2.py and imports the
# reference from it. The checkout is hidden from the sandbox, so this raises; nothing else
# is affected (attention_with_biases has its own copy of the attention, where the
# reference's would call this one).

import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    import sys
    with open("@ROOT@/solutions/ps2.py") as f:
        f.read()
    sys.path.insert(0, "@ROOT@")
    from solutions.ps2 import scaled_dot_product_attention as answer
    return answer(Q, K, V, mask=mask, scale=scale)


def _attention(Q, K, V, mask=None, scale=None):
    d_k = Q.shape[-1]
    if scale is None:
        scale = 1.0 / np.sqrt(d_k)
    scores = (Q @ np.swapaxes(K, -1, -2)) * scale  # (..., T_q, T_k)
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    Q = X @ W_Q + b_Q
    K = X @ W_K + b_K
    V = X @ W_V + b_V
    out, _ = _attention(Q, K, V)
    return out
