# expect: tag scaled_dot_product_attention scale_as_divisor
# expect: tag attention_with_biases scale_as_divisor
# expect: others full
# mistake: scaled_dot_product_attention scale_as_divisor
# base: reference
# "Scaled" attention that divides by the scale it is given; attention_with_biases, which
# uses the default, inherits it.

import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    d_k = Q.shape[-1]
    scale = 1 / np.sqrt(d_k) if scale is None else scale
    logits = np.matmul(Q, np.swapaxes(K, -1, -2)) / scale
    if mask is not None:
        logits = logits + mask
    attn = softmax(logits, axis=-1)
    return np.matmul(attn, V), attn
