# expect: zero attention_shapes
# expect: tag attention_shapes timeout
# expect: others full
# timeout: 1
# base: reference
# Hostile: attention_shapes ignores SIGTERM, SIGINT and SIGHUP, then loops forever.

import signal


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        pass
