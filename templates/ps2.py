# %% [markdown]
# # Problem set 2: the full attention head
#
# In problem set 1 you gave queries and keys their own matrices and learned why scores are
# divided by $\sqrt{d_k}$. Now you finish the job: values get their own matrix, a causal mask
# keeps a language model from reading the future, and you assemble the attention head used
# in every transformer, working on whole batches at once. Along the way: the shapes of
# everything, the fused projection real models use, and a bias that does nothing at all.
#
# **How this works**
#
# - Each exercise has a cell marked `# YOUR CODE HERE`. Replace the line
#   `raise NotImplementedError()` with your code. Keep the function's name and signature.
# - Run the **check cell** right under each exercise. It prints which checks pass, and when
#   one fails it explains the likely mistake in plain words.
# - Your grade comes from more checks, hidden ones, on random inputs. Write code that is
#   correct in general, not just for the examples.
# - Plain `numpy` only. **Tokens are rows**: project with `X @ W`, never `W @ X`.
# - Never modify an input array in place.
# - **Batches ride along.** From now on inputs may carry any number of leading batch
#   dimensions: `X` may be `(T, d)`, `(B, T, d)`, or `(B, H, T, d)`. We write this
#   `(..., T, d)`. Your code must treat only the last two axes as "tokens × features" and
#   leave the leading ones alone. Good news: `@` already does exactly that (it multiplies
#   the last two axes and broadcasts the rest). Bad news: `K.T` reverses *all* the axes of a
#   3-D array; to swap only the last two use `np.swapaxes(K, -1, -2)`.
# - **Single or double precision.** Inputs may be `float32` as well as `float64`, and hidden
#   checks try both; plain numpy code handles either (a `float32` input may give a `float32`
#   or a `float64` result).
# - Positions count from 0, as numpy's indices do: the first token is position 0, and row
#   $i$ of a score matrix belongs to the token at position $i$.
# - Before you hand in, use *Kernel → Restart & Run All*.

# %% [given]
import numpy as np

from attention_course.pictures import show_heatmaps  # attention weights as pictures

np.set_printoptions(precision=3, suppress=True)

# %% [given]
# The worked examples' inputs, the same ones the check cells use (attention_course/worked_inputs.py).
from attention_course.worked_inputs import (BATCH_SHAPES, CAT_SAT, CAUSAL_MASK_3, LIBRARY_BOOKS, LIBRARY_CATALOGUE,
                                            LIBRARY_QUESTION, LIBRARY_TITLES, W_K_CAT_SAT, W_Q_CAT_SAT, W_V_CAT_SAT)

# %% [markdown]
# ## Your `softmax` from problem set 1
#
# Every function below needs a softmax. Paste the body of your own `softmax` from problem
# set 1 into the cell below (in place of the `raise NotImplementedError()` line), then run the
# cell after it: it runs problem set 1's checks on it again. It earns no points here, but the
# exercises below use it, so a softmax that fails those checks makes them fail too.

# %% [solution] softmax

# %%
# Problem set 1's checks, on the softmax you pasted above.
from autograder.selfcheck import check

check("softmax", softmax)

# %% [markdown]
# ## The full head, in one formula
#
# Problem set 1 left one job undone: the token's *value*, what it hands over when someone
# attends to it. It gets its own matrix too, $v = x W_V$, so what a token advertises (its
# key) and what it delivers (its value) can differ. Stacking the rows of a sequence,
#
# $$Q = X W_Q, \quad K = X W_K, \quad V = X W_V, \qquad
#   \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V ,$$
#
# where the softmax runs along each row (over the keys) and $M$ is an optional **mask**
# added to the scores. The first exercise builds the most important mask.

# %% [markdown]
# ## Exercise 1: `causal_mask`
#
# A language model is trained to predict the next token. If position $i$ could look at
# position $i+1$, it could just copy the answer. So every position may attend only to itself
# and to the past: query $i$ may see key $j$ only when $j \le i$.
#
# We enforce this by **adding** a mask to the scores before the softmax: 0 where looking is
# allowed (the score is unchanged) and $-\infty$ where it is forbidden (the weight becomes
# exactly $e^{-\infty} = 0$). For $T = 4$, with row $i$ the query and column $j$ the key:
#
# $$M = \begin{pmatrix}
# 0 & -\infty & -\infty & -\infty \\
# 0 & 0 & -\infty & -\infty \\
# 0 & 0 & 0 & -\infty \\
# 0 & 0 & 0 & 0
# \end{pmatrix}$$
#
# The future (above the diagonal) is hidden; the diagonal itself stays visible.
#
# Why this is a great deal: one forward pass over $n$ tokens makes $n$ predictions at once
# (the output at position 0 predicts the token at position 1, the output at position 1 the
# token at position 2, ...), each of which sees exactly the context it would have at
# generation time. One masked pass, $n$ training examples.
#
# One consequence to notice: position 0 can see only itself, so its row of weights is always
# $(1, 0, 0, \dots)$. That is one reason models start sequences with a special
# beginning-of-sequence token, and why trained heads often park spare attention on the first
# token (an "attention sink").
#
# **What to write.** `causal_mask(T)`: return a float array of shape `(T, T)` with `0.0` where
# `j <= i` and `-np.inf` where `j > i` (row `i` is the query, column `j` the key).
#
# **Watch out.** It is easy to hide the past instead of the future (the transpose of the
# right answer) or to mask the diagonal too (then position 0 has nothing left to look at and
# its softmax is `nan`). Return floats, not booleans: the mask is *added* to the scores.

# %% [solution] causal_mask

# %% [tests] causal_mask

# %%
# Try it.
try:
    print(causal_mask(4))
except NotImplementedError:
    print("Implement causal_mask above first.")

# %% [markdown]
# ## Exercise 2: `scaled_dot_product_attention`
#
# Now the whole formula as one function that takes ready-made queries, keys and values. It
# does not care where $Q$, $K$, $V$ came from, which makes it reusable for self-attention,
# cross-attention and multi-head attention alike.
#
# **A worked example to check by hand: "the cat sat", causal, $d_{\text{head}} = 2$.**
# Each token starts as an embedding of four made-up features:
#
# | position | token | embedding $x$ |
# |---|---|---|
# | 0 | the | (0, 1, 1, 0) |
# | 1 | cat | (1, 0, 1, 0) |
# | 2 | sat | (1, 1, 0, 1) |
#
# and three matrices of shape $(4, 2)$ project it:
#
# $$W_Q = \begin{pmatrix} 1 & 0 \\ 1 & 0 \\ 0 & 0 \\ 0 & 1 \end{pmatrix}, \qquad
#   W_K = \begin{pmatrix} 1 & 0 \\ 0 & 1 \\ 1 & 0 \\ 1 & 0 \end{pmatrix}, \qquad
#   W_V = \begin{pmatrix} 1 & 0 \\ 0 & 1 \\ 1 & 1 \\ 0 & -1 \end{pmatrix} .$$
#
# A row of 0s and 1s times a matrix adds up the matrix's rows where the row has a 1. So sat's
# query takes the first, second and fourth rows of $W_Q$:
#
# $$q_{\text{sat}} = (1, 1, 0, 1)\, W_Q = (1, 0) + (1, 0) + (0, 1) = (2, 1) .$$
#
# The same way for every token:
#
# | position | token | query $q = x W_Q$ | key $k = x W_K$ | value $v = x W_V$ |
# |---|---|---|---|---|
# | 0 | the | (1, 0) | (1, 1) | (1, 2) |
# | 1 | cat | (1, 0) | (2, 0) | (2, 1) |
# | 2 | sat | (2, 1) | (2, 1) | (1, 0) |
#
# Follow row 2 ("sat"). Its raw scores against the, cat, sat are $q_{\text{sat}} \cdot k_j$:
# $(2,1)\cdot(1,1) = 3$, then $S_{\text{sat},\text{cat}} = (2,1)\cdot(2,0) = 4$, then
# $(2,1)\cdot(2,1) = 5$. Divide by $\sqrt{2} \approx 1.414$: $(2.12, 2.83, 3.54)$. The mask
# adds 0 everywhere in this last row. For the softmax, shift by the largest score:
# $(-1.41, -0.71, 0)$; exponentiate: $(0.243, 0.493, 1)$, which sum to 1.736; divide: weights
# $(0.140, 0.284, 0.576)$. The output is the blend of the values:
#
# $$0.140\,(1,2) + 0.284\,(2,1) + 0.576\,(1,0) = (1.284, 0.564) .$$
#
# Row 1 ("cat") sees only the and cat: scores $(1, 2)$, over $\sqrt 2$ $(0.71, 1.41)$, give
# weights $(0.330, 0.670)$. Row 0 ("the") sees only itself: its weight is 1 and its output is
# exactly its own value $v_{\text{the}} = (1, 2)$.
#
# The check cell also replays problem set 1's *warm jacket* with `scale=1.0`: warm's query
# $(0, 2)$ against the keys $(1, 0)$ and $(0, 1)$, with the keys as values, must give weights
# and output $(0.12, 0.88)$.
#
# **What to write.** `scaled_dot_product_attention(Q, K, V, mask=None, scale=None)`:
#
# - `Q` is `(..., T_q, d_k)`, `K` is `(..., T_k, d_k)`, `V` is `(..., T_k, d_v)`. The number of
#   queries $T_q$ and of keys $T_k$ may differ.
# - `scale` **multiplies** $Q K^\top$. When it is `None`, use $1/\sqrt{d_k}$. (Test
#   `scale is None`, so that any scale the caller passes, even `0.0`, is honoured.)
# - `mask`, if given, is a float array of 0s and $-\infty$s (or large finite negatives such
#   as `-1e9`) that broadcasts to `(..., T_q, T_k)`; **add** it to the scaled scores. A hidden
#   key gets weight exactly 0, however high its score.
# - `weights` = softmax over the key axis (the last one), shape `(..., T_q, T_k)`.
# - `out = weights @ V`, shape `(..., T_q, d_v)`.
# - Return `(out, weights)`.
# - `Q`, `K`, `V` may be `float32`; adding a `-inf` mask and scaling work the same.
#
# These are the same conventions as PyTorch's
# `torch.nn.functional.scaled_dot_product_attention` (its `scale` is also a multiplier, and
# a float mask is also added): on the same inputs your function should give the same numbers.
#
# **Watch out.**
#
# - Transpose only the last two axes of `K` (`K.T` is wrong as soon as there is a batch axis).
# - Scale by $1/\sqrt{d_k}$, not $1/d_k$, and don't forget it.
# - Softmax over the keys (the last axis), so each query's row sums to 1.
# - Don't ignore the mask, and add it *before* the softmax.
# - Blend `V`, not `K`.

# %% [solution] scaled_dot_product_attention

# %% [tests] scaled_dot_product_attention

# %%
# Try it on "the cat sat": project, attend, and see the batch axis ride along.
Q_cat, K_cat, V_cat = CAT_SAT @ W_Q_CAT_SAT, CAT_SAT @ W_K_CAT_SAT, CAT_SAT @ W_V_CAT_SAT
print("queries, keys, values (rows: the, cat, sat):")
print(Q_cat, K_cat, V_cat, sep="\n")
try:
    out, weights = scaled_dot_product_attention(Q_cat, K_cat, V_cat, mask=CAUSAL_MASK_3)
    print("weights:")
    print(weights)  # row 2 about [0.140, 0.284, 0.576]
    print("out:")
    print(out)      # row 2 about [1.284, 0.564], row 0 exactly [1, 2]
    batch = lambda A: np.stack([A, A])  # (2, 3, 2)
    out_b, weights_b = scaled_dot_product_attention(batch(Q_cat), batch(K_cat), batch(V_cat), mask=causal_mask(3))
    print("batched shapes:", out_b.shape, weights_b.shape)  # (2, 3, 2) (2, 3, 3)
except NotImplementedError:
    print("Implement causal_mask and scaled_dot_product_attention above first.")

# %% [markdown]
# **The $\sqrt{d_k}$ toggle, as a picture.** Eight random queries and keys of width
# $d_k = 64$, once with `scale=1.0` (no scaling) and once with the default $1/\sqrt{64}$: the
# unscaled weights are nearly one-hot (a dark square per row, the rest white), the scaled ones
# are spread out, as problem set 1's measurement predicted.

# %%
# Your own weights, without and with the 1/sqrt(d_k) scale.
rng = np.random.default_rng(0)
Q_rand, K_rand, V_rand = (rng.standard_normal((8, 64)) for _ in range(3))
try:
    _, unscaled = scaled_dot_product_attention(Q_rand, K_rand, V_rand, scale=1.0)
    _, scaled = scaled_dot_product_attention(Q_rand, K_rand, V_rand)
    print("largest weight of each row, unscaled:", unscaled.max(-1))
    print("largest weight of each row, scaled:  ", scaled.max(-1))
    show_heatmaps({"scale = 1 (no scaling)": unscaled, "scale = 1/sqrt(64)": scaled})
except NotImplementedError:
    print("Implement scaled_dot_product_attention above first.")

# %% [markdown]
# ## Attention as a soft lookup in a library
#
# A picture to keep the three jobs apart. You walk into a library with a **question**, say
# "something about rivers": that is the **query** $q$. Every book has a **catalogue entry**
# that describes it: its **key** $k_j$. And every book has its **contents**, what you carry
# home if you take it: its **value** $v_j$. You compare your question with the catalogue
# entries, never with the books themselves; the contents only matter once you have chosen.
#
# An ordinary library does a *hard* lookup: it hands you the one book whose entry matches
# best. Attention does a **soft** lookup: it scores the question against every entry, turns
# the scores into weights with a softmax, and hands you a *blend* of all the books, mostly
# the best matches:
#
# $$w_j = \operatorname{softmax}_j\!\Big(\frac{q \cdot k_j}{\sqrt{d_k}}\Big), \qquad
#   \text{taken home} = \sum_j w_j\, v_j .$$
#
# That is exactly one row of the head you just wrote. A tiny library of three books, with
# catalogue entries on two made-up axes (water, money), and as contents one coordinate per
# book, so that what you take home reads as how much of each book:
#
# | book | catalogue entry $k$ (water, money) | contents $v$ |
# |---|---|---|
# | river guide | (2, 0) | (1, 0, 0) |
# | banking handbook | (0, 2) | (0, 1, 0) |
# | bridges and tolls | (1, 1) | (0, 0, 1) |
#
# The question "rivers, please" is $q = (1.5, 0)$. Its scores against the three entries are
# $(1.5 \cdot 2,\ 0,\ 1.5 \cdot 1) = (3, 0, 1.5)$, and over $\sqrt{d_k} = \sqrt 2$:
# $(2.12, 0, 1.06)$.
#
# **Predict:** a hard lookup takes home the river guide, all of it. How much of the river
# guide does the soft lookup take home: all of it, about two thirds, or about a third? Which
# book comes second? Write your guesses down, then run the cell.

# %%
# The library as attention: the question is the query, the catalogue entries the keys, the books the values.
try:
    taken_home, weights = scaled_dot_product_attention(LIBRARY_QUESTION, LIBRARY_CATALOGUE, LIBRARY_BOOKS)
    for title, weight in zip(LIBRARY_TITLES, weights[0]):
        print(f"{title:17s}: weight {weight:.3f}")
    print("taken home (how much of each book):", taken_home[0])
    print("a hard lookup takes home only the", LIBRARY_TITLES[weights[0].argmax()])
except NotImplementedError:
    print("Implement scaled_dot_product_attention above first.")

# %% [markdown]
# **What happened.** The soft lookup takes home 0.682 of the river guide, 0.236 of "bridges
# and tolls" (its entry mentions water too) and 0.082 of the banking handbook: nothing is
# left entirely on the shelf, but the best match gets most of the weight. Softness is what
# makes the lookup learnable: a small change of the question changes the weights a little,
# where a hard lookup would jump from one book to another, so training can nudge $W_Q$ and
# $W_K$ towards better questions and better catalogue entries.

# %% [markdown]
# ## The value never affects who attends to whom
#
# Look at the formula once more: the weights $w_j$ come from the question and the catalogue
# alone, and the contents $v_j$ enter only afterwards, to be blended. In a head,
#
# $$A = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{d_k}} + M\Big)
#   \quad \text{has no } V \text{ in it}, \qquad \text{out} = A V .$$
#
# **Predict:** keep the question and the catalogue, and replace the three books' contents by
# random numbers. Will the weights change? Will what you take home?

# %%
# The same question and catalogue with other contents: the weights, and what is taken home.
other_books = np.random.default_rng(0).standard_normal(LIBRARY_BOOKS.shape)  # any other contents
try:
    taken_home, weights = scaled_dot_product_attention(LIBRARY_QUESTION, LIBRARY_CATALOGUE, LIBRARY_BOOKS)
    taken_other, weights_other = scaled_dot_product_attention(LIBRARY_QUESTION, LIBRARY_CATALOGUE, other_books)
    print("weights, the books:         ", weights[0])
    print("weights, other contents:    ", weights_other[0])
    print(f"largest change of a weight: {np.abs(weights_other - weights).max():g}")
    print("taken home, the books:      ", taken_home[0])
    print("taken home, other contents: ", taken_other[0])
except NotImplementedError:
    print("Implement scaled_dot_product_attention above first.")

# %% [markdown]
# The weights do not move at all (the largest change is exactly 0), while what you take home
# is something else entirely. So in a head $W_V$ decides *what* is moved and never *where*
# the head looks: that is decided by $W_Q$ and $W_K$ alone. Problem set 3 gives the two halves
# names, the QK and the OV circuit.

# %% [markdown]
# ## Exercise 3: `attention_shapes`
#
# Most attention bugs are shape bugs, so let's pin every shape down. Take the general case,
# **cross-attention**: the queries come from one sequence `X_q` of $T_q$ tokens (say, the
# translation being written) and the keys and values from another, `X_kv`, of $T_k$ tokens
# (the sentence being translated). Self-attention is the special case `X_q = X_kv`,
# $T_q = T_k$. With a batch of $B$ sequences and model width $d$:
#
# | array | shape | |
# |---|---|---|
# | `X_q` | $(B, T_q, d)$ | tokens asking |
# | `X_kv` | $(B, T_k, d)$ | tokens being looked at |
# | `W_Q` | $(d, d_k)$ | |
# | `W_K` | $(d, d_k)$ | same $d_k$ as `W_Q` |
# | `W_V` | $(d, d_v)$ | any width $d_v$ |
# | `Q` | $(B, T_q, d_k)$ | one query per asking token |
# | `K` | $(B, T_k, d_k)$ | one key per looked-at token |
# | `V` | $(B, T_k, d_v)$ | one value per looked-at token |
# | `S` (scores) | $(B, T_q, T_k)$ | row = query, column = key |
# | `A` (weights) | $(B, T_q, T_k)$ | each row sums to 1 |
# | `O` (output) | $(B, T_q, d_v)$ | one output per asking token |
#
# Things to notice:
#
# - Queries and keys must share $d_k$ because they meet in a dot product. Values never meet
#   a query, so $d_v$ is free.
# - $T_k$ disappears from the output: the weighted sum over keys eats it. There is one output
#   per *query*.
# - The weight matrices do not depend on $B$ or $T$ at all; the same head runs on sequences of
#   any length. With $B = 2$, $T = 5$, $d = 16$, $d_k = d_v = 8$: `Q`, `K`, `V` are
#   $(2, 5, 8)$, the scores $(2, 5, 5)$, and the three projections hold
#   $3 \times 16 \times 8 = 384$ weights, whatever $B$ and $T$ are.
# - The score matrix is $T_q \times T_k$: **quadratic** in the length. At $T = 8192$ that is
#   67,108,864 scores per head and per sequence, about 268 MB in float32. Doubling the length
#   quadruples it. This memory wall is what FlashAttention avoids, by computing the same
#   result block by block without ever storing the whole score matrix.
#
# **What to write.** `attention_shapes(B, T_q, T_k, d, d_k, d_v)`: return a `dict` with
# exactly the eleven keys `"X_q", "X_kv", "W_Q", "W_K", "W_V", "Q", "K", "V", "S", "A", "O"`,
# each mapped to its shape as a tuple of Python `int`s, as in the table.
#
# Validate the arguments first: each of the six must be a positive integer, either a Python
# `int` or a numpy integer (such as `np.int64(3)`). Raise `ValueError` otherwise: for `0`,
# negative numbers, floats such as `2.0`, strings, and also `True`/`False` (in Python `bool`
# is a subclass of `int`, so `isinstance(True, int)` is `True`: reject it explicitly).
#
# When the arguments are numpy integers, a tuple such as `(B, T_q, d)` holds numpy integers
# too, and the shapes must hold Python `int`s: convert each size with `int(...)` once it
# has passed the validation.
#
# **Watch out.** The classic mix-up is $T_q$ versus $T_k$: scores and weights are
# $(B, T_q, T_k)$ (queries are rows), `K` and `V` have $T_k$ tokens, and the output has $T_q$.

# %% [solution] attention_shapes

# %% [tests] attention_shapes

# %%
# Try it on the batch example: B=2, T=5, d=16, d_k=d_v=8; then with numpy integers.
try:
    for name, shape in attention_shapes(*BATCH_SHAPES).items():
        print(f"{name:5s} {shape}")
    print("with numpy integers, S is", attention_shapes(*(np.int64(n) for n in BATCH_SHAPES))["S"])
except NotImplementedError:
    print("Implement attention_shapes above first.")

# %% [markdown]
# ## Exercise 4: `fused_self_attention`
#
# Three projections of the same `X` are three matrix products. Real models glue the three
# weight matrices side by side,
#
# $$W_{qkv} = \big[\, W_Q \;\big|\; W_K \;\big|\; W_V \,\big] \quad \text{of shape } (d, 3h),$$
#
# do **one** bigger matrix product `X @ W_qkv` of shape `(..., T, 3h)` (one big product runs
# faster on a GPU than three small ones), and split the result back into $Q$, $K$, $V$ along
# the last axis. GPT-2 does exactly this: its `c_attn` layer has a weight of shape
# $(768, 2304)$, with $2304 = 3 \times 768$.
#
# **A porting pitfall.** GPT-2's `c_attn` stores its weight as (in, out), our convention:
# $y = x W$. But PyTorch's `nn.Linear(d_in, d_out)` stores its `weight` as `(d_out, d_in)`
# and computes $y = x W^\top$. So to use an `nn.Linear` weight in our row convention you need
# its transpose, `linear.weight.T`. Forget it with a square matrix and nothing crashes: you
# silently get a different (wrong) model. Always check which way round a weight is stored.
#
# **What to write.** `fused_self_attention(X, W_qkv, scale)`:
#
# - `X` is `(..., T, d)`; `W_qkv` is `(d, 3h)` holding $[W_Q | W_K | W_V]$ in **that** order,
#   so $d_k = d_v = h$.
# - Project once, split the last axis into three equal parts $Q, K, V$ (in that order), each
#   `(..., T, h)`.
# - Return `softmax((Q K^T) * scale) V`, shape `(..., T, h)`. `scale` is a number you are
#   given and it **multiplies** the scores; there is no mask.
# - Raise `ValueError` if `W_qkv.shape[1]` is not divisible by 3, or if
#   `X.shape[-1] != W_qkv.shape[0]`.
#
# **Watch out.** Split the columns (the last axis), not the rows, and in the order Q, K, V.
# Use `X @ W_qkv`, not a transpose. You may reuse your `scaled_dot_product_attention`.

# %% [solution] fused_self_attention

# %% [tests] fused_self_attention

# %%
# Try it: fusing must give exactly what three separate projections give.
rng = np.random.default_rng(0)
X_demo = rng.standard_normal((2, 5, 16))  # a batch of 2 sequences of 5 tokens, d = 16
W_Q_demo, W_K_demo, W_V_demo = (rng.standard_normal((16, 8)) / 4 for _ in range(3))
try:
    fused = fused_self_attention(X_demo, np.concatenate([W_Q_demo, W_K_demo, W_V_demo], axis=1),
                                 1 / np.sqrt(8))
    separate, _ = scaled_dot_product_attention(X_demo @ W_Q_demo, X_demo @ W_K_demo,
                                               X_demo @ W_V_demo)
    print("output shape:", fused.shape)  # (2, 5, 8)
    print("same as separate projections:", np.allclose(fused, separate))
except NotImplementedError:
    print("Implement fused_self_attention (and scaled_dot_product_attention) above first.")

# %% [markdown]
# ## Exercise 5: `attention_with_biases`, and the bias that does nothing
#
# Linear layers usually come with a bias: $q = x W_Q + b_Q$, $k = x W_K + b_K$,
# $v = x W_V + b_V$. What does each bias actually do? Expand a score:
#
# $$s_{ij} = q_i \cdot k_j = q_i \cdot (x_j W_K) + q_i \cdot b_K .$$
#
# The last term, $q_i \cdot b_K$, involves the query $i$ but **not** the key $j$: it adds the
# same number to every score in row $i$. And you know from problem set 1 that the softmax
# ignores a constant shift of a row. So $b_K$ has no effect on the output at all, and (since
# changing it changes nothing) its gradient is exactly zero: wasted parameters.
#
# To check by hand: with $q_i = (1, 2)$ and $b_K = (0.5, -1)$, the shift is
# $1 \cdot 0.5 + 2 \cdot (-1) = -1.5$ on every score of row $i$, and, just as
# $\operatorname{softmax}(1, 2, 3) = \operatorname{softmax}(6, 7, 8) = (0.090, 0.245, 0.665)$,
# the weights do not move.
#
# (One exception: models with rotary position embeddings, RoPE, rotate each key by an
# angle that depends on its position *after* adding the bias. Then $b_K$ is rotated
# differently for each $j$, the shift is no longer constant, and $b_K$ matters again.
# Problem set 4 measures how much.)
#
# The other two biases do matter:
#
# - $b_Q$ adds $b_Q \cdot k_j$ to the score, which *does* depend on $j$: a learned preference
#   for certain keys, whichever token is asking.
# - $b_V$ passes straight through to the output: because each row of weights sums to 1,
#   $\sum_j A_{ij}(v_j + b_V) = \sum_j A_{ij} v_j + b_V$.
#
# **What to write.** `attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V)`:
#
# - `X` is `(..., T, d)`; `W_Q`, `W_K` are `(d, d_k)` and `W_V` is `(d, d_v)`; `b_Q`, `b_K` have
#   shape `(d_k,)` and `b_V` has shape `(d_v,)`.
# - $Q = X W_Q + b_Q$, $K = X W_K + b_K$, $V = X W_V + b_V$.
# - Return `out` only (not the weights): single-head scaled attention with the default scale
#   $1/\sqrt{d_k}$ and no mask, shape `(..., T, d_v)`.
#
# Do compute $K$ with its bias, as the formula says; the checks verify that, as the math
# predicts, changing `b_K` does not change your output.
#
# **Watch out.** Use the projected values `X W_V + b_V`, not `X`. Keep the $1/\sqrt{d_k}$ scale.

# %% [solution] attention_with_biases

# %% [tests] attention_with_biases

# %%
# Try it: change b_K, then b_V, and see what moves.
rng = np.random.default_rng(1)
X_b = rng.standard_normal((4, 6))
W_Q_b, W_K_b, W_V_b = (rng.standard_normal((6, 3)) for _ in range(3))
b_Q_b, b_K_b, b_V_b = (rng.standard_normal(3) for _ in range(3))
try:
    base = attention_with_biases(X_b, W_Q_b, W_K_b, W_V_b, b_Q_b, b_K_b, b_V_b)
    new_b_K = attention_with_biases(X_b, W_Q_b, W_K_b, W_V_b, b_Q_b, 100 * b_K_b, b_V_b)
    new_b_V = attention_with_biases(X_b, W_Q_b, W_K_b, W_V_b, b_Q_b, b_K_b, b_V_b + 1.0)
    print("b_K multiplied by 100, output unchanged:", np.allclose(base, new_b_K))
    print("b_V + 1 shifts every output by exactly 1:", np.allclose(new_b_V - base, 1.0))
except NotImplementedError:
    print("Implement attention_with_biases above first.")

# %% [markdown]
# ## What you have learned
#
# - The full head: $\operatorname{softmax}(Q K^\top / \sqrt{d_k} + M)\, V$ with
#   $Q = X W_Q$, $K = X W_K$, $V = X W_V$; the softmax runs over the keys.
# - The causal mask adds $-\infty$ above the diagonal, so each position sees only itself and
#   the past, and one pass over $n$ tokens trains $n$ predictions.
# - Shapes: scores are $(B, T_q, T_k)$, outputs $(B, T_q, d_v)$; weights do not depend on the
#   length, but the score matrix grows with its square.
# - Real models fuse $[W_Q | W_K | W_V]$ into one matrix; mind the split order, and mind that
#   `nn.Linear` stores its weight transposed.
# - $b_K$ only shifts each row of scores by a constant, so the softmax erases it.
#
# **Next, in problem set 3:** you will build a head by hand that does a real job (find the
# previous token and copy it), learn to read a head through its QK and OV circuits, and run
# several heads side by side as multi-head attention.
