# expect: full
# base: reference
# causal_mask and the softmax written with Python loops over rows and columns.

import numpy as np


def softmax(S, axis=-1):
    moved = np.moveaxis(np.asarray(S, dtype=np.float64), axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.zeros_like(rows)
    for r in range(rows.shape[0]):
        m = max(rows[r])
        exps = [np.exp(v - m) for v in rows[r]]
        total = sum(exps)
        for c in range(rows.shape[1]):
            out[r, c] = exps[c] / total
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def causal_mask(T):
    M = np.zeros((T, T))
    for i in range(T):
        for j in range(T):
            if j > i:
                M[i, j] = -np.inf
    return M


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    d_k = Q.shape[-1]
    if scale is None:
        scale = 1.0 / np.sqrt(d_k)
    scores = (Q @ np.swapaxes(K, -1, -2)) * scale  # (..., T_q, T_k)
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, axis=-1)
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
    if W_qkv.shape[1] % 3 != 0:
        raise ValueError("W_qkv must have a multiple of 3 columns")
    if X.shape[-1] != W_qkv.shape[0]:
        raise ValueError("X and W_qkv do not fit together")
    h = W_qkv.shape[1] // 3
    qkv = X @ W_qkv
    Q, K, V = qkv[..., :h], qkv[..., h:2 * h], qkv[..., 2 * h:]
    weights = softmax((Q @ np.swapaxes(K, -1, -2)) * scale)
    return weights @ V


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    Q = X @ W_Q + b_Q
    K = X @ W_K + b_K
    V = X @ W_V + b_V
    out, _ = scaled_dot_product_attention(Q, K, V)
    return out
