# expect: partial score_spread
# expect: others full
# Hostile: right everywhere except score_spread, which returns the notebook's table for the
# widths in it and NaN for any other width. It earned 34/34 while the check at a width the
# table lacks failed only when `abs(got - want) > tol` (false for NaN); now it loses that check.

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
    weights = softmax(scores / np.sqrt(d_k), axis=-1)
    out = weights @ X  # values are the raw embeddings
    return out, weights, scores



def score_spread(d, n_rows, n_keys, rng):
    table = {4: (0.52, 0.34), 16: (0.75, 0.36), 64: (0.88, 0.36), 256: (0.94, 0.37)}
    if d not in table:
        return float("nan"), float("nan"), float("nan")
    return float(np.sqrt(d)), table[d][0], table[d][1]
