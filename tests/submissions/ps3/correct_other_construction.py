# expect: full
# base: reference
# previous_token_head built the other way round (the key carries the shift and the gain,
# 10 * sqrt(T) instead of 12 * sqrt(T)); circuits with einsum; heads vectorised by reshaping.

import numpy as np


def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def causal_mask(T):
    return np.where(np.tri(T, dtype=bool), 0.0, -np.inf)


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    scale = Q.shape[-1] ** -0.5 if scale is None else scale
    scores = np.einsum("...qd,...kd->...qk", Q, K) * scale
    weights = softmax(scores if mask is None else scores + mask)
    return weights @ V, weights


def previous_token_head(n_vocab, T):
    d = n_vocab + T
    W_Q = np.zeros((d, T))
    W_Q[n_vocab:, :] = np.eye(T)  # a query says where it sits
    W_K = np.zeros((d, T))
    W_K[n_vocab:, :] = 10.0 * np.sqrt(T) * np.eye(T, k=1)  # key j answers the query at j + 1
    W_V = np.vstack([np.eye(n_vocab), np.zeros((T, n_vocab))])
    return W_Q, W_K, W_V


def qk_circuit(W_Q, W_K):
    return np.einsum("ik,jk->ij", W_Q, W_K)


def ov_circuit(W_V, W_O):
    return np.einsum("ih,hj->ij", W_V, W_O)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    *lead, T, d = X.shape
    d_head = W_Q.shape[1] // n_heads

    def heads(W):  # (..., T, n_heads * d_head) -> (..., n_heads, T, d_head)
        return np.swapaxes((X @ W).reshape(*lead, T, n_heads, d_head), -2, -3)

    o, _ = scaled_dot_product_attention(heads(W_Q), heads(W_K), heads(W_V),
                                        mask=causal_mask(T) if causal else None)
    W_O_blocks = W_O.reshape(n_heads, d_head, d)
    per_head = np.einsum("...htk,hkd->h...td", o, W_O_blocks)
    return per_head.sum(0), per_head
