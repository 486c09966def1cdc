# expect: tag wired_attention missing_scale
# expect: others full
# wired_attention forgets to divide the scores by sqrt(d_k).

import numpy as np


def softmax(S, axis=-1):
    S = np.asarray(S)
    shifted = S - S.max(axis=axis, keepdims=True)  # largest entry of each slice becomes 0
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def raw_self_attention(X):
    scores = X @ X.T  # (T, T), unscaled
    weights = softmax(scores, axis=-1)
    out = weights @ X
    return out, weights


def wired_attention(X, W_Q, W_K):
    Q = X @ W_Q
    K = X @ W_K
    scores = Q @ K.T
    d_k = K.shape[-1]
    weights = softmax(scores, axis=-1)
    out = weights @ X  # values are the raw embeddings
    return out, weights, scores


def score_spread(d, n_rows, n_keys, rng):
    q = rng.standard_normal((n_rows, 1, d))
    k = rng.standard_normal((n_rows, n_keys, d))
    scores = (q * k).sum(-1)  # (n_rows, n_keys)
    top_unscaled = softmax(scores).max(-1).mean()
    top_scaled = softmax(scores / np.sqrt(d)).max(-1).mean()
    return float(scores.std()), float(top_unscaled), float(top_scaled)
