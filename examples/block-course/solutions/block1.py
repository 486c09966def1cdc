"""block1: the two elementwise pieces of a transformer block."""
import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    """Normalise each token (the last axis) to mean 0 and variance 1, then scale and shift."""
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = x.var(axis=-1, keepdims=True)  # (..., 1), biased: the mean of squared deviations
    return (x - mean) / np.sqrt(var + eps) * gamma + beta  # (..., d)


def gelu(x):
    """GPT-2's GELU: the tanh approximation of x times the normal CDF at x."""
    inner = np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)  # same shape as x
    return 0.5 * x * (1 + np.tanh(inner))
