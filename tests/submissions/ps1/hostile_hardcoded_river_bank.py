# expect: partial raw_self_attention
# expect: others full
# base: reference
# Hostile: raw_self_attention returns the worked example's weights table whatever X is.
# It earns the visible river-bank check and must earn none of the hidden ones.

import numpy as np


def raw_self_attention(X):
    weights = np.array([[0.576, 0.212, 0.212], [0.193, 0.475, 0.332], [0.185, 0.317, 0.498]])
    river_bank = np.array([[0.0, 0.0, 0.0, 1.0], [0.9, 0.0, 0.3, 0.0], [0.3, 0.3, 0.9, 0.0]])
    out = weights @ river_bank
    return out, weights
