"""The catalogue of known mistakes: each is the reference answer of one exercise with one
edit, and the misconception it illustrates (ids from CONTRACTS.md's table).

Written once, here. The grader's diagnosis runs each edited reference (and each function of
the same problem set that calls it) on a student's inputs (autograder/reference.py); the
sample class and the test corpus hand in the same edits as students' answers
(examples/make_class.py). Hidden like the solutions: each is one edit away from a right answer.
Entries of one exercise are tried in this order; put the more specific first.
"""
from autograder.catalogue import Mistake, after_docstring, swap

NAIVE_SOFTMAX = "np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)"  # overflows past ~709
SDPA_CALL = "scaled_dot_product_attention(Q, K, V)"

# Where a mistake reaches an exercise (through a function it calls) and changes nothing it
# computes there, or nothing any check can afford to draw: why no visible check sees it.
AXIS_MINUS_ONE = "{} calls softmax with axis=-1 only, where ignoring the axis is right"
SPREAD_IN_RANGE = ("score_spread's scores are q . k of N(0, 1) vectors, about N(0, d): exp() of one overflows "
                   "(or a row falls 745 below another's maximum) only at widths near 10^5, whose draws would "
                   "cost more than the rest of the set's grading")
NO_MASK = "attention_with_biases passes no mask to scaled_dot_product_attention"
NO_SCALE = "{} passes no scale to {}, so 0.0 never arrives"
SOFTMAX_REACHES = {"raw_self_attention", "wired_attention", "score_spread"}

MISTAKES = (
    # ps1 ---------------------------------------------------------------------------------
    Mistake("softmax", "axis_ignored",
            swap("S.max(axis=axis,", "S.max(axis=-1,", "e.sum(axis=axis,", "e.sum(axis=-1,"),
            visible_blind={f: AXIS_MINUS_ONE.format(f) for f in SOFTMAX_REACHES}),
    Mistake("softmax", "softmax_global_max", swap("S.max(axis=axis, keepdims=True)", "S.max()"),
            visible_blind={"score_spread": SPREAD_IN_RANGE}),
    Mistake("softmax", "unstable_softmax", swap("e = np.exp(shifted)", "e = np.exp(S)"),
            visible_blind={"score_spread": SPREAD_IN_RANGE}),
    Mistake("softmax", "softmax_wrong_axis",
            swap("S.max(axis=axis,", "S.max(axis=0,", "e.sum(axis=axis,", "e.sum(axis=0,")),
    # exp(S - max) divided by its largest entry, which is 1: no normalisation at all.
    Mistake("softmax", "softmax_divides_by_max",
            swap("return e / e.sum(axis=axis, keepdims=True)", "return e / e.max(axis=axis, keepdims=True)")),
    Mistake("softmax", "softmax_global_sum", swap("e / e.sum(axis=axis, keepdims=True)", "e / e.sum()")),
    Mistake("raw_self_attention", "softmax_wrong_axis", swap("axis=-1", "axis=0")),
    Mistake("raw_self_attention", "unstable_softmax",
            swap("weights = softmax(scores, axis=-1)", f"weights = {NAIVE_SOFTMAX}")),
    Mistake("raw_self_attention", "scaled_too_early",
            swap("softmax(scores, axis=-1)", "softmax(scores / np.sqrt(X.shape[-1]), axis=-1)")),
    Mistake("raw_self_attention", "weights_applied_transposed", swap("out = weights @ X", "out = weights.T @ X")),
    Mistake("wired_attention", "scale_by_dk", swap("np.sqrt(K.shape[-1])", "K.shape[-1]")),
    # The embeddings' width instead of the keys': on the river bank (d = 4 = d_k squared) the same
    # weights as scale_by_dk, so neither is named there; its wider copy (d = 6) tells them apart.
    Mistake("wired_attention", "scale_by_d_model", swap("np.sqrt(K.shape[-1])", "np.sqrt(X.shape[-1])")),
    Mistake("wired_attention", "missing_scale", swap("scores / np.sqrt(K.shape[-1])", "scores")),
    Mistake("wired_attention", "softmax_wrong_axis", swap("axis=-1", "axis=0")),
    Mistake("wired_attention", "weights_transposed", swap("X @ W_Q", "X @ W_Q.T", "X @ W_K", "X @ W_K.T")),
    Mistake("wired_attention", "queries_keys_swapped", swap("scores = Q @ K.T", "scores = K @ Q.T")),
    # The scale moved into the scores the function returns, which the contract wants unscaled.
    Mistake("wired_attention", "scores_returned_scaled",
            swap("scores = Q @ K.T", "scores = Q @ K.T / np.sqrt(K.shape[-1])",
                 "softmax(scores / np.sqrt(K.shape[-1]), axis=-1)", "softmax(scores, axis=-1)")),
    Mistake("score_spread", "scale_by_dk", swap("scores / np.sqrt(d)", "scores / d")),
    Mistake("score_spread", "missing_scale", swap("softmax(scores / np.sqrt(d), axis=-1)", "softmax(scores, axis=-1)")),
    Mistake("score_spread", "spread_of_scaled_scores",
            swap("float(scores.std())", "float((scores / np.sqrt(d)).std())")),
    # One set of keys for every query: an estimate of the same means, but from n_keys keys in all.
    Mistake("score_spread", "keys_shared",
            swap("k = rng.standard_normal((n_rows, n_keys, d))", "k = rng.standard_normal((1, n_keys, d))")),
    Mistake("score_spread", "rng_ignored", after_docstring("score_spread", "rng = np.random.default_rng(seed=0)")),

    # ps2 ---------------------------------------------------------------------------------
    Mistake("causal_mask", "mask_wrong_direction",
            swap("np.triu(np.full((T, T), -np.inf), k=1)", "np.tril(np.full((T, T), -np.inf), k=-1)")),
    Mistake("causal_mask", "mask_wrong_direction", swap("k=1)", "k=0)"), label="diagonal"),
    Mistake("causal_mask", "mask_filled_finite", swap("np.full((T, T), -np.inf)", "np.full((T, T), -1e9)")),
    Mistake("scaled_dot_product_attention", "scale_by_dk", swap("1.0 / np.sqrt(Q.shape[-1])", "1.0 / Q.shape[-1]")),
    # The scale taken for a divisor: the default 1/sqrt(d_k) then multiplies the scores by sqrt(d_k).
    Mistake("scaled_dot_product_attention", "scale_as_divisor",
            swap("* scale  # (..., T_q, T_k)", "/ scale  # (..., T_q, T_k)")),
    Mistake("scaled_dot_product_attention", "missing_scale",
            swap("(Q @ np.swapaxes(K, -1, -2)) * scale", "Q @ np.swapaxes(K, -1, -2)")),
    Mistake("scaled_dot_product_attention", "softmax_wrong_axis", swap("axis=-1)", "axis=-2)")),
    Mistake("scaled_dot_product_attention", "missing_mask", swap("scores = scores + mask", "scores + mask"),
            visible_blind={"attention_with_biases": NO_MASK}),
    Mistake("scaled_dot_product_attention", "mask_wrong_direction",
            swap("scores = scores + mask", "scores = scores + np.swapaxes(mask, -1, -2)"),
            visible_blind={"attention_with_biases": NO_MASK}),
    # -inf replaced by a large finite number: right until a masked key scores 1e4 above the rest.
    Mistake("scaled_dot_product_attention", "mask_filled_finite",
            swap("scores = scores + mask", "scores = scores + np.maximum(mask, -1e4)"),
            visible_blind={"attention_with_biases": NO_MASK}),
    # The softmax of the unmasked scores, its hidden keys zeroed and the rest renormalised.
    Mistake("scaled_dot_product_attention", "mask_renormalised",
            swap("scores = scores + mask  # -inf hides a key", "hidden = np.isneginf(mask)",
                 "weights = softmax(scores, axis=-1)  # (..., T_q, T_k), over the keys",
                 "weights = softmax(scores, axis=-1)\n"
                 "    if mask is not None:\n"
                 "        weights = np.where(hidden, 0.0, weights)\n"
                 "        weights = weights / weights.sum(axis=-1, keepdims=True)"),
            visible_blind={"attention_with_biases": NO_MASK}),
    Mistake("scaled_dot_product_attention", "scale_zero_ignored", swap("if scale is None:", "if not scale:"),
            visible_blind={"attention_with_biases": NO_SCALE.format("attention_with_biases",
                                                                    "scaled_dot_product_attention")}),
    Mistake("scaled_dot_product_attention", "unstable_softmax",
            swap("weights = softmax(scores, axis=-1)", f"weights = {NAIVE_SOFTMAX}")),
    Mistake("scaled_dot_product_attention", "values_not_projected",
            swap("return weights @ V, weights", "return weights @ K, weights")),
    Mistake("attention_shapes", "shape_tq_tk_swapped",
            swap('"S": (B, T_q, T_k), "A": (B, T_q, T_k)', '"S": (B, T_k, T_q), "A": (B, T_k, T_q)')),
    Mistake("attention_shapes", "weights_transposed",  # nn.Linear's (out, in)
            swap('"W_Q": (d, d_k), "W_K": (d, d_k)', '"W_Q": (d_k, d), "W_K": (d_k, d)',
                 '"W_V": (d, d_v)', '"W_V": (d_v, d)')),
    *(Mistake("fused_self_attention", "qkv_split_order", swap("Q, K, V = np.split", f"{order} = np.split"),
              label=order.replace(", ", "").lower())
      for order in ("K, Q, V", "Q, V, K", "V, Q, K", "K, V, Q", "V, K, Q")),
    Mistake("fused_self_attention", "missing_scale",
            swap("(Q @ np.swapaxes(K, -1, -2)) * scale", "Q @ np.swapaxes(K, -1, -2)")),
    Mistake("fused_self_attention", "softmax_wrong_axis", swap("* scale, axis=-1)", "* scale, axis=-2)")),
    Mistake("fused_self_attention", "scale_as_divisor", swap("* scale, axis=-1)", "/ scale, axis=-1)")),
    Mistake("fused_self_attention", "values_not_projected", swap("return weights @ V", "return weights @ K")),
    Mistake("fused_self_attention", "values_not_projected", swap("return weights @ V", "return weights @ X"),
            label="raw_x"),  # (..., T, d), not (..., T, h), when d != h
    Mistake("attention_with_biases", "missing_scale", swap(SDPA_CALL, SDPA_CALL[:-1] + ", scale=1.0)")),
    Mistake("attention_with_biases", "scale_by_dk", swap(SDPA_CALL, SDPA_CALL[:-1] + ", scale=1 / K.shape[-1])")),
    Mistake("attention_with_biases", "values_not_projected", swap(SDPA_CALL, SDPA_CALL.replace("V)", "X)"))),
    Mistake("attention_with_biases", "value_bias_dropped", swap("X @ W_V + b_V", "X @ W_V")),
    Mistake("attention_with_biases", "weights_transposed",
            swap("X @ W_Q +", "X @ W_Q.T +", "X @ W_K +", "X @ W_K.T +", "X @ W_V +", "X @ W_V.T +")),

    # ps3 ---------------------------------------------------------------------------------
    Mistake("previous_token_head", "attends_to_self",
            swap("W_Q[n_vocab + 1 :, :-1] = gain * np.eye(T - 1)", "W_Q[n_vocab:, :] = gain * np.eye(T)")),
    # Position i asks for i + 1, which the causal mask hides: the row spreads over 0..i.
    Mistake("previous_token_head", "attends_to_next",
            swap("W_Q[n_vocab + 1 :, :-1] = gain * np.eye(T - 1)", "W_Q[n_vocab : -1, 1:] = gain * np.eye(T - 1)")),
    # The right direction with no gain: the 1/sqrt(T) scale leaves the previous key a margin of 1/sqrt(T).
    Mistake("previous_token_head", "head_not_sharp", swap("gain = 12.0 * np.sqrt(T)", "gain = 1.0")),
    Mistake("qk_circuit", "weights_transposed", swap("W_Q @ W_K.T", "W_K @ W_Q.T")),
    Mistake("ov_circuit", "weights_transposed", swap("W_V @ W_O", "W_O.T @ W_V.T")),
    Mistake("multi_head_attention", "scale_by_d_model", swap("mask=mask", "mask=mask, scale=1 / np.sqrt(X.shape[-1])")),
    Mistake("multi_head_attention", "scale_by_dk", swap("mask=mask", "mask=mask, scale=1 / d_head")),
    Mistake("multi_head_attention", "missing_scale", swap("mask=mask", "mask=mask, scale=1.0")),
    Mistake("multi_head_attention", "missing_mask", swap(", mask=mask", "")),
    Mistake("multi_head_attention", "mask_wrong_direction", swap("causal_mask(T) if", "causal_mask(T).T if")),
    Mistake("multi_head_attention", "values_not_projected", swap("X @ W_V[:, cols]", "X @ W_K[:, cols]")),
    Mistake("multi_head_attention", "d_head_from_d_model",
            swap("d_head = W_Q.shape[1] // n_heads", "d_head = X.shape[-1] // n_heads")),
    # (..., T, n_heads * d_head) reshaped to (..., n_heads, T, d_head) without moving the head axis.
    Mistake("multi_head_attention", "heads_split_without_transpose",
            swap("X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols]",
                 "*((X @ W).reshape(X.shape[:-2] + (n_heads, T, d_head))[..., h, :, :] for W in (W_Q, W_K, W_V))")),
    # Head h's output through the block of W_O of head n_heads - 1 - h: concatenated in reverse.
    Mistake("multi_head_attention", "heads_out_of_order",
            swap("o_h @ W_O[cols, :]", "o_h @ W_O[(n_heads - 1 - h) * d_head : (n_heads - h) * d_head, :]")),
    # The heads concatenated and returned: each head's part placed in its own columns, no W_O.
    Mistake("multi_head_attention", "output_projection_missing",
            swap("o_h @ W_O[cols, :]", "o_h @ np.eye(W_O.shape[0])[cols, :]")),

    # ps4 ---------------------------------------------------------------------------------
    Mistake("attend_step", "scale_by_dk", swap("1.0 / np.sqrt(q.shape[-1])", "1.0 / q.shape[-1]")),
    Mistake("attend_step", "missing_scale", swap("(K_cache @ q) * scale", "K_cache @ q")),
    Mistake("attend_step", "scale_as_divisor", swap("(K_cache @ q) * scale", "(K_cache @ q) / scale")),
    Mistake("attend_step", "values_not_projected", swap("weights @ V_cache", "weights @ K_cache")),
    Mistake("attend_step", "unstable_softmax",
            swap("softmax(scores, axis=-1)", NAIVE_SOFTMAX)),
    Mistake("attend_step", "scale_zero_ignored", swap("if scale is None:", "if not scale:"),
            visible_blind={"decode_with_cache": NO_SCALE.format("decode_with_cache", "attend_step")}),
    Mistake("decode_with_cache", "cache_sees_future", swap("np.stack(K_cache), np.stack(V_cache)", "X @ W_K, X @ W_V")),
    # The cache replaced by the current position instead of grown: each position sees only itself.
    Mistake("decode_with_cache", "cache_overwritten",
            swap("K_cache.append(X[t] @ W_K)", "K_cache = [X[t] @ W_K]", "V_cache.append(X[t] @ W_V)",
                 "V_cache = [X[t] @ W_V]")),
    # attends before it appends; at position 0, with nothing cached yet, to itself
    Mistake("decode_with_cache", "cache_misses_current",
            swap("np.stack(K_cache), np.stack(V_cache)",
                 "np.stack(K_cache[:t] or K_cache), np.stack(V_cache[:t] or V_cache)")),
    Mistake("sinusoidal_positions", "angles_from_one", swap("np.arange(0, d, 2)", "np.arange(2, d + 2, 2)"),
            label="frequency"),
    Mistake("sinusoidal_positions", "angles_from_one", swap("np.arange(T)[:, None]", "np.arange(1, T + 1)[:, None]"),
            label="position"),
    Mistake("sinusoidal_positions", "pairs_as_halves",
            swap("np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(T, d)",
                 "np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)")),
    Mistake("sinusoidal_positions", "sin_cos_swapped",
            swap("np.stack([np.sin(angles), np.cos(angles)]", "np.stack([np.cos(angles), np.sin(angles)]")),
    # The pair index i used where the exponent wants 2i: frequencies fall half as fast.
    Mistake("sinusoidal_positions", "pair_index_not_doubled", swap("i = np.arange(0, d, 2)", "i = np.arange(d // 2)")),
    Mistake("sinusoidal_positions", "frequency_inverted",
            swap("np.arange(T)[:, None] / 10000.0 ** (i / d)", "np.arange(T)[:, None] * 10000.0 ** (i / d)")),
    Mistake("rope", "angles_from_one", swap("-np.arange(0, d, 2) / d", "-np.arange(2, d + 2, 2) / d"),
            label="frequency"),
    Mistake("rope", "angles_from_one", swap("np.arange(T)[:, None]", "np.arange(1, T + 1)[:, None]"), label="position",
            visible_blind={"key_bias_effect": "key_bias_effect reads only scores of rotated queries and keys, which "
                                              "depend on m - n alone: moving every position by one changes none"}),
    Mistake("rope", "pairs_as_halves", swap("X[..., 0::2], X[..., 1::2]", "X[..., : d // 2], X[..., d // 2 :]",
                                            "np.stack(rotated, axis=-1).reshape(X.shape)",
                                            "np.concatenate(rotated, axis=-1)")),
    # Each pair turned by minus its angle: the transpose of the rotation matrix.
    Mistake("rope", "rotation_reversed",
            swap("x_even * cos - x_odd * sin, x_even * sin + x_odd * cos",
                 "x_even * cos + x_odd * sin, x_odd * cos - x_even * sin")),
    Mistake("key_bias_effect", "bias_after_rope", swap("rope(K + b_K, base)", "rope(K, base) + b_K")),
    Mistake("key_bias_effect", "missing_scale",
            swap("(Q @ np.swapaxes(K, -1, -2)) * scale", "Q @ np.swapaxes(K, -1, -2)")),
    Mistake("induction_heads", "induction_keyed_on_token", swap("W_K2[prev] = np.eye", "W_K2[:n_vocab] = np.eye")),
    # Layer 2's values carry the previous token (prev) instead of the position's own.
    Mistake("induction_heads", "induction_values_read_prev",
            swap("W_V2[:n_vocab] = np.eye(n_vocab)", "W_V2[prev] = np.eye(n_vocab)")),
)
