# expect: tag score_spread spread_of_scaled_scores
# expect: others full
# mistake: score_spread spread_of_scaled_scores
# base: reference
# One row at a time, and the spread measured on the scores after the 1/sqrt(d) scaling.

import numpy as np


def score_spread(d, n_rows, n_keys, rng):
    all_scaled, top_raw, top_scaled = [], [], []
    for _ in range(n_rows):
        q = rng.standard_normal(d)
        keys = rng.standard_normal((n_keys, d))
        s = keys @ q
        scaled = s / np.sqrt(d)
        all_scaled.extend(scaled.tolist())
        top_raw.append(softmax(s).max())
        top_scaled.append(softmax(scaled).max())
    return float(np.std(all_scaled)), float(np.mean(top_raw)), float(np.mean(top_scaled))
