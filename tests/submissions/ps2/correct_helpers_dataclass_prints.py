# expect: full
# base: reference
# Helper functions, a @dataclass, functools.lru_cache, math and statistics, and a lot
# of printing at module level and in every call.

import functools
import math
import statistics
from dataclasses import dataclass, field

import numpy as np

DEBUG = True


def log(*parts):
    if DEBUG:
        print("[debug]", *parts)


@dataclass(frozen=True)
class HeadSizes:
    B: int
    T_q: int
    T_k: int
    d: int
    d_k: int
    d_v: int
    notes: list = field(default_factory=list)

    def shapes(self):
        B, T_q, T_k, d, d_k, d_v = self.B, self.T_q, self.T_k, self.d, self.d_k, self.d_v
        return {"X_q": (B, T_q, d), "X_kv": (B, T_k, d), "W_Q": (d, d_k), "W_K": (d, d_k),
                "W_V": (d, d_v), "Q": (B, T_q, d_k), "K": (B, T_k, d_k), "V": (B, T_k, d_v),
                "S": (B, T_q, T_k), "A": (B, T_q, T_k), "O": (B, T_q, d_v)}


def _positive_int(name, n):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def _stable_softmax(S):
    shifted = S - S.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


@functools.lru_cache(maxsize=None)
def _mask_cached(T):
    M = np.triu(np.full((T, T), -np.inf), k=1)
    M.flags.writeable = False
    return M


def causal_mask(T):
    log("causal_mask", T)
    return _mask_cached(T).copy()


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    d_k = Q.shape[-1]
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    scores = (Q @ np.swapaxes(K, -1, -2)) * scale
    if mask is not None:
        scores = scores + mask
    weights = _stable_softmax(scores)
    log("attention", Q.shape, K.shape, V.shape, "mean weight", statistics.fmean(weights.ravel().tolist()))
    return weights @ V, weights


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    names = ("B", "T_q", "T_k", "d", "d_k", "d_v")
    sizes = HeadSizes(*(_positive_int(n, v) for n, v in zip(names, (B, T_q, T_k, d, d_k, d_v))))
    log(sizes)
    return sizes.shapes()


def fused_self_attention(X, W_qkv, scale):
    if W_qkv.shape[1] % 3 != 0 or X.shape[-1] != W_qkv.shape[0]:
        raise ValueError(f"cannot use W_qkv {W_qkv.shape} with X {X.shape}")
    Q, K, V = np.split(X @ W_qkv, 3, axis=-1)
    out, weights = scaled_dot_product_attention(Q, K, V, scale=scale)
    log("fused", out.shape)
    print(np.array2string(weights, precision=3))
    return out


def attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    Q, K, V = (X @ W + b for W, b in ((W_Q, b_Q), (W_K, b_K), (W_V, b_V)))
    return scaled_dot_product_attention(Q, K, V)[0]


for i in range(300):
    print(f"warming up {i}: sqrt = {math.sqrt(i):.4f}", "#" * (i % 60))
print(attention_shapes(2, 5, 5, 16, 8, 8))
print(causal_mask(4))
