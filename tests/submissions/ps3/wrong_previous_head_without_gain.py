# expect: zero previous_token_head
# expect: tag previous_token_head head_not_sharp
# expect: others full
# mistake: previous_token_head head_not_sharp
# base: reference
# The right shift, with np.eye's offset, and no gain to beat the 1/sqrt(T) scale.

import numpy as np


def previous_token_head(n_vocab, T):
    d = n_vocab + T
    W_Q = np.vstack([np.zeros((n_vocab, T)), np.eye(T, k=-1)])
    W_K = np.vstack([np.zeros((n_vocab, T)), np.eye(T)])
    W_V = np.vstack([np.eye(n_vocab), np.zeros((T, n_vocab))])
    assert W_Q.shape == (d, T)
    return W_Q, W_K, W_V
