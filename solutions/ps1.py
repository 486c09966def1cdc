"""ps1: naive attention fails; separate queries and keys; why divide by sqrt(d_k)."""
import numpy as np


def softmax(S, axis=-1):
    """Stable softmax of ``S`` along ``axis``; same shape as ``S``."""
    S = np.asarray(S)
    shifted = S - S.max(axis=axis, keepdims=True)  # largest entry becomes 0: exp cannot overflow
    e = np.exp(shifted)  # exp(-inf) == 0 exactly
    return e / e.sum(axis=axis, keepdims=True)


def raw_self_attention(X):
    """Each token is its own query, key and value. X (T, d) -> out (T, d), weights (T, T)."""
    scores = X @ X.T  # (T, T), unscaled
    weights = softmax(scores, axis=-1)  # (T, T), each row sums to 1
    out = weights @ X  # (T, d)
    return out, weights


def wired_attention(X, W_Q, W_K):
    """Separate queries and keys, raw values. X (T, d), W_Q and W_K (d, d_k)."""
    Q = X @ W_Q  # (T, d_k)
    K = X @ W_K  # (T, d_k)
    scores = Q @ K.T  # (T, T), unscaled
    weights = softmax(scores / np.sqrt(K.shape[-1]), axis=-1)  # (T, T)
    out = weights @ X  # (T, d): values are the raw embeddings
    return out, weights, scores


def score_spread(d, n_rows, n_keys, rng):
    """How far query-key scores spread at width d, and how peaked softmax gets."""
    q = rng.standard_normal((n_rows, 1, d))  # (n_rows, 1, d)
    k = rng.standard_normal((n_rows, n_keys, d))  # (n_rows, n_keys, d)
    scores = (q * k).sum(-1)  # (n_rows, n_keys)
    top_unscaled = softmax(scores, axis=-1).max(-1).mean()
    top_scaled = softmax(scores / np.sqrt(d), axis=-1).max(-1).mean()
    return float(scores.std()), float(top_unscaled), float(top_scaled)
