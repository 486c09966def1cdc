# expect: zero causal_mask
# expect: tag causal_mask timeout
# expect: others full
# timeout: 1
# base: reference
# Hostile: causal_mask spins forever and swallows KeyboardInterrupt.


def causal_mask(T):
    while True:
        try:
            while True:
                pass
        except KeyboardInterrupt:
            continue
