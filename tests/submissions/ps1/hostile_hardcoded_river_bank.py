# expect: partial raw_self_attention
# expect: others full
# Hostile: raw_self_attention returns the worked example's weights table whatever X is.
# It earns the visible river-bank check and must earn none of the hidden ones.

import numpy as np


def softmax(S, axis=-1):
    S = np.asarray(S)
    shifted = S - S.max(axis=axis, keepdims=True)  # largest entry of each slice becomes 0
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def raw_self_attention(X):
    weights = np.array([[0.576, 0.212, 0.212], [0.193, 0.475, 0.332], [0.185, 0.317, 0.498]])
    river_bank = np.array([[0.0, 0.0, 0.0, 1.0], [0.9, 0.0, 0.3, 0.0], [0.3, 0.3, 0.9, 0.0]])
    out = weights @ river_bank
    return out, weights


def wired_attention(X, W_Q, W_K):
    Q = X @ W_Q
    K = X @ W_K
    scores = Q @ K.T
    d_k = K.shape[-1]
    weights = softmax(scores / np.sqrt(d_k), axis=-1)
    out = weights @ X  # values are the raw embeddings
    return out, weights, scores


def score_spread(d, n_rows, n_keys, rng):
    q = rng.standard_normal((n_rows, 1, d))
    k = rng.standard_normal((n_rows, n_keys, d))
    scores = (q * k).sum(-1)  # (n_rows, n_keys)
    top_unscaled = softmax(scores).max(-1).mean()
    top_scaled = softmax(scores / np.sqrt(d)).max(-1).mean()
    return float(scores.std()), float(top_unscaled), float(top_scaled)
