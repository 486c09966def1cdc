"""The worked examples, written once: their inputs, and the hand-checkable numbers the
notebooks' prose quotes where those are not simply the reference's output on the inputs.

The notebooks' demo cells import these (``from attention_course.worked_inputs import ...``), the
exercises' visible checks call the functions on them, and the tests recompute every number
the prose quotes from them (tests/test_worked_inputs.py). Data only: nothing here computes an
exercise's answer. What the reference returns on the visible inputs is in
``worked_examples.json`` (built by `autograder notebooks`).

Positions and rows count from 0, as numpy does: in "the cat sat", "the" is row 0 and "sat" row 2.
"""
from __future__ import annotations

import numpy as np


def _frozen(*rows) -> np.ndarray:
    """A matrix of these rows that nobody can change: every notebook, check and test shares it."""
    a = np.array(rows, dtype=np.float64)
    a.setflags(write=False)
    return a


def _vector(*values) -> np.ndarray:
    """A vector of these values that nobody can change."""
    return _frozen(*values).reshape(-1)


# ================================================================= problem set 1

# Softmax by hand: rows of scores and the weights the prose quotes for them.
SOFTMAX_BY_HAND = (
    ((0.0, 2.0), (0.12, 0.88)),
    ((3.0, 0.0, 0.0), (0.909, 0.045, 0.045)),
    ((1.0, 2.0, 3.0), (0.090, 0.245, 0.665)),
    ((6.0, 7.0, 8.0), (0.090, 0.245, 0.665)),  # the same row shifted by 5: the same weights
    ((0.0, -np.inf, 1.0), (0.269, 0.0, 0.731)),
    ((1000.0, 0.0), (1.0, 0.0)),  # np.exp(1000.0) is inf: only a shifted softmax gets this
)
E_TO_THE_8 = 2981  # e^8: a score larger by 8 gets about 3000 times the weight
FLOAT32_EXP_LIMIT = 88.7  # np.exp overflows a float32 past log(3.4e38); a float64 past 709.8

# The river bank: embeddings on the made-up axes (water, money, place, filler).
RIVER_BANK_TOKENS = ("the", "river", "bank")
RIVER_BANK_AXES = ("water", "money", "place", "filler")
RIVER_BANK = _frozen([0.0, 0.0, 0.0, 1.0],   # the
                     [0.9, 0.0, 0.3, 0.0],   # river
                     [0.3, 0.3, 0.9, 0.0])   # bank
# The hand wiring: keys say "I have a topic" and "I am a place"; a place word looks for a
# topic (strength 2), a filler word for a place (strength 1.5).
W_Q_RIVER = _frozen([0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 1.5])
W_K_RIVER = _frozen([1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0])
# The same river bank with two more axes that no word uses (d = 6, d_k still 2): the same
# scores, so the same weights. Only a scale taken from the embeddings' width, sqrt(6), instead
# of the keys', sqrt(2), changes them (on the river bank itself sqrt(d) = 2 = d_k hides it).
RIVER_BANK_WIDE = _frozen(*np.pad(RIVER_BANK, ((0, 0), (0, 2))))
W_Q_RIVER_WIDE = _frozen(*np.pad(W_Q_RIVER, ((0, 2), (0, 0))))
W_K_RIVER_WIDE = _frozen(*np.pad(W_K_RIVER, ((0, 2), (0, 0))))
# Bank's output, water : money, once its weights are known (the payoff of separate queries
# and keys): raw 0.435 : 0.149, wired 0.552 : 0.102.
RIVER_BANK_BLEND = {"raw": 2.9, "wired": 5.4}

# Warm jacket: warm's query against the keys of warm and jacket; values are the keys.
WARM_QUERY = _vector(0.0, 2.0)
WARM_JACKET_KEYS = _frozen([1.0, 0.0], [0.0, 1.0])
# Warm jacket for winter: one-hot word types (adjective, noun, neither); W_Q turns
# "adjective" into a query of strength 3 on "noun"; W_K = I; scores unscaled.
WINTER_TOKENS = ("warm", "jacket", "for", "winter")
WINTER_TYPES = _frozen([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0])
W_Q_WINTER = _frozen([0.0, 3.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
W_K_WINTER = _frozen([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])
# The same types with keys that announce the next type along (adjective -> noun -> neither ->
# adjective): square and unsymmetric wiring, on which x @ W.T runs and gives other weights
# than x @ W, and exchanging queries and keys gives others again.
W_K_WINTER_CYCLED = _frozen([0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0])

# Random tokens: T tokens of width d with N(0, 1) entries, `draws` sequences from `seed`.
# The average weight of a token on itself, as the demos of problem set 1 measure it on these
# draws (and print it to 3 decimals): raw self-attention 0.995; random separate W_Q, W_K
# (d, d_k) 0.276, close to 1/T; one shared matrix W_Q = W_K 0.731 (q_i . k_i = |x_i W|^2 >= 0:
# self-focus is back). The random matrices have orthonormal columns, so queries and keys have
# unit-variance entries like the tokens. The long run (many more draws) is within 0.01 of
# each (tests/test_worked_inputs.py measures it).
RANDOM_TOKENS = {"T": 4, "d": 16, "d_k": 8, "draws": 200, "seed": 0}
SELF_WEIGHT = {"raw": 0.995, "separate": 0.276, "shared": 0.731}

# Score spread: the long-run means (many more rows than any check draws) of the standard
# deviation of N(0, 1) query-key scores and of the mean top softmax weight of rows of 8 keys,
# unscaled and scaled by 1/sqrt(d). Columns: std, top_unscaled, top_scaled.
SCORE_SPREAD_KEYS = 8
SCORE_SPREAD = {
    4: (2.0, 0.527, 0.343),
    16: (4.0, 0.748, 0.357),
    64: (8.0, 0.875, 0.360),
    256: (16.0, 0.937, 0.361),
}

# ================================================================= problem set 2

# The cat sat, causal, d_head = 2: four made-up features per token, projected.
CAT_SAT_TOKENS = ("the", "cat", "sat")
CAT_SAT = _frozen([0.0, 1.0, 1.0, 0.0],   # the
                  [1.0, 0.0, 1.0, 0.0],   # cat
                  [1.0, 1.0, 0.0, 1.0])   # sat
W_Q_CAT_SAT = _frozen([1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 1.0])
W_K_CAT_SAT = _frozen([1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0])
W_V_CAT_SAT = _frozen([1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, -1.0])
CAUSAL_MASK_3 = _frozen([0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0, 0.0, 0.0])
# The same arrays projected (data: X @ W, so the check and the notebook share them).
Q_CAT_SAT = _frozen(*(CAT_SAT @ W_Q_CAT_SAT))  # (1, 0), (1, 0), (2, 1)
K_CAT_SAT = _frozen(*(CAT_SAT @ W_K_CAT_SAT))  # (1, 1), (2, 0), (2, 1)
V_CAT_SAT = _frozen(*(CAT_SAT @ W_V_CAT_SAT))  # (1, 2), (2, 1), (1, 0)
# Row 2 ("sat") by hand: q = (1, 1, 0, 1) W_Q = (2, 1); its scores against the, cat, sat
# are (3, 4, 5) (S[sat, cat] = (2, 1) . (2, 0) = 4); over sqrt(2): (2.12, 2.83, 3.54);
# shifted by the largest: (-1.41, -0.71, 0); exponentiated: (0.243, 0.493, 1), sum 1.736.
CAT_SAT_BY_HAND = {
    "q_sat": (2.0, 1.0),
    "scores_sat": (3.0, 4.0, 5.0),
    "scaled_sat": (2.12, 2.83, 3.54),
    "shifted_sat": (-1.41, -0.71, 0.0),
    "exp_sat": (0.243, 0.493, 1.0),
    "sum_sat": 1.736,
    "scaled_cat": (0.71, 1.41),
}

# Softmax ignores a constant shift: q_i . b_K is the same for every key of row i.
BIAS_QUERY = _vector(1.0, 2.0)
B_K_EXAMPLE = _vector(0.5, -1.0)  # shift: 1 * 0.5 + 2 * (-1) = -1.5

# Attention as a soft lookup in a library: the question is the query, each book's catalogue
# entry its key (on the axes water, money), its contents its value (one coordinate per book,
# so that what is taken home reads as how much of each book).
LIBRARY_TITLES = ("river guide", "banking handbook", "bridges and tolls")
LIBRARY_QUESTION = _frozen([1.5, 0.0])  # "rivers, please": one query, shape (1, 2)
LIBRARY_CATALOGUE = _frozen([2.0, 0.0], [0.0, 2.0], [1.0, 1.0])
LIBRARY_BOOKS = _frozen([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])

# Shapes: (B, T_q, T_k, d, d_k, d_v).
BATCH_SHAPES = (2, 5, 5, 16, 8, 8)
CROSS_ATTENTION_SHAPES = (2, 3, 5, 16, 8, 4)
LONG_CONTEXT = {"T": 8192, "scores": 67_108_864, "megabytes_float32": 268}

# ================================================================= problem set 3

# The cat sat as a hand-built head: features (determiner, noun, verb, animal).
HEAD_TOKENS = ("the", "cat", "sat")
HEAD_FEATURES = ("determiner", "noun", "verb", "animal")
HEAD_X = _frozen([1.0, 0.0, 0.0, 0.0],   # the
                 [0.0, 1.0, 0.0, 1.0],   # cat
                 [0.0, 0.0, 1.0, 0.0])   # sat
HEAD_GAIN = 3.0  # the queries' gain: an inverse temperature
# Noun -> determiner, verb -> noun, each with the gain.
W_Q_HEAD = _frozen(*(HEAD_GAIN * np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])))
HEAD_GAINS = (0.3, 1.0, 3.0, 10.0)  # the same head at other gains: from nearly flat to nearly one-hot
W_K_HEAD = _frozen([1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0])  # (determiner?, noun?)
W_V_HEAD = _frozen([0.0, 1.0], [0.0, 0.0], [0.0, 0.0], [1.0, 0.0])  # (animal?, determiner?)

# The previous-token head: the visible check's sequence, and the gain the prose derives.
PREVIOUS_TOKEN_VOCAB = 4
PREVIOUS_TOKENS = (0, 3, 1, 1, 2, 0)
# Aim for a weight of 0.999 on position i - 1 (a margin of ten below the 0.01 allowed):
# e^(g / sqrt(T)) >= 999 i. For T = 10 (i up to 9): 999 * 9 = 8991, ln 8991 = 9.10, g >= 28.8.
GAIN_EXAMPLE = {"T": 10, "target": 0.999, "bound": 8991, "log_bound": 9.10, "gain": 28.8}

# Heads as a sum: two heads of width 1 with outputs 2 and 1.
HEAD_OUTPUTS = (2.0, 1.0)
W_O_TWO_HEADS = _frozen([1.0, 0.0], [0.5, 1.0])
R_EXAMPLE = _frozen([1.0, 2.0], [0.5, 3.0])  # any invertible d_k x d_k matrix
GPT2_SMALL = {"n_heads": 12, "d_head": 64, "d_model": 768, "per_head_weights": 147_456, "c_attn": (768, 2304)}

# ================================================================= problem set 4

# One decoding step is one row of causal attention: "sat"'s query against the cache of
# "the cat sat" (the projections above) gives row 2 of problem set 2's causal head,
# weights (0.140, 0.284, 0.576) and output (1.284, 0.564).
STEP_QUERY = Q_CAT_SAT[2]
STEP_K_CACHE, STEP_V_CACHE = K_CAT_SAT, V_CAT_SAT

# Positions: the sinusoidal table at T = 3, d = 4 has angles p and p / 100 (10000^(2/4) = 100).
POSITIONS_T, POSITIONS_D = 3, 4
# Row 1 by hand: (sin 1, cos 1, sin 0.01, cos 0.01).
POSITION_1 = (0.841, 0.540, 0.010, 1.000)

# RoPE on three copies of (1, 0, 1, 0): row p turns pair 0 by p radians, pair 1 by p / 100.
ROPE_X = _frozen([1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0])
ROPE_ROW_1 = (0.540, 0.841, 1.000, 0.010)  # (cos 1, sin 1, cos 0.01, sin 0.01)
# The relative-position property: one query and one key vector at every one of T positions.
ROPE_Q = _vector(1.0, 2.0, 0.5, -1.0)
ROPE_K = _vector(0.5, -1.0, 2.0, 1.0)
ROPE_PROPERTY_T = 5

# The key bias under rotary positions: three queries and keys of width 4, and a bias.
BIAS_Q = _frozen([1.0, 0.0, 2.0, -1.0], [0.0, 1.0, -1.0, 1.0], [2.0, 1.0, 0.0, 0.5])
BIAS_K = _frozen([0.5, 1.0, 0.0, -1.0], [1.0, -0.5, 1.0, 0.0], [0.0, 2.0, 0.5, 1.0])
BIAS_B_K = _vector(1.0, -2.0, 0.5, 1.5)

# The induction head's worked sequence: a prefix of 5 distinct tokens, repeated once.
INDUCTION_VOCAB = 6
INDUCTION_PREFIX = (4, 1, 5, 0, 2)
INDUCTION_TOKENS = INDUCTION_PREFIX + INDUCTION_PREFIX  # T = 10; graded positions 6, 7, 8
