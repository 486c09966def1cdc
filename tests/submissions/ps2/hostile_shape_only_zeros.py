# expect: zero causal_mask
# expect: zero scaled_dot_product_attention
# expect: zero fused_self_attention
# expect: zero attention_with_biases
# expect: others full
# base: reference
# Hostile: shape-only work. Every function returns zeros of the contract's shapes and
# fused_self_attention even rejects a W_qkv of the wrong shape, but no attention is
# computed. attention_shapes, which is about shapes, is the reference's, right; nothing else
# may earn a point (it earned 14/36: input integrity, the float mask, T = 1, the b_K check,
# the ValueErrors).

import numpy as np


def causal_mask(T):
    return np.zeros((T, T))


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    lead = Q.shape[:-1]
    return np.zeros(lead + V.shape[-1:]), np.zeros(lead + K.shape[-2:-1])


def fused_self_attention(X, W_qkv, scale):
    if W_qkv.shape[1] % 3 != 0 or X.shape[-1] != W_qkv.shape[0]:
        raise ValueError("W_qkv does not fit")
    return np.zeros(X.shape[:-1] + (W_qkv.shape[1] // 3,))


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return np.zeros(X.shape[:-1] + W_V.shape[-1:])
