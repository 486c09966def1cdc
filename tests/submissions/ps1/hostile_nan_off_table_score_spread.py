# expect: partial score_spread
# expect: others full
# base: reference
# Hostile: right everywhere except score_spread, which returns the notebook's table for the
# widths in it and NaN for any other width. It earned 34/34 while the check at a width the
# table lacks failed only when `abs(got - want) > tol` (false for NaN); now it loses that check.

import numpy as np


def score_spread(d, n_rows, n_keys, rng):
    table = {4: (0.52, 0.34), 16: (0.75, 0.36), 64: (0.88, 0.36), 256: (0.94, 0.37)}
    if d not in table:
        return float("nan"), float("nan"), float("nan")
    return float(np.sqrt(d)), table[d][0], table[d][1]
