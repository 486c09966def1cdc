# expect: full
# base: reference
# Unusual but right: attention one batch element at a time over np.ndindex, the mask
# broadcast up front, and a scale of 0.0 honoured.

import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    scale = 1.0 / np.sqrt(Q.shape[-1]) if scale is None else float(scale)
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    T_q, T_k = Q.shape[-2], K.shape[-2]
    Qb = np.broadcast_to(Q, lead + Q.shape[-2:])
    Kb = np.broadcast_to(K, lead + K.shape[-2:])
    Vb = np.broadcast_to(V, lead + V.shape[-2:])
    Mb = np.broadcast_to(np.zeros((T_q, T_k)) if mask is None else mask, lead + (T_q, T_k))
    dtype = np.result_type(Q, K, V, 1.0)
    out = np.empty(lead + (T_q, V.shape[-1]), dtype=dtype)
    weights = np.empty(lead + (T_q, T_k), dtype=dtype)
    for idx in np.ndindex(*lead):
        s = (Qb[idx] @ Kb[idx].T) * scale + Mb[idx]
        w = softmax(s, axis=-1)
        weights[idx] = w
        out[idx] = w @ Vb[idx]
    return out, weights
