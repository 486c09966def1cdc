# expect: tag multi_head_attention output_projection_missing
# expect: others full
# mistake: multi_head_attention output_projection_missing
# base: reference
# The heads computed and concatenated, and W_O never used: each head's part is its output
# in its own columns.

import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    T = X.shape[-2]
    d_head = W_Q.shape[1] // n_heads
    mask = causal_mask(T) if causal else None
    parts = []
    for h in range(n_heads):
        sl = slice(h * d_head, (h + 1) * d_head)
        head_out, _ = scaled_dot_product_attention(X @ W_Q[:, sl], X @ W_K[:, sl], X @ W_V[:, sl], mask=mask)
        padded = np.zeros(X.shape[:-1] + (n_heads * d_head,))
        padded[..., sl] = head_out
        parts.append(padded)
    per_head = np.array(parts)
    return per_head.sum(0), per_head
