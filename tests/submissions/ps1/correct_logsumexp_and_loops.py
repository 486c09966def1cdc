# expect: full
# base: reference
# Unusual but right: softmax through log-sum-exp on the moved axis, raw self-attention one
# query at a time, score_spread drawing keys query by query.

import numpy as np


def softmax(S, axis=-1):
    S = np.moveaxis(np.asarray(S), axis, -1)
    top = np.max(S, axis=-1, keepdims=True)
    log_total = top + np.log(np.sum(np.exp(S - top), axis=-1, keepdims=True))
    return np.moveaxis(np.exp(S - log_total), -1, axis)


def raw_self_attention(X):
    T = X.shape[0]
    weights = np.zeros((T, T))
    for i in range(T):
        weights[i] = softmax(np.array([X[i] @ X[j] for j in range(T)]))
    return weights @ X, weights


def score_spread(d, n_rows, n_keys, rng):
    scores = np.empty((n_rows, n_keys))
    for r in range(n_rows):
        q = rng.normal(size=d)
        scores[r] = rng.normal(size=(n_keys, d)) @ q
    peak = lambda s: softmax(s, axis=1).max(axis=1).mean()  # noqa: E731
    return float(scores.std()), float(peak(scores)), float(peak(scores / d ** 0.5))
