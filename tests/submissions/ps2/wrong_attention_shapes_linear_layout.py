# expect: tag attention_shapes weights_transposed
# expect: others full
# mistake: attention_shapes weights_transposed
# base: reference
# The weight matrices in nn.Linear's (out, in) layout.

import numpy as np


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    sizes = [B, T_q, T_k, d, d_k, d_v]
    for n in sizes:
        if type(n) is bool or not isinstance(n, (int, np.integer)) or n <= 0:
            raise ValueError("sizes must be positive integers")
    B, T_q, T_k, d, d_k, d_v = map(int, sizes)
    shapes = {}
    shapes["X_q"], shapes["X_kv"] = (B, T_q, d), (B, T_k, d)
    shapes["W_Q"], shapes["W_K"], shapes["W_V"] = (d_k, d), (d_k, d), (d_v, d)
    shapes["Q"], shapes["K"], shapes["V"] = (B, T_q, d_k), (B, T_k, d_k), (B, T_k, d_v)
    shapes["S"] = shapes["A"] = (B, T_q, T_k)
    shapes["O"] = (B, T_q, d_v)
    return shapes
