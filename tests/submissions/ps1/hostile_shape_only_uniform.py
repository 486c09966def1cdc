# expect: zero softmax
# expect: zero raw_self_attention
# expect: zero wired_attention
# expect: zero score_spread
# expect: tag score_spread spread_of_scaled_scores
# base: reference
# Hostile: uniform weights of the contract's shapes (every row sums to 1, none looks at a
# score), outputs blended with them, and score_spread's values for uniform weights. Rows
# that sum to 1 and a single token's output (X itself) are right for uniform weights too.

import numpy as np


def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    return np.ones_like(S) / S.shape[axis]


def raw_self_attention(X):
    T = X.shape[0]
    weights = np.full((T, T), 1.0 / T)
    return weights @ X, weights


def wired_attention(X, W_Q, W_K):
    T = X.shape[0]
    weights = np.full((T, T), 1.0 / T)
    return weights @ X, weights, np.zeros((T, T))


def score_spread(d, n_rows, n_keys, rng):
    return 1.0, 1.0 / n_keys, 1.0 / n_keys
