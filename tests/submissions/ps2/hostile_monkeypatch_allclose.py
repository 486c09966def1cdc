# expect: zero causal_mask
# expect: others full
# base: reference
# Hostile: np.allclose, np.isclose and np.testing.assert_allclose are patched to always
# agree, at module level, and causal_mask is wrong (an int 0/1 matrix); the patches must not
# earn it anything.

import numpy as np

np.allclose = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, bool)
np.testing.assert_allclose = lambda *args, **kwargs: None


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=int))
