# expect: tag scaled_dot_product_attention mask_renormalised
# expect: others full
# mistake: scaled_dot_product_attention mask_renormalised
# base: reference
# Softmax first, then the masked keys zeroed and each row renormalised.

import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    if scale is None:
        scale = Q.shape[-1] ** -0.5
    w = softmax(Q @ np.swapaxes(K, -1, -2) * scale, axis=-1)
    if mask is not None:
        keep = np.broadcast_to(mask == 0, w.shape)
        w = w * keep
        w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
