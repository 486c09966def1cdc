# expect: zero softmax
# expect: zero raw_self_attention
# expect: zero wired_attention
# expect: zero score_spread
# base: reference
# Hostile: zeros of the contract's shapes and dtypes, no attention computed. Leaving its
# inputs alone earned it a point per exercise; a property counts only for a real output.

import numpy as np


def softmax(S, axis=-1):
    return np.zeros(np.shape(S))


def raw_self_attention(X):
    T = X.shape[0]
    return np.zeros(X.shape), np.zeros((T, T))


def wired_attention(X, W_Q, W_K):
    T = X.shape[0]
    return np.zeros(X.shape), np.zeros((T, T)), np.zeros((T, T))


def score_spread(d, n_rows, n_keys, rng):
    return 0.0, 0.0, 0.0
