# expect: partial score_spread
# expect: others full
# base: reference
# Hostile: score_spread returns the notebook's table instead of measuring; it passes the
# widths in the table and must lose the check at a width and key count the table lacks.

import numpy as np


def score_spread(d, n_rows, n_keys, rng):
    table = {4: (0.52, 0.34), 16: (0.75, 0.36), 64: (0.88, 0.36), 256: (0.94, 0.37)}
    unscaled, scaled = table.get(d, (0.9, 0.36))
    return float(np.sqrt(d)), unscaled, scaled
