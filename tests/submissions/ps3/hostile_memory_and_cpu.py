# expect: full
# Isolation class 5, limits per process instead of per submission. Four processes each
# try to hold 1 GiB at once (2 GiB is the limit for the whole submission), and the limits it
# can read must bound its CPU time. All of it in a top-level cell, so the run goes on when
# the kernel ends it.

import numpy as np

import os
import sys

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def softmax(S, axis=-1):
    shifted = S - S.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def causal_mask(T):
    return np.triu(np.full((T, T), -np.inf), k=1)


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None):
    if scale is None:
        scale = 1.0 / np.sqrt(Q.shape[-1])
    scores = (Q @ np.swapaxes(K, -1, -2)) * scale
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def previous_token_head(n_vocab, T):
    d = n_vocab + T
    gain = 12.0 * np.sqrt(T)  # the grader divides the scores by sqrt(T)
    W_Q = np.zeros((d, T))
    W_Q[n_vocab + 1:, :-1] = gain * np.eye(T - 1)  # position i asks for position i - 1
    W_K = np.zeros((d, T))
    W_K[n_vocab:, :] = np.eye(T)  # a key says where it sits
    W_V = np.zeros((d, n_vocab))
    W_V[:n_vocab, :] = np.eye(n_vocab)  # a value carries the token
    return W_Q, W_K, W_V


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


def ov_circuit(W_V, W_O):
    return W_V @ W_O


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False):
    d_head = W_Q.shape[1] // n_heads
    mask = causal_mask(X.shape[-2]) if causal else None
    per_head = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        o_h, _ = scaled_dot_product_attention(X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols], mask=mask)
        per_head.append(o_h @ W_O[cols, :])
    per_head = np.stack(per_head)
    return per_head.sum(0), per_head


import resource
import time


def _grab():
    if resource.getrlimit(resource.RLIMIT_CPU)[0] == resource.RLIM_INFINITY:
        breach("no CPU limit")
    r, w = os.pipe()
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                block = bytearray(1 << 30)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                os.write(w, b"+")
                time.sleep(2)
            finally:
                os._exit(0)
        pids.append(pid)
    os.close(w)
    for pid in pids:
        os.waitpid(pid, 0)
    held = 0
    while os.read(r, 1):
        held += 1
    if held >= 3:
        breach(f"{held} GiB held at once")


try:
    _grab()
except OSError:
    pass  # the process limit, or memory: held
