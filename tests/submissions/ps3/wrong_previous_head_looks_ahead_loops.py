# expect: zero previous_token_head
# expect: tag previous_token_head attends_to_next
# expect: others full
# mistake: previous_token_head attends_to_next
# base: reference
# Built with loops, with the offset the wrong way round: position i asks for position i + 1.

import numpy as np


def previous_token_head(n_vocab, T):
    d = n_vocab + T
    strength = 15 * np.sqrt(T)
    W_Q, W_K, W_V = np.zeros((d, T)), np.zeros((d, T)), np.zeros((d, n_vocab))
    for i in range(T - 1):
        W_Q[n_vocab + i, i + 1] = strength
    for j in range(T):
        W_K[n_vocab + j, j] = 1.0
    for v in range(n_vocab):
        W_V[v, v] = 1.0
    return W_Q, W_K, W_V
