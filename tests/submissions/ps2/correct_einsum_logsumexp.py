# expect: full
# base: reference
# einsum with ellipses for every product and a log-sum-exp softmax.

import math

import numpy as np


def softmax(S, axis=-1):
    m = np.max(S, axis=axis, keepdims=True)
    return np.exp(S - (m + np.log(np.sum(np.exp(S - m), axis=axis, keepdims=True))))


def causal_mask(T):
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return np.where(j > i, -np.inf, 0.0)


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    scale = 1 / math.sqrt(Q.shape[-1]) if scale is None else scale
    scores = np.einsum("...qd,...kd->...qk", Q, K) * scale
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    sizes = dict(B=B, T_q=T_q, T_k=T_k, d=d, d_k=d_k, d_v=d_v)
    for name, n in sizes.items():
        if type(n) is bool or not isinstance(n, (int, np.integer)) or n <= 0:
            raise ValueError(f"{name} must be a positive integer")
    B, T_q, T_k, d, d_k, d_v = map(int, sizes.values())
    return dict(X_q=(B, T_q, d), X_kv=(B, T_k, d), W_Q=(d, d_k), W_K=(d, d_k), W_V=(d, d_v),
                Q=(B, T_q, d_k), K=(B, T_k, d_k), V=(B, T_k, d_v),
                S=(B, T_q, T_k), A=(B, T_q, T_k), O=(B, T_q, d_v))


def fused_self_attention(X, W_qkv, scale):
    d, three_h = W_qkv.shape
    if three_h % 3 or X.shape[-1] != d:
        raise ValueError("W_qkv must be (d, 3h) with d = X.shape[-1]")
    qkv = np.einsum("...td,dh->...th", X, W_qkv)
    Q, K, V = np.split(qkv, 3, axis=-1)
    weights = softmax(np.einsum("...qh,...kh->...qk", Q, K) * scale)
    return np.einsum("...qk,...kh->...qh", weights, V)


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    Q = np.einsum("...td,dk->...tk", X, W_Q) + b_Q
    K = np.einsum("...td,dk->...tk", X, W_K) + b_K
    V = np.einsum("...td,dv->...tv", X, W_V) + b_V
    return scaled_dot_product_attention(Q, K, V)[0]
