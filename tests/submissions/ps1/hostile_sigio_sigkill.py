# expect: zero wired_attention
# expect: tag wired_attention crashed
# expect: others full
# base: reference
# Hostile: wired_attention makes the kernel send its own process SIGKILL through asynchronous
# I/O: a pipe with O_ASYNC, itself as the owner (F_SETOWN) and SIGKILL as the signal
# (F_SETSIG), then a write to it. No kill() is called, so a filter that refuses only the
# signal-sending syscalls would let it pass for an outsider's kill. As the init of its own
# pid namespace the signal is dropped and it ends itself with os._exit; at the uid level
# without the allow-list the SIGKILL is the student's.

import fcntl
import os


def wired_attention(X, W_Q, W_K):
    r, w = os.pipe()
    try:
        fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(r, fcntl.F_SETSIG, 9)  # SIGKILL
        fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
        os.write(w, b"x")
    except OSError:
        pass
    os._exit(0)
