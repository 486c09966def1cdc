# %% [markdown]
# # Problem set 3: building and reading attention heads
#
# You can now compute an attention head. In this last problem set you turn it around: you
# *design* a head that does a real job, learn to *read* what any head does through its QK and
# OV circuits, and run many heads side by side as multi-head attention, the way GPT-2 does.
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
# - Leading batch dimensions ride along: `X` may be `(T, d)`, `(B, T, d)`, ... written
#   `(..., T, d)`.
# - **Single or double precision.** Inputs may be `float32` as well as `float64`, and hidden
#   checks try both; plain numpy code handles either.
# - Positions count from 0, as numpy's indices do: the first token is position 0.
# - Before you hand in, use *Kernel → Restart & Run All*.

# %% [given]
import numpy as np

from attention_course.pictures import show_heatmaps  # attention weights as pictures

np.set_printoptions(precision=3, suppress=True)

# %% [given]
# The worked examples' inputs, the same ones the check cells use (attention_course/worked_inputs.py).
from attention_course.worked_inputs import (HEAD_GAIN, HEAD_GAINS, HEAD_TOKENS, HEAD_X, PREVIOUS_TOKEN_VOCAB,
                                            PREVIOUS_TOKENS, R_EXAMPLE, RIVER_BANK, W_K_HEAD, W_K_RIVER, W_Q_HEAD,
                                            W_Q_RIVER, W_V_HEAD)

# %% [markdown]
# ## Your functions from problem sets 1 and 2
#
# This problem set runs heads with the attention you wrote. Paste the bodies of your own
# `softmax` (problem set 1), `causal_mask` and `scaled_dot_product_attention` (problem set 2)
# into the three cells below, in place of their `raise NotImplementedError()` lines, then run
# the cell after them: it runs those problem sets' checks on them again. They earn no points
# here, but the demos use them, and so does your `multi_head_attention`, also when it is
# graded: fix anything those checks report first. (If a check below says `multi_head_attention` is not implemented yet although
# you wrote it, one of these three still raises `NotImplementedError`.)

# %% [solution] softmax

# %% [solution] causal_mask

# %% [solution] scaled_dot_product_attention

# %%
# The checks of problem sets 1 and 2, on the functions you pasted above.
from autograder.selfcheck import check

check("softmax", softmax)
check("causal_mask", causal_mask)
check("scaled_dot_product_attention", scaled_dot_product_attention)

# %% [markdown]
# ## Heads by hand: "the cat sat"
#
# A trained head is just three matrices, so nothing stops us from writing them ourselves.
# Give each word four features (determiner, noun, verb, animal):
#
# | position | token | determiner | noun | verb | animal |
# |---|---|---|---|---|---|
# | 0 | the | 1 | 0 | 0 | 0 |
# | 1 | cat | 0 | 1 | 0 | 1 |
# | 2 | sat | 0 | 0 | 1 | 0 |
#
# Design the head in words first, then as matrices:
#
# - **keys** (2 numbers): "am I a determiner?", "am I a noun?";
# - **queries**: a verb looks for a noun with gain 3 (it wants its subject), a noun looks for a
#   determiner with gain 3;
# - **values** (2 numbers): "am I an animal?", "am I a determiner?".
#
# For this illustration we feed the scores to the softmax unscaled (`scale=1.0`) and let every
# token see every other one (no mask). The verb "sat" has query $(0, 3)$; the keys are the
# $(1, 0)$, cat $(0, 1)$, sat $(0, 0)$; so its scores are $(0, 3, 0)$ and its weights
#
# $$\frac{e^3}{e^3 + 2} \approx 0.909 \text{ on "cat"}, \qquad \frac{1}{e^3 + 2} \approx 0.045
#   \text{ on each of the others.}$$
#
# Its output is $0.909 \cdot (1, 0) + 0.045 \cdot (0, 1) + 0.045 \cdot (0, 0) = (0.909, 0.045)$:
# "sat" now carries the message *my subject is an animal*. Likewise "cat" puts 0.909 on "the"
# and learns it has a determiner; "the" has a blank query and spreads $1/3$ everywhere.
#
# Made causal and scaled by $1/\sqrt{2}$ like a real head, this same head gives "sat" (the
# last row, which sees all three tokens anyway) scores $(0, 3, 0)/\sqrt 2 = (0, 2.12, 0)$ and
# weights $(0.097, 0.807, 0.097)$: less sharp, same choice. (Problem set 2's causal "cat sat",
# with weights $(0.140, 0.284, 0.576)$ for "sat", was a different head: other embeddings and
# other matrices.) The cell below runs both versions with your `scaled_dot_product_attention`.

# %%
# "the cat sat" as a hand-built head: features (determiner, noun, verb, animal).
print("W_Q (noun -> determiner, verb -> noun):", W_Q_HEAD, sep="\n")
print("W_K (determiner?, noun?):", W_K_HEAD, sep="\n")
print("W_V (animal?, determiner?):", W_V_HEAD, sep="\n")
try:
    out, weights = scaled_dot_product_attention(HEAD_X @ W_Q_HEAD, HEAD_X @ W_K_HEAD, HEAD_X @ W_V_HEAD,
                                                scale=1.0)
    print("weights, unscaled (rows: the, cat, sat):")
    print(weights)
    print("outputs (animal?, determiner?):")
    print(out)
    _, causal = scaled_dot_product_attention(HEAD_X @ W_Q_HEAD, HEAD_X @ W_K_HEAD, HEAD_X @ W_V_HEAD,
                                             mask=causal_mask(3))
    print("causal and scaled by 1/sqrt(2), sat's weights:", causal[2])
    show_heatmaps({"unscaled, every token sees all": weights, "causal, scaled": causal}, HEAD_TOKENS)
except NotImplementedError:
    print("Paste your softmax, causal_mask and scaled_dot_product_attention above first.")

# %% [markdown]
# **The factor 3 in the queries is the temperature in disguise.** Every query of this head
# is a pattern times the gain 3: "sat" asks for a noun with $q_{\text{sat}} = 3\,(0, 1)$.
# Call the gain $\beta$. Then every score of a row is $\beta$ times the pattern's score $s$,
# and the weights are
#
# $$w = \operatorname{softmax}(\beta\, s), \qquad s_{\text{sat}} = (0, 1, 0)
#   \text{ against the, cat, sat}.$$
#
# A softmax of scores multiplied by $\beta$ is a softmax at the **temperature**
# $\tau = 1/\beta$. A large gain (a low temperature) sharpens the lookup towards one-hot; a
# small gain (a high temperature) flattens it towards uniform. The $1/\sqrt{d_k}$ of
# problem set 1 is the same knob, turned down. Sat's weight on "cat" is
# $e^\beta / (e^\beta + 2)$: $e^3/(e^3 + 2) \approx 0.909$ at the gain 3 above.
#
# One number says how spread out a row of weights is, its **entropy**
#
# $$H(w) = -\sum_j w_j \ln w_j ,$$
#
# which is $\ln 3 \approx 1.099$ for a flat row of three weights and 0 for a one-hot row.
#
# **Predict:** for the gains $\beta = 0.3, 1, 3, 10$, roughly what are sat's largest weight
# and the entropy of its row? At which of these gains is the row nearly flat, and at which
# nearly one-hot? Write your guesses down, then run the cell.

# %%
# The same head with the queries' gain 3 replaced by 0.3, 1, 3 and 10: sat's row of weights.
K_head, V_head = HEAD_X @ W_K_HEAD, HEAD_X @ W_V_HEAD
try:
    for gain in HEAD_GAINS:
        Q_gain = HEAD_X @ W_Q_HEAD * (gain / HEAD_GAIN)  # the same pattern at another gain
        _, weights = scaled_dot_product_attention(Q_gain, K_head, V_head, scale=1.0)
        sat = weights[2]
        entropy = -np.sum(sat * np.log(sat))
        print(f"gain {gain:4g}: sat's weights {sat}, largest {sat.max():.3f}, entropy {entropy:.3f}")
except NotImplementedError:
    print("Paste your softmax and scaled_dot_product_attention above first.")

# %% [markdown]
# **What happened.** At the gain 0.3 the row is nearly flat (largest weight 0.403, entropy
# 1.088, close to $\ln 3$); at 1 the weight on "cat" is 0.576 (entropy 0.975); at 3 it is
# 0.909 (entropy 0.367); at 10 it is 1.000 to three decimals and the entropy 0.001: a hard
# lookup. A trained head sets its own temperature through the size of $W_Q$ and $W_K$, and
# the head you build next needs a cold one: its gain must grow with the length of the
# sequence.

# %% [markdown]
# ## Exercise 1: `previous_token_head`
#
# Now a head with a job that real language models learn early in training: **at every
# position, look at the previous token and copy it.** Why would that be useful? It is the
# first half of an **induction head**, one of the best-understood circuits in transformers.
# Consider "... Harry Potter ... Harry". At the second "Harry" the model would like to
# predict "Potter". A previous-token head lets the position of "Potter" store *"the token
# before me was Harry"*. A second head, one layer later, at the current "Harry" then looks for
# a position whose previous token was "Harry", finds "Potter", and copies it as the
# prediction. Two simple heads together complete repeated patterns they have never seen.
#
# **The token vectors.** To make the head easy to build, each token vector is two one-hot
# vectors side by side, the token's identity and its position:
#
# $$x_i = \big[\, \operatorname{one\_hot}(\text{token}_i,\ n_{\text{vocab}}) \;\big|\; \operatorname{one\_hot}(i,\ T) \,\big],
#   \qquad d = n_{\text{vocab}} + T .$$
#
# So the first $n_{\text{vocab}}$ rows of each weight matrix read the token, and the last $T$
# rows read the position. For example, with $n_{\text{vocab}} = 3$ and $T = 4$, token 2 at
# position 1 is $(0, 0, 1 \,|\, 0, 1, 0, 0)$.
#
# **The design.** Key and value have different jobs here, and that is the whole point:
#
# - **key** of position $j$ (width $T$): *"I am at position $j$"*, i.e. $\operatorname{one\_hot}(j, T)$.
# - **query** of position $i$ (width $T$): *"I am looking for position $i-1$"*, i.e. a large
#   gain $g$ times $\operatorname{one\_hot}(i-1, T)$. Then $q_i \cdot k_j = g$ for $j = i-1$ and 0 for
#   every other key.
# - **value** of position $j$ (width $n_{\text{vocab}}$): *"here is my token"*, i.e.
#   $\operatorname{one\_hot}(\text{token}_j, n_{\text{vocab}})$, with nothing about the position. If
#   the value were the same as the key, you would copy the position, not the word.
#
# **How large must $g$ be?** The head will be run with the causal mask and the default scale
# $1/\sqrt{d_k} = 1/\sqrt{T}$. Position $i$ sees $i + 1$ keys (positions $0..i$): the target
# with scaled score $g/\sqrt{T}$ and $i$ others with 0. Its weight on the target is
#
# $$\frac{e^{g/\sqrt T}}{e^{g/\sqrt T} + i} .$$
#
# The grader asks for a weight of at least 0.99 on position $i - 1$ *and* an output row within
# 0.01 of the previous token. A head with exactly 0.99 keeps 0.01 for the other positions, so
# its output is off by about 0.01: right at the edge, where rounding decides. Aim for
# **0.999** instead, and both bars are met with room to spare (the output is then off by at
# most 0.001):
#
# $$\frac{e^{g/\sqrt T}}{e^{g/\sqrt T} + i} \;\ge\; 0.999
#   \quad\Longleftrightarrow\quad e^{g/\sqrt T} \ge 999\, i .$$
#
# The worst case is the last position, $i = T - 1$. For $T = 10$: $e^{g/\sqrt{10}} \ge 999
# \cdot 9 = 8991$, so $g/\sqrt{10} \ge \ln 8991 \approx 9.10$, and $g$ must be at least about
# 28.8. So $g$ has to grow with $T$: choose it as a function of `T`, with a safety margin. A
# larger gain than needed does no harm: the softmax is stable.
#
# Position 0 has no previous token; the causal mask leaves it only itself to look at, and it is
# not graded.
#
# **What to write.** `previous_token_head(n_vocab, T)` returns `(W_Q, W_K, W_V)` with shapes
# `(d, T)`, `(d, T)` and `(d, n_vocab)`, where `d = n_vocab + T`. It is graded by running
# `scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, mask=causal_mask(T))` on token
# sequences of length `T` built as above: for every position `i >= 1`, the weight on `i - 1`
# must be at least 0.99, and output row `i` must be within 0.01 (in every entry) of
# $\operatorname{one\_hot}(\text{token}_{i-1}, n_{\text{vocab}})$. `T` may be anything from 1 (a single
# position, nothing to check but the shapes) to long sequences such as 64.
#
# The check cell below does not run attention: it reads your head's scores. In row $i$, call
# $m_j$ the margin by which the (scaled) score on $i - 1$ beats the score on key $j$. Softmax
# weights are proportional to $e^{\text{score}}$, so the weight on $i - 1$ is exactly
# $1 / \big(1 + \sum_j e^{-m_j}\big)$: with equal margins $m$, at least 0.99 means $e^{m} \ge 99\, i$,
# as above.
#
# **Watch out.**
#
# - The off-by-one: a query that asks for position $i$ instead of $i - 1$ builds a head that
#   attends to the *current* token.
# - A gain that is too small for long sequences: remember the $1/\sqrt{T}$ scale and the
#   $T - 1$ competitors.
# - Values must read the token part of $x$, keys the position part.

# %% [solution] previous_token_head

# %% [tests] previous_token_head

# %%
# Try it on the check's sequence: n_vocab = 4, T = 6, with your scaled_dot_product_attention.
tokens = np.array(PREVIOUS_TOKENS)
n_vocab, T = PREVIOUS_TOKEN_VOCAB, len(tokens)
X_seq = np.concatenate([np.eye(n_vocab)[tokens], np.eye(T)], axis=1)  # (T, n_vocab + T)
try:
    W_Q, W_K, W_V = previous_token_head(n_vocab, T)
    out, weights = scaled_dot_product_attention(X_seq @ W_Q, X_seq @ W_K, X_seq @ W_V,
                                                mask=causal_mask(T))
    print("weight on the previous position:", np.round(weights[np.arange(1, T), np.arange(T - 1)], 4))
    print("copied tokens:  ", out[1:].argmax(axis=-1))  # should be the tokens shifted by one
    print("previous tokens:", tokens[:-1])
    show_heatmaps({"your previous-token head": weights}, [f"{i}:{t}" for i, t in enumerate(tokens)])
except NotImplementedError:
    print("Implement previous_token_head above (and paste your problem set 2 functions) first.")

# %% [markdown]
# ## Exercise 2: `qk_circuit`, where a head looks
#
# Write out a score with the projections expanded:
#
# $$s_{ij} = q_i \cdot k_j = (x_i W_Q)(x_j W_K)^\top = x_i \,\big(W_Q W_K^\top\big)\, x_j^\top .$$
#
# The two matrices only ever appear as their product $W_{QK} = W_Q W_K^\top$, a $d \times d$
# matrix: one **bilinear form** on the embedding space. Entry $(a, b)$ says how much a query
# token with feature $a$ is drawn to a key token with feature $b$. This is the head's
# **QK circuit**: it alone decides where the head looks.
#
# **The river bank again.** With the hand wiring of problem set 1 (rows and columns: water,
# money, place, filler),
#
# $$W_{QK} = \begin{pmatrix} 0&0&0&0 \\ 0&0&0&0 \\ 2&2&0&0 \\ 0&0&1.5&0 \end{pmatrix} :$$
#
# a *place* word is drawn to *water* and *money* words with strength 2, a *filler* word to
# *place* words with strength 1.5, and nothing else matters. Check one score: bank→river is
# $x_{\text{bank}} W_{QK} x_{\text{river}}^\top = (1.8, 1.8, 0, 0)\cdot(0.9, 0, 0.3, 0) = 1.62$,
# as in problem set 1.
#
# Two consequences:
#
# - **Low rank.** $W_{QK}$ is $d \times d$ but has rank at most $d_k$ (above: rank 2 in a
#   4-dimensional space). In GPT-2 small it is $768 \times 768$ with rank at most 64.
# - **Only the product matters.** For any invertible $d_k \times d_k$ matrix $R$, the pair
#   $W_Q R$ and $W_K R^{-\top}$ gives the same head:
#   $(W_Q R)(W_K R^{-\top})^\top = W_Q R R^{-1} W_K^\top = W_Q W_K^\top$. So looking at $W_Q$ or
#   $W_K$ alone tells you little; look at $W_{QK}$.
#
# **What to write.** `qk_circuit(W_Q, W_K)`: both are `(d, d_k)`; return $W_Q W_K^\top$, of shape
# `(d, d)`.
#
# **Watch out.** `W_Q.T @ W_K` is a different matrix, $(d_k, d_k)$, that mixes the query and
# key *coordinates*, not the token features.

# %% [solution] qk_circuit

# %% [tests] qk_circuit

# %%
# Try it on the river bank wiring, and check that W_Q R, W_K R^{-T} give the same circuit.
try:
    W_QK = qk_circuit(W_Q_RIVER, W_K_RIVER)
    print("W_QK:")
    print(W_QK)
    print("scores X W_QK X^T:")
    print(RIVER_BANK @ W_QK @ RIVER_BANK.T)  # the score table of problem set 1
    print("rank:", np.linalg.matrix_rank(W_QK))
    print("W_Q R, W_K R^-T give the same circuit:",
          np.allclose(qk_circuit(W_Q_RIVER @ R_EXAMPLE, W_K_RIVER @ np.linalg.inv(R_EXAMPLE).T), W_QK))
except NotImplementedError:
    print("Implement qk_circuit above first.")

# %% [markdown]
# ## Exercise 3: `ov_circuit`, what a head moves
#
# The QK circuit decides *where* to look. What gets *moved* is decided by the values and by
# the output matrix $W_O$ of shape $(d_v, d)$, which maps the head's $d_v$-wide output back
# into the model's $d$-wide embedding space (the "residual stream" that every layer reads from
# and writes to). The head's contribution at position $i$ is
#
# $$\Big(\sum_j A_{ij}\, x_j W_V\Big) W_O = \sum_j A_{ij}\; x_j \big(W_V W_O\big) .$$
#
# Again two matrices only appear as a product, $W_{OV} = W_V W_O$, a $d \times d$ matrix
# (the **OV circuit**): *if the head attends to token $x_j$, it writes $x_j W_{OV}$ into
# position $i$*. The weights $A_{ij}$ only decide how much of each. Like $W_{QK}$, it has
# rank at most $d_v$, and only the product matters.
#
# So a head is two independent questions: **QK**, who attends to whom? and **OV**, what do
# they copy? In the "cat sat" head above, QK makes verbs look at nouns, and OV (through
# $W_V$) carries the "animal" feature across.
#
# **What to write.** `ov_circuit(W_V, W_O)`: `W_V` is `(d, d_v)` and `W_O` is `(d_v, d)`;
# return $W_V W_O$, of shape `(d, d)`.
#
# **Watch out.** The order matters: `W_O @ W_V` is a $(d_v, d_v)$ matrix with a different
# meaning.

# %% [solution] ov_circuit

# %% [tests] ov_circuit

# %%
# Try it: attending then projecting equals attending to x_j W_OV.
rng = np.random.default_rng(0)
X_ov = rng.standard_normal((5, 6))                  # T = 5, d = 6
W_V_ov = rng.standard_normal((6, 2))                # d_v = 2
W_O_ov = rng.standard_normal((2, 6))
A_ov = rng.random((5, 5))
A_ov = A_ov / A_ov.sum(axis=-1, keepdims=True)      # some attention weights: rows >= 0 that sum to 1
try:
    W_OV = ov_circuit(W_V_ov, W_O_ov)
    print("shape:", W_OV.shape, " rank:", np.linalg.matrix_rank(W_OV))  # (6, 6), rank 2
    print("same contribution:", np.allclose((A_ov @ (X_ov @ W_V_ov)) @ W_O_ov, A_ov @ (X_ov @ W_OV)))
except NotImplementedError:
    print("Implement ov_circuit above first.")

# %% [markdown]
# ## Exercise 4: `multi_head_attention`, heads as a sum
#
# One head answers one question (look at the previous token, look for my subject, ...). A
# layer runs several heads in parallel, each with its own slice of the projections, and
# combines them. GPT-2 small has **12 heads of width 64** in every layer, and
# $12 \times 64 = 768 = d_{\text{model}}$. One head's three projections hold
# $3 \times 768 \times 64 = 147{,}456$ weights; all 12 together make up the fused
# $(768, 2304)$ matrix of problem set 2.
#
# **The layout.** With $n$ heads of width $d_{\text{head}}$, numbered from 0 like everything
# else, `W_Q`, `W_K`, `W_V` are `(d, n * d_head)` and head $h$ owns the columns
# `h*d_head : (h+1)*d_head`. Each head runs
# `scaled_dot_product_attention` on its own $Q_h, K_h, V_h$ with the default scale
# $1/\sqrt{d_{\text{head}}}$, giving $o_h$ of shape `(..., T, d_head)`. The usual recipe then
# **concatenates** the $o_h$ along the last axis and multiplies by $W_O$ of shape
# `(n * d_head, d)`.
#
# **Concatenate-then-project is a sum.** Cut $W_O$ into row blocks, $W_O^{(h)}$ = rows
# `h*d_head : (h+1)*d_head`. Block matrix multiplication gives
#
# $$\big[\, o_0 \,|\, o_1 \,|\, \cdots \,|\, o_{n-1} \,\big]\, W_O = \sum_{h=0}^{n-1} o_h\, W_O^{(h)} .$$
#
# Tiny check by hand: two heads of width 1 with outputs $o_0 = 2$, $o_1 = 1$, and
# $W_O = \begin{pmatrix} 1 & 0 \\ 0.5 & 1 \end{pmatrix}$. Concatenated: $(2, 1)\, W_O = (2.5, 1)$.
# As a sum: $2\,(1, 0) + 1\,(0.5, 1) = (2, 0) + (0.5, 1) = (2.5, 1)$. Same thing.
#
# This view is the one interpretability uses: each head independently *adds* its own
# contribution $o_h W_O^{(h)}$ to the residual stream, and head $h$'s OV circuit is
# $W_V^{(h)} W_O^{(h)}$.
#
# **What to write.** `multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False)`:
#
# - `X` is `(..., T, d)`; `W_Q`, `W_K`, `W_V` are `(d, n_heads * d_head)`; `W_O` is
#   `(n_heads * d_head, d)`. Work out `d_head` from the shapes of the
#   projections: it need not be `d / n_heads`.
# - Head `h` uses columns `h*d_head:(h+1)*d_head` of `W_Q`, `W_K`, `W_V`, and
#   `scaled_dot_product_attention` with the default scale $1/\sqrt{d_{\text{head}}}$, plus
#   `mask=causal_mask(T)` when `causal` is true: your own two functions, pasted at the top of
#   this notebook.
# - `per_head` has shape `(n_heads, ..., T, d)`: entry `h` is head `h`'s contribution
#   $o_h W_O^{(h)}$ through its own block of rows of `W_O`.
# - `out` has shape `(..., T, d)`: the usual concatenate-then-`W_O` result, which equals
#   `per_head.sum(0)`.
# - Return `(out, per_head)`.
#
# **Watch out.**
#
# - Scale each head by $1/\sqrt{d_{\text{head}}}$, not by $1/\sqrt{d}$ (the model width).
# - Heads own *contiguous* column blocks, and each head's output goes through its own block of
#   *rows* of `W_O`.
# - The head axis of `per_head` comes first, before any batch axes.
# - Don't forget the mask when `causal=True`.

# %% [solution] multi_head_attention

# %% [tests] multi_head_attention

# %%
# Try it: 2 heads of width 4 on a batch of 3 sequences of 5 tokens, d = 8.
rng = np.random.default_rng(0)
X_mh = rng.standard_normal((3, 5, 8))
W_Q_mh, W_K_mh, W_V_mh = (rng.standard_normal((8, 8)) / np.sqrt(8) for _ in range(3))
W_O_mh = rng.standard_normal((8, 8)) / np.sqrt(8)
try:
    out, per_head = multi_head_attention(X_mh, W_Q_mh, W_K_mh, W_V_mh, W_O_mh, n_heads=2,
                                         causal=True)
    print("out:", out.shape, " per_head:", per_head.shape)  # (3, 5, 8) and (2, 3, 5, 8)
    print("heads sum to the output:", np.allclose(per_head.sum(0), out))
    X_changed = X_mh.copy()
    X_changed[:, -1] += 1.0  # change only the last token
    out_changed, _ = multi_head_attention(X_changed, W_Q_mh, W_K_mh, W_V_mh, W_O_mh, n_heads=2,
                                          causal=True)
    print("causal: earlier positions unaffected by the last token:",
          np.allclose(out_changed[:, :-1], out[:, :-1]))
except NotImplementedError:
    print("Implement multi_head_attention above first.")

# %% [markdown]
# ## What you have learned
#
# - A head is three small matrices, and you can write them by hand: the "cat sat" head sends
#   0.909 of the verb's attention to its subject, and your previous-token head copies the
#   token before each position, the first half of an induction head. Keys and values do
#   different jobs (here: position versus identity).
# - A head's scores depend on $W_Q$ and $W_K$ only through $W_{QK} = W_Q W_K^\top$ (where to
#   look), and what it writes depends on $W_V$ and $W_O$ only through $W_{OV} = W_V W_O$
#   (what to move). Both have rank at most the head width.
# - Multi-head attention is a sum of heads: concatenate-then-project equals adding each
#   head's $o_h W_O^{(h)}$.
#
# **Next, in problem set 4:** attention the way a model runs it while it writes, one query at
# a time from a KV cache; where the order of the tokens comes from (the sinusoidal positions,
# and RoPE's rotations of the queries and keys); why the key bias stops being harmless once
# positions enter the scores; and an induction head built from your previous-token head.
# The other half of a transformer block (the MLP, residual connections and layer norm) comes in
# the next chapter.
