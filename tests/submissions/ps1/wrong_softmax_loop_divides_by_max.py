# expect: tag softmax softmax_divides_by_max
# expect: tag raw_self_attention softmax_divides_by_max
# expect: tag wired_attention softmax_divides_by_max
# expect: tag score_spread softmax_divides_by_max
# expect: others full
# mistake: softmax softmax_divides_by_max
# base: reference
# A softmax written row by row that "normalises" by the row's largest exp() instead of the
# sum; every exercise that calls it inherits the mistake.

import numpy as np


def softmax(S, axis=-1):
    S = np.asarray(S, dtype=float)
    rows = np.moveaxis(S, axis, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    result = np.empty_like(flat)
    for r in range(flat.shape[0]):
        biggest = np.max(flat[r])
        exps = np.exp(flat[r] - biggest)
        result[r] = exps / np.max(exps)  # normalise
    return np.moveaxis(result.reshape(rows.shape), -1, axis)
