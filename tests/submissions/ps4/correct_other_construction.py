# expect: full
# base: reference
# Every ps4 answer built another way: a cache preallocated as arrays, the sinusoidal table
# entry by entry, RoPE with complex numbers (Meta's LLaMA), the bias effect with einsum, and
# an induction head with other gains and values twice as large.

import numpy as np


def attend_step(q, K_cache, V_cache, scale=None):
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    weights = softmax(np.einsum("td,d->t", K_cache, q) * scale)
    return np.einsum("t,tv->v", weights, V_cache), weights


def decode_with_cache(X, W_Q, W_K, W_V):
    T = X.shape[0]
    K_cache = np.zeros((T, W_K.shape[1]), dtype=np.result_type(X, W_K))
    V_cache = np.zeros((T, W_V.shape[1]), dtype=np.result_type(X, W_V))
    out = np.zeros((T, W_V.shape[1]), dtype=np.result_type(X, W_V))
    for t in range(T):
        K_cache[t], V_cache[t] = X[t] @ W_K, X[t] @ W_V
        out[t] = attend_step(X[t] @ W_Q, K_cache[: t + 1], V_cache[: t + 1])[0]
    return out


def sinusoidal_positions(T, d):
    if not (T > 0 and d > 0 and d % 2 == 0):
        raise ValueError("T and d must be positive, d even")
    PE = np.zeros((T, d))
    for p in range(T):
        for i in range(d // 2):
            PE[p, 2 * i] = np.sin(p / 10000 ** (2 * i / d))
            PE[p, 2 * i + 1] = np.cos(p / 10000 ** (2 * i / d))
    return PE


def rope(X, base=10000.0):
    T, d = X.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    z = (X[..., 0::2] + 1j * X[..., 1::2]) * np.exp(1j * np.outer(np.arange(T), base ** (-np.arange(0, d, 2) / d)))
    return np.stack([z.real, z.imag], axis=-1).reshape(X.shape)


def key_bias_effect(Q, K, b_K, base=10000.0):
    def weights(Q, K):
        return softmax(np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1]))
    RQ = rope(Q, base)
    return (float(np.max(np.abs(weights(Q, K + b_K) - weights(Q, K)))),
            float(np.max(np.abs(weights(RQ, rope(K + b_K, base)) - weights(RQ, rope(K, base))))))


def induction_heads(n_vocab, T):
    d = 2 * n_vocab + T
    W_Q1, W_K1, W_V1 = (np.vstack([W, np.zeros((n_vocab, W.shape[1]))]) for W in previous_token_head(n_vocab, T))
    W_Q2, W_K2, W_V2 = (np.zeros((d, n_vocab)) for _ in range(3))
    W_Q2[:n_vocab] = 30.0 * np.sqrt(n_vocab) * np.eye(n_vocab)
    W_K2[n_vocab + T:] = np.eye(n_vocab)
    W_V2[:n_vocab] = 2.0 * np.eye(n_vocab)
    return W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2
