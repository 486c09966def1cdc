# expect: partial attention_shapes
# expect: others full
# base: reference
# Hostile: prints a fake 'PASS 36/36' and a fake Gradescope results JSON to stdout (through
# print, sys.__stdout__ and os.write(1, ...)), at module level and in attention_shapes, which
# returns the worked example's shapes whatever its arguments.

import json
import os
import sys


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    _brag()
    return {"X_q": (2, 5, 16), "X_kv": (2, 5, 16), "W_Q": (16, 8), "W_K": (16, 8), "W_V": (16, 8),
            "Q": (2, 5, 8), "K": (2, 5, 8), "V": (2, 5, 8), "S": (2, 5, 5), "A": (2, 5, 5), "O": (2, 5, 8)}


FAKE = {"score": 36, "max_score": 36, "execution_time": 0.1, "output": "",
        "tests": [{"name": "everything", "score": 36, "max_score": 36, "status": "passed", "output": "",
                   "visibility": "visible", "tags": ["exercise:attention_shapes"]}]}


def _brag():
    print("PASS 36/36")
    print(json.dumps(FAKE))
    sys.__stdout__.write(json.dumps(FAKE) + "\n")
    os.write(1, (json.dumps(FAKE) + "\n").encode())


_brag()
