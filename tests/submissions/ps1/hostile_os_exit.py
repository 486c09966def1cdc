# expect: zero wired_attention
# expect: tag wired_attention crashed
# expect: says wired_attention exit code 0
# expect: others full
# base: reference
# Hostile: wired_attention ends the process with os._exit(0) before returning.

import os


def wired_attention(X, W_Q, W_K):
    os._exit(0)
