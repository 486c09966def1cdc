# expect: tag wired_attention queries_keys_swapped
# expect: others full
# mistake: wired_attention queries_keys_swapped
# base: reference
# Scores written with einsum, keys' index first: each row holds one key's scores against
# every query.

import numpy as np


def wired_attention(X, W_Q, W_K):
    queries = np.einsum("td,dk->tk", X, W_Q)
    keys = np.einsum("td,dk->tk", X, W_K)
    raw = np.einsum("ik,jk->ij", keys, queries)
    attn = softmax(raw / np.sqrt(keys.shape[1]), axis=-1)
    return attn @ X, attn, raw
