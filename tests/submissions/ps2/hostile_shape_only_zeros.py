# expect: zero causal_mask
# expect: zero scaled_dot_product_attention
# expect: zero fused_self_attention
# expect: zero attention_with_biases
# expect: others full
# Hostile: shape-only work. Every function returns zeros of the contract's shapes and
# fused_self_attention even rejects a W_qkv of the wrong shape, but no attention is
# computed. attention_shapes, which is about shapes, is right; nothing else may earn a point
# (it earned 14/36: input integrity, the float mask, T = 1, the b_K check, the ValueErrors).

import numpy as np


def softmax(S, axis=-1):
    return np.zeros(np.shape(S))


def causal_mask(T):
    return np.zeros((T, T))


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    lead = Q.shape[:-1]
    return np.zeros(lead + V.shape[-1:]), np.zeros(lead + K.shape[-2:-1])


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
    return np.zeros(X.shape[:-1] + (W_qkv.shape[1] // 3,))


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return np.zeros(X.shape[:-1] + W_V.shape[-1:])
