# expect: full
# base: reference
# Pure-Python loops over rows and tokens (math.exp, sums by hand); numpy only to hold arrays.

import math

import numpy as np


def _softmax_row(row):
    m = max(row)
    exps = [math.exp(v - m) for v in row]  # math.exp(-inf) == 0.0
    total = sum(exps)
    return [e / total for e in exps]


def softmax(S, axis=-1):
    S = np.asarray(S, dtype=np.float64)
    moved = np.moveaxis(S, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    out = np.empty_like(flat)
    for r in range(flat.shape[0]):
        out[r] = _softmax_row([float(v) for v in flat[r]])
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def _dot(a, b):
    return sum(float(x) * float(y) for x, y in zip(a, b))


def raw_self_attention(X):
    T, d = X.shape
    scores = np.zeros((T, T))
    for i in range(T):
        for j in range(T):
            scores[i, j] = _dot(X[i], X[j])
    weights = softmax(scores)
    out = np.zeros((T, d))
    for i in range(T):
        for j in range(T):
            out[i] += weights[i, j] * X[j]
    return out, weights


def wired_attention(X, W_Q, W_K):
    T = X.shape[0]
    Q, K = X @ W_Q, X @ W_K
    scores = np.zeros((T, T))
    for i in range(T):
        for j in range(T):
            scores[i, j] = _dot(Q[i], K[j])
    weights = softmax(scores / math.sqrt(K.shape[1]))
    out = np.zeros(X.shape)
    for i in range(T):
        for j in range(T):
            out[i] += weights[i, j] * X[j]
    return out, weights, scores


def score_spread(d, n_rows, n_keys, rng):
    all_scores, tops_unscaled, tops_scaled = [], [], []
    for _ in range(n_rows):
        q = rng.standard_normal(d)
        row = [float(q @ rng.standard_normal(d)) for _ in range(n_keys)]
        all_scores.extend(row)
        tops_unscaled.append(max(_softmax_row(row)))
        tops_scaled.append(max(_softmax_row([s / math.sqrt(d) for s in row])))
    mean = sum(all_scores) / len(all_scores)
    std = math.sqrt(sum((s - mean) ** 2 for s in all_scores) / len(all_scores))
    return std, sum(tops_unscaled) / n_rows, sum(tops_scaled) / n_rows
