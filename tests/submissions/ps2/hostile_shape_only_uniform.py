# expect: zero causal_mask
# expect: zero scaled_dot_product_attention
# expect: zero fused_self_attention
# expect: zero attention_with_biases
# expect: others full
# base: reference
# Hostile: uniform weights of the contract's shapes: every query spreads its attention
# evenly over the keys whatever the scores, and the outputs blend the values with them.
# Rows sum to 1; with W_K = 0 this is even the right answer; the output ignores b_K. None
# of that is attention, and nothing but attention_shapes may earn a point.

import numpy as np


def causal_mask(T):
    return np.zeros((T, T))


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    weights = np.ones(Q.shape[:-1] + K.shape[-2:-1]) / K.shape[-2]
    return weights @ V, weights


def fused_self_attention(X, W_qkv, scale):
    if W_qkv.shape[1] % 3 != 0 or X.shape[-1] != W_qkv.shape[0]:
        raise ValueError("W_qkv does not fit")
    h = W_qkv.shape[1] // 3
    V = X @ W_qkv[:, 2 * h:]
    return np.broadcast_to(V.mean(-2, keepdims=True), V.shape).copy()


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    V = X @ W_V + b_V
    return np.broadcast_to(V.mean(-2, keepdims=True), V.shape).copy()
