# expect: tag rope rotation_reversed
# expect: tag key_bias_effect rotation_reversed
# expect: others full
# mistake: rope rotation_reversed
# base: reference
# Explicit 2 x 2 rotation matrices, applied to row vectors as pair @ R: that is R's
# transpose, a turn by minus the angle. key_bias_effect, which calls rope, inherits it.

import numpy as np


def rope(X, base=10000.0):
    T, d = X.shape[-2], X.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    theta = np.arange(T)[:, None] * base ** (-2 * np.arange(d // 2) / d)  # (T, d/2)
    c, s = np.cos(theta), np.sin(theta)
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (T, d/2, 2, 2)
    pairs = X.reshape(X.shape[:-1] + (d // 2, 2))
    turned = np.einsum("...tpi,tpij->...tpj", pairs, R)
    return turned.reshape(X.shape)
