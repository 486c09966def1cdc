# expect: zero sinusoidal_positions
# expect: tag sinusoidal_positions sin_cos_swapped
# expect: others full
# mistake: sinusoidal_positions sin_cos_swapped
# base: reference
# Loops over positions and pairs, with cosine in the even column and sine in the odd one.

import math

import numpy as np


def sinusoidal_positions(T, d):
    if T < 1 or d < 1 or d % 2 == 1:
        raise ValueError("T must be positive and d positive and even")
    table = np.zeros((T, d))
    for pos in range(T):
        for i in range(d // 2):
            angle = pos / math.pow(10000, 2 * i / d)
            table[pos, 2 * i] = math.cos(angle)
            table[pos, 2 * i + 1] = math.sin(angle)
    return table
