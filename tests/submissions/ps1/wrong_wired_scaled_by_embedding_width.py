# expect: tag wired_attention scale_by_d_model
# expect: others full
# mistake: wired_attention scale_by_d_model
# base: reference
# The scale taken from the embeddings' width, d, instead of the keys', d_k: on the river bank
# (d = 4, d_k = 2) it divides by 2, as dividing by d_k would.

import math

import numpy as np


def wired_attention(X, W_Q, W_K):
    T, d = X.shape
    Q, K = X @ W_Q, X @ W_K
    scores = Q @ K.T
    weights = softmax(scores / math.sqrt(d), axis=-1)
    return weights @ X, weights, scores
