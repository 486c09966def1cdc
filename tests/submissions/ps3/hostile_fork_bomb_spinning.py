# expect: zero qk_circuit
# expect: tag qk_circuit timeout
# expect: others full
# timeout: 1
# base: reference
# Hostile: a fork bomb in qk_circuit that ignores failed forks and keeps every process spinning.

import os


def qk_circuit(W_Q, W_K):
    while True:
        try:
            os.fork()
        except OSError:
            pass
