# expect: full
# timeout: 1
# base: reference
# Hostile: a notebook-style `while True: pass` at module level between the definitions.
# The functions defined before it (the reference's) and after it must still be graded:
# causal_mask is deleted before the loop and defined again after it, so it scores only
# if the grader goes on past the loop.

import numpy as np

del causal_mask


while True:
    pass


def causal_mask(T):
    return np.triu(np.full((T, T), -np.inf), k=1)
