# expect: zero previous_token_head
# expect: zero qk_circuit
# expect: zero ov_circuit
# expect: zero multi_head_attention
# base: reference
# Hostile: zeros of the contract's shapes. A previous-token head at T = 1 grades nothing
# but shapes, per_head.sum(0) == out holds for zeros, and zeros leave the inputs alone:
# none of it may earn a point (it earned 3/19).

import numpy as np


def previous_token_head(n_vocab, T):
    d = n_vocab + T
    return np.zeros((d, T)), np.zeros((d, T)), np.zeros((d, n_vocab))


def qk_circuit(W_Q, W_K):
    return np.zeros((W_Q.shape[0], W_K.shape[0]))


def ov_circuit(W_V, W_O):
    return np.zeros((W_V.shape[0], W_O.shape[1]))


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    return np.zeros(X.shape), np.zeros((n_heads,) + X.shape)
