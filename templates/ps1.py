# %% [markdown]
# # Problem set 1: attention from scratch
#
# Why does the simplest possible attention fail, and what do queries, keys and the famous
# $1/\sqrt{d_k}$ fix? In this notebook you build attention one piece at a time and watch each
# piece solve a concrete problem.
#
# **How this works**
#
# - Each exercise has a cell marked `# YOUR CODE HERE`. Replace the line
#   `raise NotImplementedError()` with your code. Keep the function's name and signature.
# - Run the **check cell** right under each exercise. It prints which checks pass, and when
#   one fails it explains the likely mistake in plain words.
# - Your grade comes from more checks, hidden ones, on random inputs. Passing the visible
#   checks is a very good sign, but write code that is correct in general, not just for the
#   examples.
# - Plain `numpy` only (no PyTorch, no loops over tokens needed).
# - **Tokens are rows.** A sequence of $T$ tokens of width $d$ is an array `X` of shape
#   `(T, d)`, and a token is projected as `x @ W` (never `W @ x`). In this problem set every
#   function takes one sequence `X` of shape `(T, d)`.
# - Never modify an input array in place; build new arrays instead.
# - **Single or double precision.** Inputs may be `float32` (single precision, what GPUs use)
#   as well as the default `float64`, and hidden checks try both. Plain numpy code handles
#   either without any conversion; a `float32` input may give a `float32` or a `float64`
#   result. Just don't round, and don't turn the numbers into integers.
# - Before you hand in, use *Kernel → Restart & Run All* to make sure everything runs from
#   top to bottom.

# %% [given]
import numpy as np

from attention_course.pictures import pyplot, show_heatmaps  # pictures; pyplot() is None without matplotlib

np.set_printoptions(precision=3, suppress=True)

# %% [given]
# The worked examples' inputs, the same ones the check cells use (attention_course/worked_inputs.py).
from attention_course.worked_inputs import (RANDOM_TOKENS, RIVER_BANK, RIVER_BANK_TOKENS, SOFTMAX_BY_HAND, W_K_RIVER,
                                            W_Q_RIVER)

# %% [markdown]
# ## The idea in a nutshell
#
# A word's meaning depends on its neighbours. "Bank" in *the river bank* is not the "bank" in
# *the bank account*. **Attention** lets every token build a new vector as a *weighted
# average* of the tokens around it, where the weights say how relevant each neighbour is.
#
# So for each token we need a row of weights: one weight per token in the sequence, each
# weight $\ge 0$, and the row summing to 1. Relevance starts out as arbitrary real numbers
# ("scores"), and the tool that turns any row of real numbers into such weights is the
# **softmax**. That is exercise 1.

# %% [markdown]
# ## Exercise 1: `softmax`
#
# For a row of scores $s_1, \dots, s_n$ the softmax is
#
# $$\operatorname{softmax}(s)_j = \frac{e^{s_j}}{\sum_{k=1}^{n} e^{s_k}} .$$
#
# Exponentials are positive, and dividing by their sum makes the row sum to 1. Bigger scores
# get bigger weights, and differences matter a lot: a score that is larger by 1 gets
# $e \approx 2.7$ times the weight, larger by 8 gets $e^8 \approx 2981$ times the weight.
#
# Two small examples to check by hand:
#
# - scores $(0, 2)$: $e^0 = 1$ and $e^2 \approx 7.39$, so the weights are
#   $1/8.39 \approx 0.12$ and $7.39/8.39 \approx 0.88$.
# - scores $(3, 0, 0)$: the weights are $e^3/(e^3+2) \approx 0.909$ and
#   $1/(e^3+2) \approx 0.045$ for each of the other two.
#
# **Two properties you will rely on.**
#
# 1. *Shifting a whole row by a constant changes nothing.* Subtracting $c$ from every score
#    multiplies every numerator and the denominator by the same $e^{-c}$. For example
#    $\operatorname{softmax}(1, 2, 3) = \operatorname{softmax}(6, 7, 8) = (0.090, 0.245, 0.665)$.
#    This is how you make softmax **numerically stable**: computed naively, `np.exp(1000.0)`
#    is `inf`, and `inf / inf` is `nan`. Shift each row so that its largest entry is 0 before
#    exponentiating; then no exponential is larger than 1 and nothing can overflow.
#    (Keep this property in mind; it comes back in problem set 2 with a surprise.)
# 2. *A score of $-\infty$ gets weight exactly 0*, because $e^{-\infty} = 0$. For example
#    $\operatorname{softmax}(0, -\infty, 1) = (0.269, 0, 0.731)$. In problem set 2 this is how
#    we hide tokens a position is not allowed to see.
#
# **What to write.** `softmax(S, axis=-1)`:
#
# - `S` is a numpy array of any shape; normalise along `axis` (by default the last one, so
#   each row of a 2-D array becomes a row of weights).
# - Return an array of the same shape as `S`, where every slice along `axis` is $\ge 0$ and
#   sums to 1.
# - It must stay finite for entries as large as $10^4$ (or as negative as $-10^4$).
# - An entry of `-np.inf` must get weight exactly `0.0`. You may assume every slice has at
#   least one finite entry.
# - `S` may also be `float16` (half precision), whose `np.exp` is `inf` past about 11: a
#   hidden check tries it.
#
# **Watch out.**
#
# - The naive `np.exp(S) / np.exp(S).sum(...)` overflows on large scores and returns `nan`.
#   In single precision (`float32`) it happens much sooner: `np.exp` of a `float32` is `inf`
#   above about 88.7, against 709.8 in `float64`. The shift by the row's maximum protects both.
# - Use the `axis` you are given for *both* the shift and the sum, and keep that axis in the
#   result (`keepdims=True`) so the division lines up element by element. Normalising over
#   the wrong axis is a very common bug: the rows then no longer sum to 1.

# %% [solution] softmax

# %% [tests] softmax

# %%
# Try it: compare with the worked numbers above.
try:
    for scores, by_hand in SOFTMAX_BY_HAND:
        print(f"softmax{scores} = {softmax(np.array(scores))}   by hand: {by_hand}")
    print("in float32:", softmax(np.array([100.0, 0.0], dtype=np.float32)))  # [1, 0], not nan
except NotImplementedError:
    print("Implement softmax above first.")

# %% [markdown]
# ## Exercise 2: `raw_self_attention`, the naive attempt and why it fails
#
# What is the simplest way to score "how relevant is token $j$ to token $i$"? Take the dot
# product of their embeddings: similar vectors, big score. So the first attempt uses each
# token's embedding for everything:
#
# $$S = X X^\top, \qquad A = \operatorname{softmax}_{\text{row}}(S), \qquad \text{out} = A X .$$
#
# Row $i$ of $S$ holds token $i$'s scores against every token $j$; the softmax runs along
# each row (over $j$, the "keys"), so row $i$ of $A$ is token $i$'s weights and sums to 1;
# and row $i$ of the output is the weighted average of the token vectors.
#
# **The river bank.** Give each word a tiny 4-dimensional embedding with the made-up axes
# (water, money, place, filler):
#
# | token | water | money | place | filler |
# |---|---|---|---|---|
# | the | 0 | 0 | 0 | 1 |
# | river | 0.9 | 0 | 0.3 | 0 |
# | bank | 0.3 | 0.3 | 0.9 | 0 |
#
# We would love "bank" to look at "river" and pick up some water. The scores $X X^\top$
# (check a few: river·bank $= 0.9 \cdot 0.3 + 0.3 \cdot 0.9 = 0.54$, bank·bank
# $= 0.09 + 0.09 + 0.81 = 0.99$):
#
# | scores | the | river | bank |
# |---|---|---|---|
# | **the** | 1 | 0 | 0 |
# | **river** | 0 | 0.90 | 0.54 |
# | **bank** | 0 | 0.54 | 0.99 |
#
# and after a softmax along each row, the weights:
#
# | weights | the | river | bank |
# |---|---|---|---|
# | **the** | 0.576 | 0.212 | 0.212 |
# | **river** | 0.193 | 0.475 | 0.332 |
# | **bank** | 0.185 | 0.317 | 0.498 |
#
# What does "bank" end up carrying? Its output is its row of weights times the embeddings:
#
# $$0.185\,x_{\text{the}} + 0.317\,x_{\text{river}} + 0.498\,x_{\text{bank}}
#   = (0.435,\ 0.149,\ 0.543,\ 0.185),$$
#
# with water $0.317 \cdot 0.9 + 0.498 \cdot 0.3 = 0.435$ and money $0.498 \cdot 0.3 = 0.149$:
# a blend of about **2.9 parts water to 1 part money**, most of it bank's own vector.
#
# Two defects jump out.
#
# - **Self-focus.** Every token's biggest weight is on itself. A token's score with itself
#   is $\lVert x_i \rVert^2$, and another token can rarely beat it. "the" carries no meaning
#   at all, yet keeps 57.6% on itself. With random vectors it gets extreme: for $d$
#   unit-variance coordinates the self-score is about $d$, while a score with another token
#   is typically only about $\pm\sqrt{d}$. With 4 random tokens in $d = 16$ dimensions, a
#   row puts on average **0.995** of its weight on itself (the demo below measures it on 200
#   random sequences): attention that only looks in a mirror.
# - **Symmetry.** $S_{ij} = x_i \cdot x_j = S_{ji}$: river·bank is 0.54 *both ways*. But
#   relevance is not symmetric. In "the animal didn't cross because it was tired", "it"
#   badly needs "animal", while "animal" does not need "it" at all.
#
# And there is nothing to adjust: $X X^\top$ has **no parameters**. For a given sentence
# these weights are what they are, forever; no amount of training can teach "bank" to look
# at "river".
#
# The root cause: one vector is doing three jobs at once: *what a token is looking for*,
# *what it advertises to others*, and *what it hands over when chosen*. Exercise 3 starts
# separating those jobs.
#
# **What to write.** `raw_self_attention(X)`:
#
# - `X` has shape `(T, d)`: one sequence, one token per row.
# - `scores = X X^T` of shape `(T, T)`, **not scaled** (no division by anything here).
# - `weights` = softmax of the scores along the key axis (the last axis), shape `(T, T)`;
#   each row sums to 1.
# - `out = weights X`, shape `(T, d)`.
# - Return the tuple `(out, weights)`. Use your `softmax` from exercise 1.
#
# **Watch out.** Normalise each *row* (one query against all keys), not each column. And the
# output averages the token vectors `X` with the weights, so `weights @ X`, not `X @ weights`
# (that would not even have the right shape unless $T = d$).

# %% [solution] raw_self_attention

# %% [tests] raw_self_attention

# %%
# Try it on the river bank, then on random tokens.
try:
    out, weights = raw_self_attention(RIVER_BANK)
    print("raw weights (rows: the, river, bank):")
    print(weights)
    print("bank's output (water, money, place, filler):", out[2])
    T, d, draws = RANDOM_TOKENS["T"], RANDOM_TOKENS["d"], RANDOM_TOKENS["draws"]
    rng = np.random.default_rng(RANDOM_TOKENS["seed"])
    self_weight = np.mean([np.diag(raw_self_attention(rng.standard_normal((T, d)))[1]).mean()
                           for _ in range(draws)])
    print(f"random tokens, T = {T}, d = {d}: average weight on itself = {self_weight:.3f}")
except NotImplementedError:
    print("Implement raw_self_attention above first.")

# %% [markdown]
# ## Exercise 3: `wired_attention`, separate queries and keys
#
# Give the first two jobs their own vectors. Each token $x$ (a row) gets
#
# - a **query** $q = x W_Q$: *what am I looking for?*
# - a **key** $k = x W_K$: *what do I offer?*
#
# where $W_Q$ and $W_K$ are two different matrices of shape $(d, d_k)$. Token $i$'s score for
# token $j$ is now $q_i \cdot k_j$. Where do the matrices come from? In a real model they are
# **learned**: training nudges each of their entries, a little at a time, towards whatever
# makes the model's predictions better. These are the knobs raw attention did not have.
#
# Because the query and the key come from *different* matrices, neither defect is built in
# any more: a token's score with itself, $x_i W_Q \cdot x_i W_K$, is no longer a square that
# nearly always wins, and $q_i \cdot k_j$ need not equal $q_j \cdot k_i$. Even with *random*
# separate $W_Q, W_K$, the self-weight drops to about 0.276 on average, close to $1/T = 0.25$,
# like any other position. The defects are only no longer built in, though: make the two
# matrices equal, $W_Q = W_K = W$, and the self-score is $\lVert x_i W \rVert^2$ again, a square
# that is never negative, and scores are symmetric again. A demo below measures it.
#
# **Warm jacket.** Two tokens, with queries and keys written down directly. "warm" is an
# adjective looking for the thing it describes: its query is $(0, 2)$. The keys are warm
# $(1, 0)$ and jacket $(0, 1)$. Scores: $(0,2)\cdot(1,0) = 0$ and $(0,2)\cdot(0,1) = 2$, so
# the softmax gives **0.12 on warm, 0.88 on jacket**, and if each token hands over its key
# vector, warm's output is $0.12\,(1,0) + 0.88\,(0,1) = (0.12, 0.88)$. "jacket" has a blank
# query $(0, 0)$: all its scores are 0, so it spreads 0.5 / 0.5. A blank query means "I'm
# not looking for anything in particular".
#
# Scale it up to *warm jacket for winter* with one-hot word types (adjective, noun, neither)
# as keys, and a $W_Q$ that turns "adjective" into a query of strength 3 on "noun": warm
# scores 3 against jacket and winter, 0 against itself and "for", so it sends
# $e^3/(2e^3+2) \approx 0.48$ to each noun and $\approx 0.02$ to the other two; the other
# words have blank queries and spread 0.25 each.
#
# **The river bank, wired by hand.** Let the key's two coordinates mean "I have a topic"
# (water or money) and "I am a place", and let a place word look for a topic (strength 2)
# while a filler word looks for a place (strength 1.5). As matrices (rows: water, money,
# place, filler):
#
# $$W_Q = \begin{pmatrix} 0 & 0 \\ 0 & 0 \\ 2 & 0 \\ 0 & 1.5 \end{pmatrix}, \qquad
#   W_K = \begin{pmatrix} 1 & 0 \\ 1 & 0 \\ 0 & 1 \\ 0 & 0 \end{pmatrix} .$$
#
# Then the queries are the $(0, 1.5)$, river $(0.6, 0)$, bank $(1.8, 0)$ and the keys the
# $(0, 0)$, river $(0.9, 0.3)$, bank $(0.6, 0.9)$, and the scores $Q K^\top$ are
#
# | scores | the | river | bank |
# |---|---|---|---|
# | **the** | 0 | 0.45 | 1.35 |
# | **river** | 0 | 0.54 | 0.36 |
# | **bank** | 0 | 1.62 | 1.08 |
#
# Now bank→river is 1.62 while river→bank is only 0.36: relevance has a direction. We
# divide the scores by $\sqrt{d_k} = \sqrt{2} \approx 1.414$ (exercise 4 explains why) and
# take the softmax of each row:
#
# | weights | the | river | bank |
# |---|---|---|---|
# | **the** | 0.201 | 0.276 | 0.522 |
# | **river** | 0.266 | 0.390 | 0.344 |
# | **bank** | 0.159 | 0.500 | 0.341 |
#
# Compare with the raw version: bank's weight on river went from 0.317 to **0.500**, and
# "the" no longer stares at itself (0.576 → 0.201); it now looks mostly at the noun it
# introduces.
#
# **The payoff.** Blend the embeddings with bank's new weights:
#
# $$0.159\,x_{\text{the}} + 0.500\,x_{\text{river}} + 0.341\,x_{\text{bank}}
#   = (0.552,\ 0.102,\ 0.457,\ 0.159),$$
#
# water $0.500 \cdot 0.9 + 0.341 \cdot 0.3 = 0.552$, money $0.341 \cdot 0.3 = 0.102$: about
# **5.4 parts water to 1 part money**, up from 2.9 to 1 with raw attention. "bank" now reads
# much more like the bank of a river than like a bank that keeps money.
#
# **What to write.** `wired_attention(X, W_Q, W_K)`:
#
# - `X` has shape `(T, d)`; `W_Q` and `W_K` have shape `(d, d_k)`.
# - `Q = X W_Q` and `K = X W_K`, both `(T, d_k)`.
# - `scores = Q K^T`, shape `(T, T)`, **unscaled**: this is what you return as `scores`.
# - `weights = softmax(scores / sqrt(d_k))` along the key axis, shape `(T, T)`. Here $d_k$ is
#   the width of the queries and keys (the number of columns of `W_K`), **not** the
#   embedding width $d$.
# - `out = weights X`, shape `(T, d)`: the values are still the raw embeddings (the third
#   job, values, gets its own matrix in problem set 2).
# - Return the tuple `(out, weights, scores)`.
#
# **Watch out.**
#
# - Tokens are rows: `X @ W_Q`, not `W_Q @ X` or `X @ W_Q.T`.
# - Divide by $\sqrt{d_k}$: not by $d_k$, not by $\sqrt{d}$, and don't forget it.
# - Blend the embeddings `X`, not the keys or the queries.

# %% [solution] wired_attention

# %% [tests] wired_attention

# %%
# Try it on the hand-wired river bank, and compare bank's blend with raw attention's.
try:
    out_raw, weights_raw = raw_self_attention(RIVER_BANK)
    out, weights, scores = wired_attention(RIVER_BANK, W_Q_RIVER, W_K_RIVER)
    print("scores (unscaled):")
    print(scores)
    print("wired weights (rows: the, river, bank):")
    print(weights)
    for name, bank in (("raw", out_raw[2]), ("wired", out[2])):
        print(f"{name:5s}: bank carries water {bank[0]:.3f}, money {bank[1]:.3f}: "
              f"{bank[0] / bank[1]:.1f} parts water to 1 part money")
    show_heatmaps({"raw: softmax(X X^T)": weights_raw, "wired: separate W_Q, W_K": weights}, RIVER_BANK_TOKENS)
except NotImplementedError:
    print("Implement raw_self_attention and wired_attention above first.")

# %% [markdown]
# **The knobs are learned.** The hand wiring above is what a person would choose. A model
# finds its own: start from small random $W_Q, W_K$ (bank then spreads about a third of its
# weight on each word) and repeatedly turn each of their 16 entries a little in the
# direction that raises bank's weight on river. That is what training does, with a
# real goal (predicting the next word) instead of this toy one. Raw attention has no entry
# to turn: bank's weight on river stays 0.317.

# %%
# W_Q and W_K are learned: 16 knobs, each turned a little uphill at every step.
def bank_on_river(knobs):
    W_Q, W_K = knobs[:8].reshape(4, 2), knobs[8:].reshape(4, 2)
    return wired_attention(RIVER_BANK, W_Q, W_K)[1][2, 1]


try:
    print(f"raw attention, nothing to learn: bank -> river {raw_self_attention(RIVER_BANK)[1][2, 1]:.3f}")
    knobs = 0.1 * np.random.default_rng(0).standard_normal(16)  # a small random start
    for step in range(31):
        if step % 10 == 0:
            print(f"step {step:2d}: bank -> river {bank_on_river(knobs):.3f}")
        # How the log of the weight changes when each knob moves a little, up and down:
        slope = np.array([np.log(bank_on_river(knobs + h) / bank_on_river(knobs - h)) / 2e-4
                          for h in 1e-4 * np.eye(16)])
        knobs = knobs + slope  # every knob a little uphill
except NotImplementedError:
    print("Implement raw_self_attention and wired_attention above first.")

# %% [markdown]
# **One matrix for both jobs brings the defects back.** Same random tokens as in the demo of
# exercise 2 (4 tokens, $d = 16$), now with random $16 \times 8$ matrices: separate $W_Q$ and
# $W_K$, then one shared $W = W_Q = W_K$. With the shared matrix, $q_i \cdot k_i =
# \lVert x_i W \rVert^2 \ge 0$ is a square again and the weight on itself climbs back to
# about 0.731 (raw attention: 0.995; separate matrices: 0.276), as the cell below prints for
# 200 random sequences. Sharing one matrix for queries and keys (or for all three jobs) is a
# classic mistake.

# %%
# Separate W_Q, W_K against one shared W, on random tokens.
T, d, d_k, draws = (RANDOM_TOKENS[k] for k in ("T", "d", "d_k", "draws"))
rng = np.random.default_rng(RANDOM_TOKENS["seed"])
tokens = rng.standard_normal((draws, T, d))  # `draws` sequences of T random tokens
# For each sequence three random (d, d_k) matrices with orthonormal columns (so that queries
# and keys get unit-variance entries): W_Q and W_K, and the shared W.
W_Qs, W_Ks, W_shared = np.linalg.qr(rng.standard_normal((3, draws, d, d_k)))[0]
try:
    on_self = {"raw": [], "separate": [], "shared": []}
    for X, W_Q, W_K, W in zip(tokens, W_Qs, W_Ks, W_shared):
        on_self["raw"].append(np.diag(raw_self_attention(X)[1]).mean())
        on_self["separate"].append(np.diag(wired_attention(X, W_Q, W_K)[1]).mean())
        on_self["shared"].append(np.diag(wired_attention(X, W, W)[1]).mean())
    for name, values in on_self.items():
        print(f"{name:8s}: average weight on itself {np.mean(values):.3f}")
except NotImplementedError:
    print("Implement raw_self_attention and wired_attention above first.")

# %% [markdown]
# ## Exercise 4: `score_spread`, why divide by $\sqrt{d_k}$?
#
# Real models use $d_k = 64$ or more, and their queries and keys start out random. How big
# are the scores then? A score is a sum of $d_k$ products,
#
# $$q \cdot k = \sum_{m=1}^{d_k} q_m k_m .$$
#
# If the entries are independent with mean 0 and variance 1, each product $q_m k_m$ has mean 0
# and variance 1, and the variances of independent terms add up: the score has variance
# $d_k$, so it typically lands within about $\pm\sqrt{d_k}$ of 0. At $d_k = 64$ that is
# $\pm 8$.
#
# **Predict first.** Take rows of 8 keys (8 scores per query) and feed each row to a softmax.
# The largest of the 8 weights tells how peaked the row is: $1/8 = 0.125$ for a flat row,
# 1 for one-hot. Before you write any code, write down in the cell below what you expect at
# $d = 64$: the standard deviation of the scores, the mean largest weight without any
# scaling, and the mean largest weight after dividing the scores by $\sqrt{d}$. (Remember
# from exercise 1 that a gap of 8 between two scores is a factor $e^8 \approx 2981$ between
# their weights.) Your code will then measure them.

# %%
# Your predictions for d = 64 and 8 keys per row (replace each None by a number; not graded).
my_prediction = {
    "std": None,
    "top_unscaled": None,
    "top_scaled": None,
}

# %% [markdown]
# **What to write.** `score_spread(d, n_rows, n_keys, rng)`:
#
# - `rng` is a numpy random Generator (made with `np.random.default_rng(seed)`). Draw every
#   random number from it, e.g. with `rng.standard_normal(shape)`; don't use `np.random.seed`
#   or the global `np.random` functions.
# - Draw `n_rows` independent queries of width `d`, and for each query its own `n_keys`
#   keys (so `n_rows × n_keys` keys in all), every entry from $N(0, 1)$. The order in which
#   you draw them is up to you.
# - Compute all `n_rows × n_keys` scores (each query with each of its own keys).
# - Return a tuple of three Python floats `(std, top_unscaled, top_scaled)`:
#   - `std`: the standard deviation of all the scores;
#   - `top_unscaled`: for each row take the softmax over its `n_keys` scores and its largest
#     weight; return the mean of those over the rows;
#   - `top_scaled`: the same after dividing the scores by $\sqrt{d}$.
#
# Because the numbers are random, the checks compare them with what the statistics predict,
# with some tolerance.
#
# **Watch out.** Scale by $\sqrt{d}$, not $d$. Take the maximum *within* each row (one query's
# weights), then the mean over rows. And return plain floats (`float(...)`), not arrays.

# %% [solution] score_spread

# %% [tests] score_spread

# %%
# Measure: 500 rows of 8 keys per width, then compare with your prediction for d = 64.
widths = (1, 2, 4, 8, 16, 32, 64, 128, 256)
try:
    rng = np.random.default_rng(0)
    measured = {d: score_spread(d, 500, 8, rng) for d in widths}
    print("    d    std   top unscaled   top scaled")
    for d, (std, top_unscaled, top_scaled) in measured.items():
        print(f"{d:5d} {std:6.2f} {top_unscaled:14.3f} {top_scaled:12.3f}")
    for name, guess, value in zip(my_prediction, my_prediction.values(), measured[64]):
        print(f"d = 64, {name}: you predicted {guess}, measured {value:.3f}")
    plt = pyplot()
    if plt is None:
        print("(install matplotlib to see the top weights as a curve)")
    else:
        plt.figure(figsize=(5.5, 3.5))
        plt.semilogx(widths, [measured[d][1] for d in widths], "o-", base=2, label="unscaled: softmax(q·k)")
        plt.semilogx(widths, [measured[d][2] for d in widths], "o-", base=2, label="scaled: softmax(q·k / sqrt(d))")
        plt.axhline(1 / 8, color="gray", linestyle=":", label="a flat row: 1/8")
        plt.xlabel("width d")
        plt.ylabel("mean largest weight of 8")
        plt.ylim(0, 1.4)
        plt.yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        plt.legend(loc="upper left", fontsize="small")
        plt.show()
except NotImplementedError:
    print("Implement score_spread above first.")

# %% [markdown]
# **What to expect.** Here are the long-run means (averaged over far more rows than the
# cell above draws): a run of 500 rows, as above, typically lands within about $\pm 0.02$ of
# them on the weights. The checks draw between 400 and 2000 rows per width and allow for
# that noise.
#
# | $d$ | $\sqrt{d}$ | std of the scores | mean top weight, unscaled | mean top weight, scaled by $1/\sqrt{d}$ |
# |---|---|---|---|---|
# | 4 | 2 | 2.0 | 0.527 | 0.343 |
# | 16 | 4 | 4.0 | 0.748 | 0.357 |
# | 64 | 8 | 8.0 | 0.875 | 0.360 |
# | 256 | 16 | 16.0 | 0.937 | 0.361 |
#
# Unscaled, the largest weight creeps towards 1 as the width grows: at $d_k = 64$ scores
# spread by about $\pm 8$, and a gap of 8 is a factor of about 3000. The softmax turns
# **one-hot**: each row puts nearly all its weight on whichever key happened to score
# highest. That is bad for learning. The derivative of a softmax weight,
# $\partial p_i / \partial s_j = p_i(\delta_{ij} - p_j)$, is close to 0 when every $p$ is close
# to 0 or 1, so the gradient vanishes and training stalls with the loss stuck near its
# initial value.
#
# Scaled, it stays put, whatever the width (a flat row of 8 would have 0.125 everywhere).
# Dividing by $\sqrt{d_k}$ brings the variance back to $d_k / d_k = 1$. Dividing by $d_k$
# instead over-shrinks: the standard deviation becomes $1/\sqrt{d_k}$, all scores are nearly
# equal and the weights go nearly uniform (attention that cannot choose).
#
# How close was your prediction?

# %% [markdown]
# ## What you have learned
#
# - Attention gives each token a weighted average of the tokens around it; the softmax turns
#   a row of scores into weights that are positive and sum to 1. Shift each row by its
#   maximum to keep it finite; $-\infty$ gives weight exactly 0.
# - Using the raw embedding as query, key and value fails twice: every token stares at itself
#   (self-score $\lVert x_i\rVert^2$), and scores are symmetric although relevance is not.
#   And it has nothing to learn.
# - Separate, learned projections $q = x W_Q$ (what I look for) and $k = x W_K$ (what I
#   offer) remove both defects from the design; the river bank's "bank" now sends half its
#   attention to "river" and carries 5.4 parts water to 1 of money. One shared matrix brings
#   the self-focus back.
# - Dot products of width $d_k$ spread like $\sqrt{d_k}$; dividing by $\sqrt{d_k}$ keeps the
#   softmax soft enough to learn, at any width.
#
# **Next, in problem set 2:** the third job gets its own matrix ($v = x W_V$, the value), a
# causal mask stops a language model from peeking at the future, and you assemble the full
# attention head used in every transformer, with batches, shapes, fused projections and a
# bias that, surprisingly, does nothing at all.
