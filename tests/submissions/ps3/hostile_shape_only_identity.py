# expect: zero previous_token_head
# expect: zero qk_circuit
# expect: zero ov_circuit
# expect: zero multi_head_attention
# base: reference
# Hostile: identity-ish answers: the circuits are identity matrices, the previous-token
# head is identity projections (each position looks at itself), and every head of
# multi_head_attention attends only to its own token. The heads' parts add up to out.

import numpy as np


def previous_token_head(n_vocab, T):
    d = n_vocab + T
    return np.eye(d, T), np.eye(d, T), np.eye(d, n_vocab)


def qk_circuit(W_Q, W_K):
    return np.eye(W_Q.shape[0])


def ov_circuit(W_V, W_O):
    return np.eye(W_V.shape[0])


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    d_head = W_Q.shape[1] // n_heads
    per_head = np.stack([X @ W_V[:, h * d_head:(h + 1) * d_head] @ W_O[h * d_head:(h + 1) * d_head, :]
                         for h in range(n_heads)])
    return per_head.sum(0), per_head
