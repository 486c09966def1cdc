# expect: zero causal_mask
# expect: zero scaled_dot_product_attention
# expect: zero fused_self_attention
# expect: zero attention_with_biases
# expect: others full
# Hostile: identity-ish answers: every token attends only to itself (weights = I), so the
# output is the values, unmixed; the mask keeps only the diagonal. The output depends on
# the input and not on b_K, which is not enough for the b_K checks.

import numpy as np


def softmax(S, axis=-1):
    return np.array(S, dtype=float)


def causal_mask(T):
    return np.where(np.eye(T, dtype=bool), 0.0, -np.inf)


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    T_q, T_k = Q.shape[-2], K.shape[-2]
    weights = np.broadcast_to(np.eye(T_q, T_k), Q.shape[:-1] + (T_k,)).copy()
    return weights @ V, weights


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    for n in (B, T_q, T_k, d, d_k, d_v):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"sizes must be positive integers, got {n!r}")
    B, T_q, T_k, d, d_k, d_v = (int(n) for n in (B, T_q, T_k, d, d_k, d_v))
    return {
        "X_q": (B, T_q, d), "X_kv": (B, T_k, d),
        "W_Q": (d, d_k), "W_K": (d, d_k), "W_V": (d, d_v),
        "Q": (B, T_q, d_k), "K": (B, T_k, d_k), "V": (B, T_k, d_v),
        "S": (B, T_q, T_k), "A": (B, T_q, T_k), "O": (B, T_q, d_v),
    }



def fused_self_attention(X, W_qkv, scale):
    if W_qkv.shape[1] % 3 != 0 or X.shape[-1] != W_qkv.shape[0]:
        raise ValueError("W_qkv does not fit")
    h = W_qkv.shape[1] // 3
    return X @ W_qkv[:, 2 * h:]


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return X @ W_V + b_V
