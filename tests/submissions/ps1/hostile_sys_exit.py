# expect: zero score_spread
# expect: tag score_spread crashed
# expect: others full
# base: reference
# Hostile: sys.exit() inside score_spread, and sys.exit() at module level after every
# definition (the definitions before it must still be graded).

import sys


def score_spread(d, n_rows, n_keys, rng):
    sys.exit()


sys.exit()
