"""Known mistakes, each the reference answer with one edit, for diagnosing wrong answers.

Named <function>__<misconception id>[__<label>]; ids are CONTRACTS.md's. Hidden like the
solutions: each is one character away from a right answer.
"""
import numpy as np

from .ps1 import softmax
from .ps2 import causal_mask


def _naive_softmax(S, axis=-1):
    e = np.exp(S)  # overflows for scores past ~709
    return e / e.sum(axis=axis, keepdims=True)


def _attend(Q, K, V, mask=None, scale=None, axis=-1, stable=True):
    scores = (Q @ np.swapaxes(K, -1, -2)) * (1 / np.sqrt(Q.shape[-1]) if scale is None else scale)
    if mask is not None:
        scores = scores + mask
    weights = (softmax if stable else _naive_softmax)(scores, axis=axis)
    return weights @ V, weights


# ps1 ---------------------------------------------------------------------------------

def softmax__unstable_softmax(S, axis=-1):
    return _naive_softmax(S, axis)


def softmax__softmax_wrong_axis(S, axis=-1):
    return softmax(S, axis=-2 if axis in (-1, np.ndim(S) - 1) else -1)


def raw_self_attention__softmax_wrong_axis(X):
    weights = softmax(X @ X.T, axis=0)
    return weights @ X, weights


def raw_self_attention__unstable_softmax(X):
    weights = _naive_softmax(X @ X.T)
    return weights @ X, weights


def _wired(X, W_Q, W_K, divisor, axis=-1, transpose=False):
    Q, K = (X @ W_Q.T, X @ W_K.T) if transpose else (X @ W_Q, X @ W_K)
    scores = Q @ K.T
    weights = softmax(scores / divisor, axis=axis)
    return weights @ X, weights, scores


def wired_attention__scale_by_dk(X, W_Q, W_K):
    return _wired(X, W_Q, W_K, W_K.shape[-1])


def wired_attention__missing_scale(X, W_Q, W_K):
    return _wired(X, W_Q, W_K, 1.0)


def wired_attention__softmax_wrong_axis(X, W_Q, W_K):
    return _wired(X, W_Q, W_K, np.sqrt(W_K.shape[-1]), axis=0)


def wired_attention__weights_transposed(X, W_Q, W_K):
    return _wired(X, W_Q, W_K, np.sqrt(W_K.shape[-1]), transpose=True)


def score_spread__scale_by_dk(d, n_rows, n_keys, rng):
    scores = rng.standard_normal((n_rows, d)) @ rng.standard_normal((d, n_keys))
    return float(scores.std()), float(softmax(scores).max(-1).mean()), float(softmax(scores / d).max(-1).mean())


def score_spread__missing_scale(d, n_rows, n_keys, rng):
    scores = rng.standard_normal((n_rows, d)) @ rng.standard_normal((d, n_keys))
    top = float(softmax(scores).max(-1).mean())
    return float(scores.std()), top, top


# ps2 ---------------------------------------------------------------------------------

def causal_mask__mask_wrong_direction(T):
    return causal_mask(T).T  # hides the past


def causal_mask__mask_wrong_direction__diagonal(T):
    return np.triu(np.full((T, T), -np.inf), k=0)  # hides the diagonal too


def scaled_dot_product_attention__scale_by_dk(Q, K, V, mask=None, scale=None):
    return _attend(Q, K, V, mask, 1 / Q.shape[-1] if scale is None else scale)


def scaled_dot_product_attention__missing_scale(Q, K, V, mask=None, scale=None):
    return _attend(Q, K, V, mask, 1.0)


def scaled_dot_product_attention__softmax_wrong_axis(Q, K, V, mask=None, scale=None):
    return _attend(Q, K, V, mask, scale, axis=-2)


def scaled_dot_product_attention__missing_mask(Q, K, V, mask=None, scale=None):
    return _attend(Q, K, V, None, scale)


def scaled_dot_product_attention__mask_wrong_direction(Q, K, V, mask=None, scale=None):
    return _attend(Q, K, V, None if mask is None else np.swapaxes(mask, -1, -2), scale)


def scaled_dot_product_attention__unstable_softmax(Q, K, V, mask=None, scale=None):
    return _attend(Q, K, V, mask, scale, stable=False)


def scaled_dot_product_attention__values_not_projected(Q, K, V, mask=None, scale=None):
    out, weights = _attend(Q, K, K, mask, scale)  # blends the keys: (..., T_q, d_k), not d_v wide
    return out, weights


def attention_shapes__shape_tq_tk_swapped(B, T_q, T_k, d, d_k, d_v):
    return {"X_q": (B, T_q, d), "X_kv": (B, T_k, d), "W_Q": (d, d_k), "W_K": (d, d_k),
            "W_V": (d, d_v), "Q": (B, T_q, d_k), "K": (B, T_k, d_k), "V": (B, T_k, d_v),
            "S": (B, T_k, T_q), "A": (B, T_k, T_q), "O": (B, T_q, d_v)}


def _fused(X, W_qkv, scale, order="qkv", axis=-1, values="v"):
    parts = dict(zip(order, np.split(X @ W_qkv, 3, axis=-1)))
    parts["x"] = X
    out, _ = _attend(parts["q"], parts["k"], parts[values], scale=scale, axis=axis)
    return out


def fused_self_attention__qkv_split_order__kqv(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, order="kqv")


def fused_self_attention__qkv_split_order__qvk(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, order="qvk")


def fused_self_attention__qkv_split_order__vqk(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, order="vqk")


def fused_self_attention__qkv_split_order__kvq(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, order="kvq")


def fused_self_attention__qkv_split_order__vkq(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, order="vkq")


def fused_self_attention__missing_scale(X, W_qkv, scale):
    return _fused(X, W_qkv, 1.0)


def fused_self_attention__softmax_wrong_axis(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, axis=-2)


def fused_self_attention__values_not_projected(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, values="k")


def fused_self_attention__values_not_projected__raw_x(X, W_qkv, scale):
    return _fused(X, W_qkv, scale, values="x")  # (..., T, d), not (..., T, h), when d != h


def _biased(X, W_Q, W_K, W_V, b_Q, b_K, b_V, scale=None, axis=-1, raw_values=False, transpose=False):
    t = (lambda W: W.T) if transpose else (lambda W: W)
    Q, K, V = X @ t(W_Q) + b_Q, X @ t(W_K) + b_K, X @ t(W_V) + b_V
    return _attend(Q, K, X if raw_values else V, scale=scale, axis=axis)[0]


def attention_with_biases__missing_scale(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return _biased(X, W_Q, W_K, W_V, b_Q, b_K, b_V, scale=1.0)


def attention_with_biases__scale_by_dk(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return _biased(X, W_Q, W_K, W_V, b_Q, b_K, b_V, scale=1 / W_K.shape[-1])


def attention_with_biases__softmax_wrong_axis(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return _biased(X, W_Q, W_K, W_V, b_Q, b_K, b_V, axis=-2)


def attention_with_biases__values_not_projected(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return _biased(X, W_Q, W_K, W_V, b_Q, b_K, b_V, raw_values=True)


def attention_with_biases__weights_transposed(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    return _biased(X, W_Q, W_K, W_V, b_Q, b_K, b_V, transpose=True)


# ps3 ---------------------------------------------------------------------------------

def qk_circuit__weights_transposed(W_Q, W_K):
    return W_K @ W_Q.T


def ov_circuit__weights_transposed(W_V, W_O):
    return (W_V @ W_O).T


def _heads(X, W_Q, W_K, W_V, W_O, n_heads, causal=False, scale=None, mask_fn=causal_mask, axis=-1):
    d_head = W_Q.shape[1] // n_heads
    mask = mask_fn(X.shape[-2]) if causal else None
    per_head = []
    for h in range(n_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        o, _ = _attend(X @ W_Q[:, c], X @ W_K[:, c], X @ W_V[:, c], mask=mask, scale=scale, axis=axis)
        per_head.append(o @ W_O[c, :])
    per_head = np.stack(per_head)
    return per_head.sum(0), per_head


def multi_head_attention__scale_by_dk(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    return _heads(X, W_Q, W_K, W_V, W_O, n_heads, causal, scale=n_heads / W_Q.shape[1])


def multi_head_attention__missing_scale(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    return _heads(X, W_Q, W_K, W_V, W_O, n_heads, causal, scale=1.0)


def multi_head_attention__missing_mask(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    return _heads(X, W_Q, W_K, W_V, W_O, n_heads, False)


def multi_head_attention__mask_wrong_direction(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    return _heads(X, W_Q, W_K, W_V, W_O, n_heads, causal, mask_fn=lambda T: causal_mask(T).T)


def multi_head_attention__values_not_projected(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    return _heads(X, W_Q, W_K, W_K, W_O, n_heads, causal)  # each head blends its keys


def multi_head_attention__softmax_wrong_axis(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    return _heads(X, W_Q, W_K, W_V, W_O, n_heads, causal, axis=-2)
