"""ps2: the full head with shapes, the fused QKV projection, the bias that does nothing."""
import numpy as np

from .ps1 import softmax


def causal_mask(T):
    """(T, T) additive mask: 0 where key j <= query i, -inf where j > i."""
    return np.triu(np.full((T, T), -np.inf), k=1)  # (T, T)


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    """Q (..., T_q, d_k), K (..., T_k, d_k), V (..., T_k, d_v) -> out (..., T_q, d_v), weights."""
    if scale is None:
        scale = 1.0 / np.sqrt(Q.shape[-1])
    scores = (Q @ np.swapaxes(K, -1, -2)) * scale  # (..., T_q, T_k)
    if mask is not None:
        scores = scores + mask  # -inf hides a key
    weights = softmax(scores, axis=-1)  # (..., T_q, T_k), over the keys
    return weights @ V, weights  # (..., T_q, d_v)


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    """Every array's shape in one cross-attention head."""
    for name, n in dict(B=B, T_q=T_q, T_k=T_k, d=d, d_k=d_k, d_v=d_v).items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    B, T_q, T_k, d, d_k, d_v = (int(n) for n in (B, T_q, T_k, d, d_k, d_v))
    return {
        "X_q": (B, T_q, d), "X_kv": (B, T_k, d),
        "W_Q": (d, d_k), "W_K": (d, d_k), "W_V": (d, d_v),
        "Q": (B, T_q, d_k), "K": (B, T_k, d_k), "V": (B, T_k, d_v),
        "S": (B, T_q, T_k), "A": (B, T_q, T_k), "O": (B, T_q, d_v),
    }


def fused_self_attention(X, W_qkv, scale):
    """X (..., T, d), W_qkv (d, 3h) = [W_Q | W_K | W_V] -> (..., T, h)."""
    if W_qkv.shape[1] % 3 != 0:
        raise ValueError(f"W_qkv has {W_qkv.shape[1]} columns, not a multiple of 3")
    if X.shape[-1] != W_qkv.shape[0]:
        raise ValueError(f"X has width {X.shape[-1]} but W_qkv expects {W_qkv.shape[0]}")
    Q, K, V = np.split(X @ W_qkv, 3, axis=-1)  # each (..., T, h)
    weights = softmax((Q @ np.swapaxes(K, -1, -2)) * scale, axis=-1)  # (..., T, T)
    return weights @ V  # (..., T, h)


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    """Scaled single-head attention with biased projections -> (..., T, d_v)."""
    Q = X @ W_Q + b_Q  # (..., T, d_k)
    K = X @ W_K + b_K  # (..., T, d_k); b_K shifts a whole row of scores by q . b_K
    V = X @ W_V + b_V  # (..., T, d_v)
    out, _ = scaled_dot_product_attention(Q, K, V)
    return out  # (..., T, d_v)
