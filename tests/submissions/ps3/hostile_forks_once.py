# expect: full
# base: reference
# qk_circuit calls os.fork() once and both processes return the right answer: the copy
# must not disturb the grading of qk_circuit or of the exercises after it.

import os


def qk_circuit(W_Q, W_K):
    os.fork()
    return W_Q @ W_K.T
