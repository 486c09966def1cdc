# expect: full
# einsum everywhere and a log-sum-exp softmax; math.sqrt for the scale.

import math

import numpy as np


def softmax(S, axis=-1):
    m = np.max(S, axis=axis, keepdims=True)
    log_z = m + np.log(np.sum(np.exp(S - m), axis=axis, keepdims=True))  # log-sum-exp
    return np.exp(S - log_z)


def raw_self_attention(X):
    scores = np.einsum("id,jd->ij", X, X)
    weights = softmax(scores)
    return np.einsum("ij,jd->id", weights, X), weights


def wired_attention(X, W_Q, W_K):
    Q = np.einsum("td,dk->tk", X, W_Q)
    K = np.einsum("td,dk->tk", X, W_K)
    scores = np.einsum("ik,jk->ij", Q, K)
    weights = softmax(scores / math.sqrt(K.shape[1]))
    return np.einsum("ij,jd->id", weights, X), weights, scores


def score_spread(d, n_rows, n_keys, rng):
    q = rng.normal(size=(n_rows, d))
    k = rng.normal(size=(n_rows, n_keys, d))
    scores = np.einsum("rd,rkd->rk", q, k)
    top_unscaled = softmax(scores).max(axis=1).mean()
    top_scaled = softmax(scores / math.sqrt(d)).max(axis=1).mean()
    return float(np.std(scores)), float(top_unscaled), float(top_scaled)
