# expect: tag multi_head_attention heads_split_without_transpose
# expect: others full
# mistake: multi_head_attention heads_split_without_transpose
# base: reference
# Vectorised heads: the projections reshaped straight to (..., n_heads, T, d_head), without
# first splitting the last axis and moving the head axis forward.

import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    *lead, T, d = X.shape
    d_head = W_Q.shape[1] // n_heads

    def split(M):
        return (X @ M).reshape(*lead, n_heads, T, d_head)

    q, k, v = split(W_Q), split(W_K), split(W_V)
    mask = causal_mask(T) if causal else None
    o, _ = scaled_dot_product_attention(q, k, v, mask=mask)  # (..., n_heads, T, d_head)
    W_O_heads = W_O.reshape(n_heads, d_head, -1)
    per_head = np.stack([o[..., h, :, :] @ W_O_heads[h] for h in range(n_heads)])
    return per_head.sum(axis=0), per_head
