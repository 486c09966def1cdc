# expect: zero induction_heads
# expect: tag induction_heads induction_values_read_prev
# expect: others full
# mistake: induction_heads induction_values_read_prev
# base: reference
# Layer 2 finds the right position, then copies the token that came before it (prev)
# instead of its own.

import numpy as np


def induction_heads(n_vocab, T):
    d = 2 * n_vocab + T
    first = [np.concatenate([W, np.zeros((n_vocab, W.shape[1]))]) for W in previous_token_head(n_vocab, T)]
    big = 12.0 * np.sqrt(n_vocab)
    W_Q2, W_K2, W_V2 = np.zeros((d, n_vocab)), np.zeros((d, n_vocab)), np.zeros((d, n_vocab))
    W_Q2[:n_vocab] = big * np.eye(n_vocab)
    W_K2[n_vocab + T:] = np.eye(n_vocab)
    W_V2[n_vocab + T:] = np.eye(n_vocab)
    return (*first, W_Q2, W_K2, W_V2)
