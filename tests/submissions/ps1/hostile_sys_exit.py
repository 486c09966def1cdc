# expect: zero score_spread
# expect: tag score_spread crashed
# expect: others full
# base: reference
# Hostile: sys.exit() inside score_spread, and sys.exit() at module level after every
# definition (the definitions before it must still be graded).

import sys

import numpy as np


def score_spread(d, n_rows, n_keys, rng):
    sys.exit()
    q = rng.standard_normal((n_rows, 1, d))
    k = rng.standard_normal((n_rows, n_keys, d))
    scores = (q * k).sum(-1)  # (n_rows, n_keys)
    top_unscaled = softmax(scores).max(-1).mean()
    top_scaled = softmax(scores / np.sqrt(d)).max(-1).mean()
    return float(scores.std()), float(top_unscaled), float(top_scaled)


sys.exit()
