# expect: full
# base: reference
# Unusual but right: rope with explicit 2 x 2 rotation matrices applied as R @ pair, and the
# sinusoidal table from a complex exponential.

import numpy as np


def rope(X, base=10000.0):
    T, d = X.shape[-2], X.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    theta = np.arange(T)[:, None] * base ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(theta), np.sin(theta)
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (T, d/2, 2, 2): rows of R
    pairs = X.reshape(X.shape[:-1] + (d // 2, 2))
    return np.einsum("tpij,...tpj->...tpi", R, pairs).reshape(X.shape)


def sinusoidal_positions(T, d):
    if T < 1 or d < 1 or d % 2:
        raise ValueError("need T >= 1 and an even d >= 2")
    z = np.exp(1j * np.arange(T)[:, None] / 10000.0 ** (np.arange(0, d, 2) / d))
    return np.stack([z.imag, z.real], axis=-1).reshape(T, d)
