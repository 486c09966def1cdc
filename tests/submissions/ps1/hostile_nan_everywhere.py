# expect: zero softmax
# expect: zero raw_self_attention
# expect: zero wired_attention
# expect: zero score_spread
# base: reference
# Hostile: every function returns NaN of the contract's shapes, and score_spread three NaNs.
# NaN compares false with everything, so a judge that fails only when `difference > tol`
# is true would pass it (three NaNs earned 3/7 on score_spread). No judge may, and NaN
# everywhere is no overflow, so no misconception is named.

import numpy as np


def softmax(S, axis=-1):
    return np.full(np.shape(S), np.nan)


def raw_self_attention(X):
    T = X.shape[0]
    return np.full(X.shape, np.nan), np.full((T, T), np.nan)


def wired_attention(X, W_Q, W_K):
    T = X.shape[0]
    return np.full(X.shape, np.nan), np.full((T, T), np.nan), np.full((T, T), np.nan)


def score_spread(d, n_rows, n_keys, rng):
    return float("nan"), float("nan"), float("nan")
