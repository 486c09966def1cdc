# expect: zero qk_circuit
# expect: tag qk_circuit crashed
# expect: others full
# timeout: 1
# base: reference
# Hostile: a classic fork bomb in qk_circuit (while True: os.fork()). The sandbox's process
# limit makes fork fail; the exercises after it must not suffer.

import os


def qk_circuit(W_Q, W_K):
    while True:
        os.fork()
