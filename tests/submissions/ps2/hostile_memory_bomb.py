# expect: zero attention_with_biases
# expect: tag attention_with_biases crashed
# expect: others full
# base: reference
# Hostile: attention_with_biases allocates 50 GB.

import numpy as np


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    hog = np.ones(50 * 2**30 // 8)  # 50 GB of float64
    hog[::4096] = 2.0
    Q = X @ W_Q + b_Q
    K = X @ W_K + b_K
    V = X @ W_V + b_V
    out, _ = scaled_dot_product_attention(Q, K, V)
    return out
