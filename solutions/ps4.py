"""ps4: decoding with a KV cache, where positions come from, an induction head."""
import numpy as np

from .ps1 import softmax
from .ps3 import previous_token_head


def attend_step(q, K_cache, V_cache, scale=None):
    """One query against the t cached keys and values. q (d_k,) -> out (d_v,), weights (t,)."""
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    scores = (K_cache @ q) * scale  # (t,)
    weights = softmax(scores, axis=-1)  # (t,)
    return weights @ V_cache, weights  # (d_v,), (t,)


def decode_with_cache(X, W_Q, W_K, W_V):
    """Positions 0..T-1 one at a time, each attending to the cache so far. X (T, d) -> (T, d_v)."""
    K_cache, V_cache, outs = [], [], []
    for t in range(X.shape[0]):
        K_cache.append(X[t] @ W_K)  # (d_k,): position t joins the cache before it attends
        V_cache.append(X[t] @ W_V)  # (d_v,)
        out, _ = attend_step(X[t] @ W_Q, np.stack(K_cache), np.stack(V_cache))  # keys 0..t only
        outs.append(out)
    return np.stack(outs)  # (T, d_v)


def sinusoidal_positions(T, d):
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d)). -> (T, d)"""
    if T < 1 or d < 1 or d % 2:
        raise ValueError(f"need T >= 1 and an even d >= 2, got T = {T}, d = {d}")
    i = np.arange(0, d, 2)  # (d/2,): 2i, the even columns
    angles = np.arange(T)[:, None] / 10000.0 ** (i / d)  # (T, d/2): position p, pair i
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(T, d)  # (T, d): sin, cos interleaved


def rope(X, base=10000.0):
    """Rotate each neighbour pair (x[2i], x[2i+1]) at position p by p * base^(-2i/d). X (..., T, d)."""
    T, d = X.shape[-2:]
    if d % 2:
        raise ValueError(f"rope needs an even d, got {d}")
    angles = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)  # (T, d/2)
    cos, sin = np.cos(angles), np.sin(angles)
    x_even, x_odd = X[..., 0::2], X[..., 1::2]  # (..., T, d/2): the pairs are neighbours
    rotated = [x_even * cos - x_odd * sin, x_even * sin + x_odd * cos]  # each (..., T, d/2)
    return np.stack(rotated, axis=-1).reshape(X.shape)  # (..., T, d)


def key_bias_effect(Q, K, b_K, base=10000.0):
    """Largest change in softmax(Q K^T / sqrt(d)) from adding b_K to every key: (plain, rotated)."""
    scale = 1.0 / np.sqrt(Q.shape[-1])

    def weights(Q, K):
        return softmax((Q @ np.swapaxes(K, -1, -2)) * scale, axis=-1)  # (..., T_q, T_k)

    plain = np.abs(weights(Q, K + b_K) - weights(Q, K)).max()  # 0: q . b_K shifts a whole row
    Q_rot = rope(Q, base)  # (..., T, d)
    rotated = np.abs(weights(Q_rot, rope(K + b_K, base)) - weights(Q_rot, rope(K, base))).max()
    return float(plain), float(rotated)


def induction_heads(n_vocab, T):
    """Two attention-only layers on x_t = [onehot(token) | onehot(t) | prev]; layer 2 predicts token t+1.

    -> W_Q1, W_K1 (d, T), W_V1 (d, n_vocab), W_Q2, W_K2, W_V2 (d, n_vocab), d = 2 n_vocab + T.
    """
    d = 2 * n_vocab + T
    prev = slice(n_vocab + T, d)  # the slot layer 1 writes into
    W_Q1, W_K1, W_V1 = (np.vstack([W, np.zeros((n_vocab, W.shape[1]))])  # (d, .): layer 1 ignores prev
                        for W in previous_token_head(n_vocab, T))
    # Layer 2 is scaled by 1/sqrt(n_vocab); the matching key must beat up to T - 1 others,
    # and layer 1 leaves at most 0.001 of its weight elsewhere: a logit gap of 12 is ample.
    gain = 12.0 * np.sqrt(n_vocab)
    W_Q2 = np.zeros((d, n_vocab))  # (d, n_vocab): "which token am I?"
    W_Q2[:n_vocab] = gain * np.eye(n_vocab)
    W_K2 = np.zeros((d, n_vocab))  # (d, n_vocab): "which token came before me?"
    W_K2[prev] = np.eye(n_vocab)
    W_V2 = np.zeros((d, n_vocab))  # (d, n_vocab): "here is my token", the prediction copied
    W_V2[:n_vocab] = np.eye(n_vocab)
    return W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2
