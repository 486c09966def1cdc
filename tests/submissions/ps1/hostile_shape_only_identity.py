# expect: zero softmax
# expect: zero raw_self_attention
# expect: zero wired_attention
# expect: zero score_spread
# base: reference
# Hostile: identity-ish answers: softmax returns its input, every token attends only to
# itself (weights = I, out = X), scores are X @ X.T. A single token's output is X itself,
# right by accident; it must not count.

import numpy as np


def softmax(S, axis=-1):
    return np.array(S, dtype=float)


def raw_self_attention(X):
    return X.copy(), np.eye(X.shape[0])


def wired_attention(X, W_Q, W_K):
    return X.copy(), np.eye(X.shape[0]), X @ X.T


def score_spread(d, n_rows, n_keys, rng):
    return float(d), 1.0, 1.0
