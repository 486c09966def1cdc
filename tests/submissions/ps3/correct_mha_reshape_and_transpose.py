# expect: full
# base: reference
# Unusual but right: every head at once, split by reshape to (..., T, n_heads, d_head) and the
# head axis moved forward, W_O cut into per-head blocks with einsum.

import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    T = X.shape[-2]
    d_head = W_Q.shape[1] // n_heads

    def heads(M):
        Y = (X @ M).reshape(X.shape[:-1] + (n_heads, d_head))  # (..., T, H, d_head)
        return np.moveaxis(Y, -2, -3)  # (..., H, T, d_head)

    o, _ = scaled_dot_product_attention(heads(W_Q), heads(W_K), heads(W_V), mask=causal_mask(T) if causal else None)
    blocks = W_O.reshape(n_heads, d_head, W_O.shape[1])  # (H, d_head, d)
    per_head = np.einsum("...htk,hkd->h...td", o, blocks)
    return per_head.sum(0), per_head
