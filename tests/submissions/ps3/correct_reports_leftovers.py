# expect: full
# Right answers that count what an earlier student left where this one can look: files in
# its folder, its TMPDIR and the shared temporary folders owned by another sandbox uid, or
# named as the hostile files name their plants. tests/test_isolation.py grades it after
# each attack; alone, nothing is there. It also needs its own folder to be writable, as
# every level promises.

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



def _leftovers():
    me = os.getuid()
    try:
        with open("mine.txt", "w") as f:
            f.write("kept")
        os.remove("mine.txt")
    except OSError as e:
        breach(f"could not write in its own folder: {e}")
    for folder in {os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm"}:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            try:
                owner = os.lstat(os.path.join(folder, name)).st_uid
            except OSError:
                continue
            if "PLANTED" in name or name in ("numpy.py", "sitecustomize.py", "filler") or (owner >= 1_000_000_000 and owner != me):
                breach(f"{folder}/{name} left by someone else")


_leftovers()
