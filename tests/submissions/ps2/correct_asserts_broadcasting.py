# expect: full
# base: reference
# Explicit broadcasting with None axes, a transpose helper, checks written as early returns of
# errors, and the softmax through scipy-style exp-normalise (tests/test_integrity.py uses this
# file as one student's own work, independent of the other correct_*.py).

import numpy as np


def _last_two_swapped(A):
    order = list(range(A.ndim))
    order[-1], order[-2] = order[-2], order[-1]
    return A.transpose(order)


def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    top = np.max(S, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    z = np.exp(S - top)
    return z / np.sum(z, axis=axis, keepdims=True)


def causal_mask(T):
    rows = np.arange(T)[:, None]
    cols = np.arange(T)[None, :]
    out = np.zeros((T, T))
    out[cols > rows] = -np.inf
    return out


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    width = Q.shape[-1]
    factor = (1.0 / np.sqrt(width)) if scale is None else scale
    logits = np.matmul(Q, _last_two_swapped(K)) * factor
    logits = logits if mask is None else logits + mask
    attn = softmax(logits, axis=-1)
    return np.matmul(attn, V), attn


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    given = {"B": B, "T_q": T_q, "T_k": T_k, "d": d, "d_k": d_k, "d_v": d_v}
    bad = [k for k, v in given.items() if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1]
    if bad:
        raise ValueError("not positive integers: " + ", ".join(bad))
    g = {k: int(v) for k, v in given.items()}
    b, tq, tk, dm, dk, dv = g["B"], g["T_q"], g["T_k"], g["d"], g["d_k"], g["d_v"]
    table = {}
    table["X_q"], table["X_kv"] = (b, tq, dm), (b, tk, dm)
    table["W_Q"], table["W_K"], table["W_V"] = (dm, dk), (dm, dk), (dm, dv)
    table["Q"], table["K"], table["V"] = (b, tq, dk), (b, tk, dk), (b, tk, dv)
    table["S"] = table["A"] = (b, tq, tk)
    table["O"] = (b, tq, dv)
    return table


def fused_self_attention(X, W_qkv, scale):
    n_in, n_out = W_qkv.shape
    if n_out % 3 != 0:
        raise ValueError(f"{n_out} columns cannot be split in three")
    if X.shape[-1] != n_in:
        raise ValueError(f"X is {X.shape[-1]} wide, W_qkv takes {n_in}")
    third = n_out // 3
    Q = np.matmul(X, W_qkv[:, :third])
    K = np.matmul(X, W_qkv[:, third : 2 * third])
    V = np.matmul(X, W_qkv[:, 2 * third :])
    return scaled_dot_product_attention(Q, K, V, scale=scale)[0]


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    projected = [np.matmul(X, W) + b for W, b in ((W_Q, b_Q), (W_K, b_K), (W_V, b_V))]
    return scaled_dot_product_attention(*projected)[0]
