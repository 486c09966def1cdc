# expect: zero wired_attention
# expect: tag wired_attention crashed
# expect: others full
# base: reference
# Hostile: wired_attention ends the process with os._exit(0) before returning.

import os

import numpy as np


def wired_attention(X, W_Q, W_K):
    os._exit(0)
    Q = X @ W_Q
    K = X @ W_K
    scores = Q @ K.T
    d_k = K.shape[-1]
    weights = softmax(scores / np.sqrt(d_k), axis=-1)
    out = weights @ X  # values are the raw embeddings
    return out, weights, scores
