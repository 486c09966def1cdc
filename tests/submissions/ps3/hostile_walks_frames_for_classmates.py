# expect: full
# Isolation class 1, state carried from one student to the next. A top-level cell looks for
# anything of a classmate graded before it, in every form it can reach: the frames it was
# forked under, every object the garbage collector knows, and its own memory through
# /proc/self/mem where that is readable. The marker it looks for is in
# correct_straightforward.py; tests/test_isolation.py grades that file first. Every
# answer is right as long as nothing was found.

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


import gc
import marshal

MARK = "CLASSMATE" + "_MARKER_" + "7f3a9c"


def _hunt():
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, (bytes, bytearray)) and MARK.encode() in value:
                breach("a classmate's job in a frame I was forked under")
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            for value in list(obj.values()):
                if isinstance(value, str) and MARK in value and value is not MARK:
                    breach("a classmate's text among live objects")
                elif isinstance(value, (bytes, bytearray)) and MARK.encode() in value:
                    breach("a classmate's bytes among live objects")
        elif type(obj).__name__ == "code" and MARK in obj.co_consts:
            breach("a classmate's compiled code")
    try:
        maps = open("/proc/self/maps").read().splitlines()
        mem = open("/proc/self/mem", "rb", buffering=0)
    except OSError:
        return
    needle = MARK.encode()
    for line in maps:
        addresses, perms = line.split()[:2]
        if not perms.startswith("r"):
            continue
        start, end = (int(x, 16) for x in addresses.split("-"))
        try:
            mem.seek(start)
            chunk = mem.read(end - start)
        except (OSError, OverflowError, ValueError):
            continue
        hits = chunk.count(needle)
        if hits > 1:  # one is the needle itself
            breach("a classmate's marker in my own memory")
            return


_hunt()
