# expect: zero causal_mask
# expect: zero scaled_dot_product_attention
# expect: zero fused_self_attention
# expect: zero attention_with_biases
# expect: others full
# Hostile: uniform weights of the contract's shapes: every query spreads its attention
# evenly over the keys whatever the scores, and the outputs blend the values with them.
# Rows sum to 1; with W_K = 0 this is even the right answer; the output ignores b_K. None
# of that is attention, and nothing but attention_shapes may earn a point.

import numpy as np


def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    return np.ones_like(S) / S.shape[axis]


def causal_mask(T):
    return np.zeros((T, T))


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    weights = np.ones(Q.shape[:-1] + K.shape[-2:-1]) / K.shape[-2]
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
    V = X @ W_qkv[:, 2 * h:]
    return np.broadcast_to(V.mean(-2, keepdims=True), V.shape).copy()


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    V = X @ W_V + b_V
    return np.broadcast_to(V.mean(-2, keepdims=True), V.shape).copy()
