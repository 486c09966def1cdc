# expect: zero causal_mask
# expect: zero scaled_dot_product_attention
# expect: zero fused_self_attention
# expect: zero attention_with_biases
# expect: others full
# base: reference
# Hostile: identity-ish answers: every token attends only to itself (weights = I), so the
# output is the values, unmixed; the mask keeps only the diagonal. The output depends on
# the input and not on b_K, which is not enough for the b_K checks.

import numpy as np


def causal_mask(T):
    return np.where(np.eye(T, dtype=bool), 0.0, -np.inf)


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    T_q, T_k = Q.shape[-2], K.shape[-2]
    weights = np.broadcast_to(np.eye(T_q, T_k), Q.shape[:-1] + (T_k,)).copy()
    return weights @ V, weights


def fused_self_attention(X, W_qkv, scale):
    if W_qkv.shape[1] % 3 != 0 or X.shape[-1] != W_qkv.shape[0]:
        raise ValueError("W_qkv does not fit")
    h = W_qkv.shape[1] // 3
    return X @ W_qkv[:, 2 * h:]


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return X @ W_V + b_V
