# %% [markdown]
# # Problem set 4: beyond one head
#
# Problem set 3 ended with three remarks it never let you check: heads compose into
# **circuits** (a previous-token head feeds an induction head), the key bias `b_K` that does
# nothing stops being harmless once **positions** enter the scores, and attention by itself is
# **blind to order**. In this problem set you check all three, and you learn how a language
# model actually runs attention when it writes text: one token at a time, from a **cache**.
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
from attention_course.worked_inputs import (BIAS_B_K, BIAS_K, BIAS_Q, CAT_SAT, INDUCTION_TOKENS, INDUCTION_VOCAB,
                                            POSITIONS_D, POSITIONS_T, ROPE_K, ROPE_PROPERTY_T, ROPE_Q, ROPE_X,
                                            STEP_K_CACHE, STEP_QUERY, STEP_V_CACHE, W_K_CAT_SAT, W_Q_CAT_SAT,
                                            W_V_CAT_SAT)

# %% [markdown]
# ## Your functions from problem sets 1 to 3
#
# This problem set builds on what you wrote. Paste the bodies of your own `softmax` (problem
# set 1), `causal_mask` and `scaled_dot_product_attention` (problem set 2) and
# `previous_token_head` (problem set 3) into the four cells below, in place of their
# `raise NotImplementedError()` lines, then run the cell after them: it runs those problem
# sets' checks on them again. They earn no points here, but your `attend_step`,
# `key_bias_effect` and `induction_heads` use them, also when they are graded: fix anything
# those checks report first. (If a check below says one of your functions is not implemented
# yet although you wrote it, one of these four still raises `NotImplementedError`.)

# %% [solution] softmax

# %% [solution] causal_mask

# %% [solution] scaled_dot_product_attention

# %% [solution] previous_token_head

# %%
# The checks of problem sets 1 to 3, on the functions you pasted above.
from autograder.selfcheck import check

check("softmax", softmax)
check("causal_mask", causal_mask)
check("scaled_dot_product_attention", scaled_dot_product_attention)
check("previous_token_head", previous_token_head)

# %% [markdown]
# ## Exercise 1: `attend_step`, one query at a time
#
# A language model writes text one token at a time. To choose token $t + 1$ it runs the
# whole network on position $t$, and at every attention layer position $t$'s query looks at
# the keys and values of positions $0, 1, \dots, t$. Those keys and values never change once
# computed (the causal mask guarantees that a position's key depends only on its own past),
# so the model keeps them: the **KV cache**. Each step then costs one query against $t$
# cached rows, instead of recomputing the whole $T \times T$ score table.
#
# One step is one row of the causal attention you wrote in problem set 2:
#
# $$\text{scores}_j = \frac{q \cdot k_j}{\sqrt{d_k}}, \qquad w = \operatorname{softmax}(\text{scores}),
#   \qquad \text{out} = \sum_j w_j\, v_j .$$
#
# **A worked step.** In problem set 2's causal "the cat sat", the query of "sat" is $q = (2, 1)$
# and the cache holds the keys $(1, 1), (2, 0), (2, 1)$ and the values $(1, 2), (2, 1), (1, 0)$
# of the three positions. The scores are $(3, 4, 5)$, over $\sqrt 2$; the weights come out
# $(0.140, 0.284, 0.576)$ and the output $(1.284, 0.564)$: exactly row 2 of that problem set's
# causal head, computed alone.
#
# **What to write.** `attend_step(q, K_cache, V_cache, scale=None)`: `q` is `(d_k,)`,
# `K_cache` is `(t, d_k)` and `V_cache` is `(t, d_v)`, one row per cached position. `scale`
# multiplies the scores and defaults to $1/\sqrt{d_k}$. Return `(out, weights)` with shapes
# `(d_v,)` and `(t,)`. Use your `softmax`: the scores can be large.
#
# **Watch out.** The scale is $1/\sqrt{d_k}$, not $1/d_k$; and the output blends the *values*,
# not the keys.

# %% [solution] attend_step

# %% [tests] attend_step

# %%
# Try it: "sat"'s step against the cache of "the cat sat".
try:
    out, weights = attend_step(STEP_QUERY, STEP_K_CACHE, STEP_V_CACHE)
    print("weights:", weights)  # about (0.140, 0.284, 0.576)
    print("out:", out)  # about (1.284, 0.564)
except NotImplementedError:
    print("Implement attend_step above (and paste your softmax) first.")

# %% [markdown]
# ## Exercise 2: `decode_with_cache`, a whole sequence, step by step
#
# Now run a sequence the way generation does. Start with an empty cache; for each position
# $t = 0, 1, \dots, T-1$:
#
# 1. project the token: $q_t = x_t W_Q$, $k_t = x_t W_K$, $v_t = x_t W_V$;
# 2. **append** $k_t$ and $v_t$ to the cache (which then holds positions $0..t$);
# 3. attend from $q_t$ to the cache with your `attend_step`; that is output row $t$.
#
# Step 2 comes before step 3 on purpose: a token may look at itself (the causal mask keeps the
# diagonal). And the cache holds only what has been appended: when a model generates, token
# $t + 1$ does not exist yet while position $t$ is computed.
#
# The result must be **exactly** causal attention, `scaled_dot_product_attention(X @ W_Q, X @
# W_K, X @ W_V, mask=causal_mask(T))`: the same numbers, computed one row at a time (the
# course's own tests hold the reference answer to PyTorch's
# `scaled_dot_product_attention(..., is_causal=True)` within $10^{-10}$). One hidden check feeds a sequence whose later tokens are a thousand times
# larger than the earlier ones: a cache that lets any position see the future is swamped.
#
# **What to write.** `decode_with_cache(X, W_Q, W_K, W_V)`: `X` is `(T, d)` (one sequence),
# `W_Q` and `W_K` are `(d, d_k)`, `W_V` is `(d, d_v)`; return `out` of shape `(T, d_v)`.
#
# **Watch out.**
#
# - Projecting the whole sequence's keys up front and attending to all of them is not a cache:
#   it looks ahead.
# - Attending before appending misses the current position.

# %% [solution] decode_with_cache

# %% [tests] decode_with_cache

# %%
# Try it: "the cat sat" one position at a time, against problem set 2's causal head.
try:
    rows = decode_with_cache(CAT_SAT, W_Q_CAT_SAT, W_K_CAT_SAT, W_V_CAT_SAT)
    print("step by step:\n", rows)
    whole, _ = scaled_dot_product_attention(CAT_SAT @ W_Q_CAT_SAT, CAT_SAT @ W_K_CAT_SAT, CAT_SAT @ W_V_CAT_SAT,
                                            mask=causal_mask(3))
    print("same as causal attention:", np.allclose(rows, whole))
except NotImplementedError:
    print("Implement decode_with_cache above (and paste your problem set 2 functions) first.")

# %% [markdown]
# ## Exercise 3: `sinusoidal_positions`, where order comes from
#
# Shuffle the tokens of a sequence and run attention without a mask: every output row is
# shuffled the same way, and nothing else changes. Each score $q_i \cdot k_j$ depends on the
# two tokens, never on *where* they sit, so "dog bites man" and "man bites dog" look alike.
# Attention is blind to order. (The causal mask breaks the symmetry only a little: it tells
# a token which tokens came before it, not in what order.)
#
# The original transformer fixes this by **adding** a vector that depends only on the position
# to each token's embedding, $x_p \leftarrow x_p + \mathrm{PE}_p$. Its choice is a table of
# sines and cosines: for the pair of columns $(2i, 2i+1)$,
#
# $$\mathrm{PE}[p, 2i] = \sin\!\Big(\frac{p}{10000^{2i/d}}\Big), \qquad
#   \mathrm{PE}[p, 2i+1] = \cos\!\Big(\frac{p}{10000^{2i/d}}\Big).$$
#
# Pair $i$ turns with frequency $10000^{-2i/d}$: the first pair ($i = 0$) by one radian per
# position, the last ones very slowly, like the hands of a clock. Both $p$ and $i$ count from
# 0, so position 0 is $(0, 1, 0, 1, \dots)$.
#
# **A worked table.** With $T = 3$ and $d = 4$ the two frequencies are $1$ and
# $10000^{-2/4} = 1/100$, so row $p$ holds the angles $p$ and $p/100$. Row 1 is
# $(\sin 1, \cos 1, \sin 0.01, \cos 0.01) = (0.841, 0.540, 0.010, 1.000)$.
#
# **What to write.** `sinusoidal_positions(T, d)` returns the `(T, d)` table, sine in the even
# columns and cosine in the odd ones, interleaved as the formula says. Raise `ValueError`
# when `d` is odd or when `T` or `d` is not positive.
#
# **Watch out.** Count from 0 (a table that starts at position 1, or at frequency index 1, is
# shifted); and interleave: `[sin | cos]` side by side in two halves is another layout.

# %% [solution] sinusoidal_positions

# %% [tests] sinusoidal_positions

# %%
# Try it: the worked table, and a picture of a longer one.
try:
    print(f"the table for T = {POSITIONS_T}, d = {POSITIONS_D}:\n", sinusoidal_positions(POSITIONS_T, POSITIONS_D))
    show_heatmaps({"(PE + 1) / 2, T = 24, d = 16": (sinusoidal_positions(24, 16) + 1) / 2},
                  axes=("column: sin at 2i, cos at 2i + 1", "position p"), scale="(PE + 1) / 2: 0 is -1, 1 is +1")
except NotImplementedError:
    print("Implement sinusoidal_positions above first.")

# %% [markdown]
# ## Exercise 4: `rope`, positions as rotations
#
# Modern models (LLaMA, Mistral, most open models since 2023) do not add positions to the
# tokens. They **rotate** each query and each key by an angle proportional to its position,
# right before the dot product: **rotary position embeddings** (RoPE). Cut a vector of width
# $d$ into $d/2$ pairs of **neighbours** $(x_{2i}, x_{2i+1})$ and turn pair $i$ at position $p$ by
# the angle $\theta = p\,\omega_i$, with $\omega_i = \text{base}^{-2i/d}$ (base 10000 by default):
#
# $$\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} =
#   \begin{pmatrix} \cos\theta & -\sin\theta \\ \sin\theta & \cos\theta \end{pmatrix}
#   \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}.$$
#
# **Why it works.** A rotation keeps lengths, and the dot product of two rotated pairs only
# sees the *difference* of their angles: $R(\alpha) a \cdot R(\beta) b = a \cdot R(\beta - \alpha) b$.
# So a query at position $m$ and a key at position $n$ score
#
# $$\operatorname{rope}(q)_m \cdot \operatorname{rope}(k)_n = \sum_i (q\text{'s pair } i) \cdot
#   R\big((n - m)\,\omega_i\big)\,(k\text{'s pair } i) ,$$
#
# which depends on $m - n$ and not on $m$ or $n$ alone: attention learns *relative*
# positions ("the token two back"), whatever the absolute position.
#
# **A worked example.** Three copies of $(1, 0, 1, 0)$ at positions 0, 1, 2, with $d = 4$: the
# frequencies are $1$ and $1/100$, so row 1 becomes
# $(\cos 1, \sin 1, \cos 0.01, \sin 0.01) = (0.540, 0.841, 1.000, 0.010)$, and row 0 stays as it is.
#
# **Which pairs.** This problem set pairs **neighbours**, $(x_0, x_1), (x_2, x_3), \dots$, as the
# RoFormer paper writes it, as Meta's original LLaMA code computes it (with complex numbers), and
# as the sine and cosine sit in Exercise 3's table. Some libraries (GPT-NeoX, Hugging Face's LLaMA)
# pair each $x_i$ with $x_{i + d/2}$ instead, the two *halves*. Both are rotations with the
# relative property above; they differ by a fixed shuffle of the coordinates, and a model trained
# with one gives garbage with the other. Use neighbours here.
#
# **What to write.** `rope(X, base=10000.0)`: `X` is `(..., T, d)` (any leading axes ride
# along); position $p$ is the row's index along the `T` axis. Return an array of the same
# shape. Raise `ValueError` when `d` is odd. The check cell tests the values and the property:
# the same $q$ at every position and the same $k$ at every position must give a score table
# that is constant along each diagonal.
#
# **Watch out.** Angles count from 0 (position 0 is not rotated; pair 0 turns at frequency
# 1), and the pairs are neighbours, not halves.

# %% [solution] rope

# %% [tests] rope

# %%
# Try it: the worked example, and the score table of one q and one k at every position.
try:
    print("rope of three copies of (1, 0, 1, 0):\n", rope(ROPE_X))
    Q_same = np.tile(ROPE_Q, (ROPE_PROPERTY_T, 1))  # the same query at every position
    K_same = np.tile(ROPE_K, (ROPE_PROPERTY_T, 1))  # the same key at every position
    print("without positions every score is q . k:\n", Q_same @ K_same.T)
    print("with rope, constant along each diagonal (it depends only on m - n):\n", rope(Q_same) @ rope(K_same).T)
except NotImplementedError:
    print("Implement rope above first.")

# %% [markdown]
# ## Exercise 5: `key_bias_effect`, the bias that stops being harmless
#
# Problem set 2 showed that a key bias changes nothing: with $k_j = x_j W_K + b_K$, every score
# of query $i$ moves by the same amount $q_i \cdot b_K$, and softmax ignores a shift of a whole
# row. Under RoPE the keys are rotated *after* the bias is added (the bias is part of the key
# projection), so key $n$ carries $R_n b_K$, a bias turned by $n$'s own angle:
#
# $$\operatorname{rope}(q)_m \cdot \operatorname{rope}(k + b_K)_n = \operatorname{rope}(q)_m \cdot \operatorname{rope}(k)_n
#   + \underbrace{(R_m q_m) \cdot (R_n b_K)}_{\text{depends on } n} .$$
#
# The second term is no longer the same for every key of a row, so the weights change. (Many
# models with rotary positions, LLaMA among them, have no biases in these projections at all;
# where a model keeps them, as Qwen does, the key bias is a real parameter that shapes attention.)
#
# **What to write.** `key_bias_effect(Q, K, b_K, base=10000.0)`: `Q` and `K` are
# `(..., T, d)`, `b_K` is `(d,)`. Compute the attention weights
# $\operatorname{softmax}(Q K^\top / \sqrt d)$ over the keys, with no mask, and return two floats:
#
# - `plain`: the largest absolute change in the weights when `b_K` is added to every key,
#   without positions. It is 0 up to rounding (around $10^{-16}$).
# - `rotated`: the same change when your `rope` (with `base`) is applied to the queries and to
#   the keys, the bias added **before** rotating: compare the weights from `rope(Q)` and
#   `rope(K + b_K)` with those from `rope(Q)` and `rope(K)`.
#
# **Watch out.** Adding `b_K` after rotating, `rope(K) + b_K`, shifts whole rows again and
# gives 0 twice.

# %% [solution] key_bias_effect

# %% [tests] key_bias_effect

# %%
# Try it: the worked queries, keys and bias.
try:
    plain, rotated = key_bias_effect(BIAS_Q, BIAS_K, BIAS_B_K)
    print(f"largest change without positions: {plain:.2g}")
    print(f"largest change with rope:          {rotated:.4f}")
except NotImplementedError:
    print("Implement key_bias_effect above (and rope, and paste your softmax) first.")

# %% [markdown]
# ## Exercise 6: `induction_heads`, two heads that complete a pattern
#
# Problem set 3's previous-token head was announced as the first half of an **induction head**.
# Here is the whole circuit. Read the sequence "A B C D ... A B C": at the second "A", which token
# comes next? A model that has seen the first half guesses "B", because last time "A" was
# followed by "B". Two attention layers do it:
#
# - **Layer 1, a previous-token head** (yours from problem set 3): position $j$ copies the token
#   of position $j - 1$ and writes it into a slot of its own vector, `prev`. After it, the
#   position of the first "B" says *"the token before me was A"*.
# - **Layer 2, the induction head**: the current token asks *"where was the token before you
#   the same as me?"* Its query is its own token; each key is that position's `prev`; the
#   match is the first "B", and its value, its own token "B", is copied out as the prediction.
#
# **The residual stream.** Each position carries one vector of width $d = 2 n_{\text{vocab}} + T$:
#
# $$x_t = \big[\, \operatorname{one\_hot}(\text{token}_t) \;\big|\; \operatorname{one\_hot}(t) \;\big|\;
#   \text{prev} \,\big], \qquad \text{prev} = 0 \text{ on input.}$$
#
# Layer 1 runs causal attention with scale $1/\sqrt{T}$ (its `W_K1` is `(d, T)`) and **adds** its
# output, of width $n_{\text{vocab}}$, into the prev slot: $x \leftarrow x + [\,0 \mid 0 \mid
# \text{out}_1\,]$. Layer 2 runs causal attention with scale $1/\sqrt{n_{\text{vocab}}}$ on that
# stream; the argmax of its output row $t$ is the prediction of token $t + 1$.
#
# **Build layer 1 from your previous-token head.** `previous_token_head(n_vocab, T)` gives
# matrices with $n_{\text{vocab}} + T$ rows, one per coordinate of $[\text{token} \mid
# \text{position}]$. The stream has $n_{\text{vocab}}$ more coordinates (prev) at the end, which
# layer 1 must ignore: append that many rows of zeros to each matrix. For layer 2, write
# three `(d, n_vocab)` matrices:
#
# - `W_Q2`: the token part to a large gain times the identity ("which token am I?");
# - `W_K2`: the **prev** part to the identity ("which token came before me?");
# - `W_V2`: the token part to the identity ("here is my token").
#
# How large a gain? As in problem set 3: the scores are divided by $\sqrt{n_{\text{vocab}}}$ and
# the matching key must beat up to $T - 1$ others; a gap of about 12 after scaling
# ($e^{12} \approx 162{,}755$) is ample.
#
# **Graded on repeated sequences.** A prefix of $T/2$ distinct tokens, repeated once ($T$ even,
# $6 \le T \le 64$, $n_{\text{vocab}} \ge T/2 + 1$). The prediction must be right for at least 95%
# of the positions $t$ from $T/2 + 1$ to $T - 2$ ($T - 1$ has no next token to predict).
#
# **Why not position $T/2$?** It holds the first token of the repeat, the second "A". Its query
# asks for a position whose prev is "A". Position 1 qualifies (its prev is the first "A"), but
# so does position 0: it has no previous token, so the causal previous-token head can only look
# at itself, and position 0's prev is its *own* token, "A". Two keys match equally, and layer 2
# splits its attention half and half between predicting "B" and predicting "A". The picture
# below shows it: in the second half, a diagonal **stripe** (position $t$ looks at
# $t - T/2 + 1$), and at row $T/2$ two half-weights. Real models avoid this with a
# **beginning-of-sequence token**: a special token at position 0 that never appears elsewhere,
# so position 0's prev matches no query, and every real token has a true predecessor.

# %% [solution] induction_heads

# %% [tests] induction_heads

# %%
# Try it: run both layers on the worked sequence with your scaled_dot_product_attention.
tokens = np.array(INDUCTION_TOKENS)
n_vocab, T = INDUCTION_VOCAB, len(tokens)
try:
    W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2 = induction_heads(n_vocab, T)
    x = np.concatenate([np.eye(n_vocab)[tokens], np.eye(T), np.zeros((T, n_vocab))], axis=1)  # (T, d)
    out1, w1 = scaled_dot_product_attention(x @ W_Q1, x @ W_K1, x @ W_V1, mask=causal_mask(T))
    x = x + np.concatenate([np.zeros((T, n_vocab + T)), out1], axis=1)  # layer 1 writes prev
    out2, w2 = scaled_dot_product_attention(x @ W_Q2, x @ W_K2, x @ W_V2, mask=causal_mask(T))
    print("tokens:     ", tokens)
    print("predictions:", out2.argmax(axis=-1), "(position t predicts token t + 1)")
    print(f"row {T // 2} (the second {tokens[0]}) splits its weight:", np.round(w2[T // 2, :3], 3))
    labels = [f"{t}:{tok}" for t, tok in enumerate(tokens)]
    show_heatmaps({"layer 1: previous token": w1, "layer 2: induction stripe": w2}, labels)
except NotImplementedError:
    print("Implement induction_heads above (and paste your earlier functions) first.")

# %% [markdown]
# ## What you have learned
#
# - Generation runs attention one query at a time against a **KV cache**; appending the current
#   key before attending, and nothing after it, gives exactly causal attention.
# - Attention is blind to order. Positions enter either **added** to the tokens (the sinusoidal
#   table, pairs of sines and cosines at geometric frequencies) or as **rotations** of queries and
#   keys (RoPE), whose scores depend only on the distance $m - n$.
# - Under rotations the key bias is no longer a shift of a whole row of scores, so it changes the
#   weights: problem set 2's harmless `b_K` is harmless only without positions.
# - Two heads compose into a circuit: a previous-token head writes "the token before me" into the
#   stream, and an induction head reads it to complete a repeated pattern. Position 0 has no
#   predecessor, which a beginning-of-sequence token fixes.
