# expect: zero previous_token_head
# expect: zero qk_circuit
# expect: zero ov_circuit
# expect: zero multi_head_attention
# base: reference
# Hostile: uniform weights: every head spreads its attention evenly over the tokens, so
# each head's part is the mean of its values through its block of W_O, and the parts add
# up to out. The circuits are constant matrices of the right shape.

import numpy as np


def previous_token_head(n_vocab, T):
    d = n_vocab + T
    return np.zeros((d, T)), np.zeros((d, T)), np.ones((d, n_vocab)) / n_vocab


def qk_circuit(W_Q, W_K):
    return np.ones((W_Q.shape[0], W_K.shape[0]))


def ov_circuit(W_V, W_O):
    return np.ones((W_V.shape[0], W_O.shape[1]))


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    d_head = W_Q.shape[1] // n_heads
    per_head = []
    for h in range(n_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        V = X @ W_V[:, c]
        mixed = np.broadcast_to(V.mean(-2, keepdims=True), V.shape)
        per_head.append(mixed @ W_O[c, :])
    per_head = np.stack(per_head)
    return per_head.sum(0), per_head
