# expect: zero wired_attention
# expect: tag wired_attention crashed
# expect: others full
# base: reference
# Hostile: wired_attention sends its own process SIGKILL, hoping the grader takes the kill for
# someone else's and records "not the student's fault" instead of a zero. It is the student's
# at every level: at the uid level the kill lands and no filter proves it came from outside;
# as the init of its own pid namespace (full; none with a user namespace) the kernel drops
# it, and where a seccomp allow-list refuses kill() it fails; then it ends itself with
# os._exit. Either way that exercise is lost, and nothing is retried or left ungraded.

import os
import signal


def wired_attention(X, W_Q, W_K):
    try:
        os.kill(os.getpid(), signal.SIGKILL)
    except OSError:
        pass
    os._exit(0)
