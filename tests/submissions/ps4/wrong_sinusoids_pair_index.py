# expect: zero sinusoidal_positions
# expect: tag sinusoidal_positions pair_index_not_doubled
# expect: others full
# mistake: sinusoidal_positions pair_index_not_doubled
# base: reference
# Frequencies from the pair's number i, where the formula's exponent has 2i.

import numpy as np


def sinusoidal_positions(T, d):
    if T <= 0 or d <= 0 or d % 2:
        raise ValueError(f"bad sizes T={T}, d={d}")
    freqs = 1.0 / 10000 ** (np.arange(d // 2) / d)
    angles = np.outer(np.arange(T), freqs)
    pe = np.empty((T, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
