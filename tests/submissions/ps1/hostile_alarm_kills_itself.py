# expect: zero wired_attention
# expect: tag wired_attention crashed
# expect: others full
# base: reference
# Hostile: wired_attention arms a timer whose signal (SIGALRM, default action: terminate)
# ends its own process without any signal-sending syscall, so no seccomp filter on kill()
# refuses it. The kernel sends it for the process's own request: the student's end
# (crashes.KERNEL_FOR_ITSELF). As the init of its own pid namespace the signal is dropped,
# and it ends itself with os._exit instead.

import os
import signal
import time


def wired_attention(X, W_Q, W_K):
    signal.setitimer(signal.ITIMER_REAL, 0.001)
    time.sleep(0.2)
    os._exit(0)
