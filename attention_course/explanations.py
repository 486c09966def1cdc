"""The attention course's words for its catalogued mistakes (ids from the contract's table).

``EXPLANATIONS`` maps a mistake to its explanation, ``FOR_EXERCISE`` gives one exercise's form
of a mistake its own words, and ``fields`` turns the numbers an exercise reads off a call
(its declaration's ``numbers``, e.g. ``{"d_k": 16}``) into the phrases the templates quote.
The engine adds ``{func}`` and explains its own outcomes (not implemented, timeout, crash).
"""
from __future__ import annotations

import numpy as np

# What nan or inf beside finite values is taken for where no catalogued mistake reproduces
# the output: exp() of a large score overflowed (the engine's checks.looks_like_overflow).
OVERFLOW = "unstable_softmax"

EXPLANATIONS = {
    "scale_by_dk": (
        "{Your} attention weights are too flat: the scores were divided by d_k{dk_num} instead of "
        "sqrt(d_k){sqrt_num}. Dot products of d_k-wide vectors spread like sqrt(d_k), so dividing "
        "by sqrt(d_k) brings them back to unit spread; dividing by d_k over-shrinks them and the "
        "softmax comes out close to uniform."),
    "missing_scale": (
        "{Your} attention weights are too peaked: the scores were not scaled{scale_txt}. Scores of "
        "d_k-wide vectors spread like sqrt(d_k), and a softmax of widely spread scores is "
        "almost one-hot, which stalls training. {fix}Multiply the scores by the scale before the softmax."),
    "softmax_wrong_axis": (
        "The softmax normalised the wrong axis: {your} columns sum to 1 instead of {your} rows. "
        "Each query (a row of the score matrix) shares its attention among the keys, so the "
        "softmax runs over the key axis, the last one (axis=-1)."),
    "axis_ignored": (
        "{Your} softmax ignores its `axis` argument: it always normalises the last axis. {fix}Use the "
        "axis it is given (axis=axis) both where the maximum is subtracted and where the sum is taken."),
    "softmax_global_max": (
        "One maximum was subtracted for the whole array instead of each row's own. A row whose "
        "scores are all far below the largest score anywhere then underflows: every exp() is 0 "
        "and the row becomes 0/0 = nan. {fix}Take the maximum along the softmax's axis, with "
        "keepdims=True, so each row is shifted by its own maximum."),
    "unstable_softmax": (
        "{Your} result contains nan or inf: exp() of a large score overflows. {fix}Subtract each "
        "row's maximum before exponentiating; softmax does not change when every entry of "
        "a row moves by the same amount, and then no exponent is above 0."),
    "values_not_projected": (
        "The output blends the wrong vectors: the weights were applied to the raw inputs (or "
        "to the keys) instead of to the values V = X W_V. Keys decide *where* to look; values "
        "are *what* gets handed over."),
    "value_bias_dropped": (
        "The values lost their bias: V = X W_V + b_V. Unlike b_K, which shifts a whole row of "
        "scores and cancels in the softmax, b_V is carried into every output row (the weights "
        "sum to 1, so it adds b_V exactly once)."),
    "scale_by_d_model": (
        "The scores were scaled by 1/sqrt(d_model){dmodel_txt} instead of 1/sqrt(d_head){sqrt_txt}: "
        "each head's queries and keys are d_head wide, and it is their dot products' spread, "
        "sqrt(d_head), that the scale undoes."),
    "qkv_split_order": (
        "The fused projection was split in the wrong order. W_qkv is [W_Q | W_K | W_V] side "
        "by side, so the first third of the columns of X @ W_qkv are the queries, the second "
        "the keys, the last the values."),
    "weights_transposed": (
        "A weight matrix was used transposed: with tokens as rows the projection is x @ W "
        "(W has shape (d_in, d_out)), not W @ x or x @ W.T. This is the classic nn.Linear "
        "porting bug: nn.Linear stores (out, in) and computes x @ W.T."),
    "mask_wrong_direction": (
        "The mask hides the wrong entries: a causal mask hides the future, key j > query i "
        "(above the diagonal), and keeps the diagonal, since every token may look at itself."),
    "missing_mask": (
        "The mask was ignored: future positions still get weight. {fix}Add the mask to the "
        "scores before the softmax, so -inf entries become weight exactly 0."),
    "shape_tq_tk_swapped": (
        "T_q and T_k are exchanged: the scores and weights have one row per query and one "
        "column per key, (B, T_q, T_k), and the output has one row per query, (B, T_q, d_v)."),
    "attends_to_self": (
        "{Your} head attends to the current position instead of the previous one: query "
        "position i must ask for the key at position i - 1."),
    "cache_sees_future": (
        "{Your} cache looks ahead: position t attended to keys and values of positions after t. "
        "When a model generates text, token t + 1 does not exist yet while token t is being "
        "processed, so position t may only see the cache as it stands: keys 0..t, the ones "
        "appended so far (its own included). {fix}Build the cache one position at a time and never "
        "project the whole sequence's keys up front."),
    "cache_misses_current": (
        "{Your} cache misses the current position: position t attended to keys 0..t-1 only. "
        "{fix}Append position t's key and value to the cache first, then attend: in causal "
        "attention every token may look at itself (the diagonal of the causal mask is kept)."),
    "angles_from_one": (
        "{Your} angles are counted from 1 instead of 0. Positions start at p = 0, whose angle is 0 "
        "(position 0 is left as it is), and the pairs' frequencies start at i = 0, whose "
        "frequency base^(-2i/d) is exactly 1: the first pair turns by one radian per position."),
    "pairs_as_halves": (
        "{You} paired coordinate i with coordinate i + d/2 (the two halves of the vector) instead "
        "of neighbours (2i, 2i + 1). Both layouts are used in practice (the halves one in GPT-NeoX "
        "and Hugging Face's LLaMA, neighbours in the RoFormer paper and Meta's original LLaMA), "
        "but they put different numbers in different places, and a model trained with one gives "
        "garbage with the other. This problem set uses neighbours: x[2i] and x[2i + 1] form "
        "pair i, the layout of sin and cos in the sinusoidal table."),
    "bias_after_rope": (
        "{You} added b_K after rotating the keys. Then every score of a row moves by the same "
        "q . b_K again and softmax cancels it, as without positions. In a model the bias is part "
        "of the key projection, k = x W_K + b_K, and rotary positions rotate that whole key: "
        "rope(K + b_K). Rotated by an angle that depends on the key's position, the bias adds a "
        "different amount to each score, and stops being harmless."),
    "keys_shared": (
        "{Your} queries share their keys: every row of scores uses the same n_keys keys (or the same "
        "query), so each call measures one draw of keys, not n_rows of them, and its numbers move from "
        "seed to seed far more than the statistics allow. {fix}Draw each query's own keys: an array of "
        "shape (n_rows, n_keys, d), beside queries of shape (n_rows, 1, d)."),
    "rng_ignored": (
        "{Your} numbers do not come from the rng {your} function is given: the same seed should give the same "
        "numbers, and another seed other numbers. {fix}Draw every random number with rng.standard_normal(...); "
        "don't make a generator of {your} own, and don't use np.random.seed or the global np.random functions."),
    "mask_filled_finite": (
        "{Your} mask hides a key with a large finite number instead of -inf: a key whose score is "
        "larger still then wins anyway. {fix}Add the mask as it is given: -inf + any score is still -inf, "
        "and exp(-inf) is exactly 0."),
    "mask_renormalised": (
        "{You} took the softmax of the unmasked scores, then zeroed the hidden keys and renormalised. "
        "When a hidden key has the row's largest score, every visible weight has already underflowed "
        "to 0, and the row becomes 0/0 = nan; and a mask's finite entries (-1e9, say) are not "
        "applied at all. {fix}Add the mask to the scores before the softmax."),
    "scale_zero_ignored": (
        "A scale of 0.0 was taken for no scale: `scale or 1/sqrt(d_k)` replaces 0.0, which is false, "
        "by the default. {fix}Test `scale is None`; a scale of 0 makes every score 0 and the weights uniform."),
    "d_head_from_d_model": (
        "Each head's width was worked out from d_model (X's last axis) instead of from the projections: "
        "W_Q has n_heads * d_head columns, and d_head need not be d_model / n_heads. {fix}Divide "
        "W_Q's number of columns by n_heads."),
    "induction_keyed_on_token": (
        "Layer 2 reads the token in the keys instead of the prev slot. Then the current token "
        "finds earlier copies of itself and copies them, which predicts the current token again, "
        "not the next one. An induction head asks \"who came right after an earlier copy of me?\": "
        "its key must say which token came before each position (prev, written by layer 1), and "
        "its value the position's own token."),
    "softmax_divides_by_max": (
        "{Your} softmax divides by the row's largest exp() instead of by their sum: each row's largest "
        "weight comes out exactly 1 and the row sums to more than 1. exp(s - max) is already at most 1, "
        "so dividing by its maximum changes nothing. {fix}Divide by the sum along the axis, "
        "e / e.sum(axis=axis, keepdims=True), so that each row's weights add up to 1."),
    "softmax_global_sum": (
        "{Your} softmax divides by one sum over the whole array instead of each row's own: the weights "
        "of all the rows together add up to 1, so each row gets only a share of 1. {fix}Sum along the "
        "softmax's axis with keepdims=True: e / e.sum(axis=axis, keepdims=True)."),
    "scaled_too_early": (
        "{Your} raw self-attention scaled its scores: here they are X @ X.T, unscaled, because the "
        "problem set measures what the plain dot product does (a token's score with itself, |x|^2, "
        "is its largest). The division by sqrt(d_k) comes in with separate queries and keys."),
    "weights_applied_transposed": (
        "The output blends with the weights transposed: row i of the output is query i's blend, "
        "sum_j weights[i, j] x_j, which is weights @ X. weights.T @ X blends each token by the "
        "weights the other tokens give it, whose column sums are not 1."),
    "queries_keys_swapped": (
        "Queries and keys are exchanged in the scores: {you} computed K @ Q.T, whose row i is how "
        "every query scores against key i. Row i of the score matrix belongs to query i: "
        "scores = Q @ K.T, so scores[i, j] = q_i . k_j, and the softmax runs along each row."),
    "scores_returned_scaled": (
        "The scores {you:return} are already divided by sqrt(d_k){sqrt_num}: the function's third "
        "output is the raw Q @ K.T, and only the softmax's input is scaled. {fix}Keep "
        "scores = Q @ K.T, and take softmax(scores / sqrt(d_k))."),
    "spread_of_scaled_scores": (
        "{Your} std is the spread of the scaled scores (about 1) instead of the raw ones (about "
        "sqrt(d)). The point of the measurement is that q . k of d-wide vectors spreads like sqrt(d). "
        "{fix}Take the standard deviation of q . k itself, before any division."),
    "scale_as_divisor": (
        "The scale is a multiplier, and {you} divided by it: with the default 1/sqrt(d_k){sqrt_txt} {your} "
        "scores were multiplied by sqrt(d_k){sqrt_num} instead of divided, and the weights come out far "
        "too peaked (a scale of 0.0 even divides by zero). {fix}Write scores = (Q @ K^T) * scale."),
    "attends_to_next": (
        "{Your} head looks the wrong way: position i asks for position i + 1. The causal mask hides "
        "i + 1, so what is left of the row has no preferred key and spreads its weight over positions "
        "0..i. Query position i must ask for the key at position i - 1."),
    "head_not_sharp": (
        "{Your} head points the right way but is not sharp enough: raise the gain. The previous position "
        "has the row's largest score, yet not 0.99 of its weight. The scores are divided by sqrt(T){sqrt_T}, and "
        "position i has i other positions to outweigh. {fix}Raise the gain until e^(gain / sqrt(T)) is "
        "about 1000 (T - 1)."),
    "heads_split_without_transpose": (
        "{Your} heads were split with a reshape that did not move the head axis: (..., T, n_heads * "
        "d_head) reshaped straight to (..., n_heads, T, d_head) cuts the array in the wrong places, so "
        "a \"head\" mixes several tokens' columns. {fix}Reshape to (..., T, n_heads, d_head) and then move "
        "the head axis forward (np.swapaxes(..., -2, -3)), or slice head h's columns "
        "h*d_head:(h+1)*d_head{head_txt}."),
    "heads_out_of_order": (
        "{Your} heads went through the wrong blocks of W_O: head h's output must meet rows "
        "h*d_head:(h+1)*d_head of W_O{head_txt}, the rows that follow its columns in the concatenation. "
        "Yours are concatenated in another order, so each head writes with another head's projection."),
    "output_projection_missing": (
        "The output projection is missing: {you} returned the heads concatenated, "
        "(..., T, n_heads * d_head), without multiplying by W_O. out = concat(heads) @ W_O, "
        "of width d_model{dmodel_num}; head h's own part is its output times its block of rows of W_O."),
    "cache_overwritten": (
        "{Your} cache holds only the newest position: each step replaced the cache instead of "
        "appending to it, so position t attended to itself alone and its output is its own value. "
        "{fix}Keep every position's key and value: append position t's to the lists, then attend to all "
        "of them (keys 0..t)."),
    "sin_cos_swapped": (
        "Sine and cosine are exchanged: column 2i holds sin(p * w_i) and column 2i + 1 holds "
        "cos(p * w_i). Check row 0: position 0 must read sin 0 = 0 in the even columns and "
        "cos 0 = 1 in the odd ones."),
    "pair_index_not_doubled": (
        "{Your} frequencies use the pair's number i where the exponent wants 2i: w_i = "
        "10000^(-2i/d){d_txt}, so the last pair's frequency is close to 1/10000. With i alone "
        "the frequencies fall half as fast and the slowest pair turns about 100 times too fast."),
    "frequency_inverted": (
        "{Your} angles multiply by 10000^(2i/d) instead of dividing by it: the frequencies grow "
        "instead of falling from 1, so the later pairs turn thousands of radians per position and "
        "carry no smooth sense of distance. angle = p / 10000^(2i/d){d_txt}."),
    "rotation_reversed": (
        "{Your} rotation turns each pair the other way: (x, y) at angle theta becomes "
        "(x cos theta - y sin theta, x sin theta + y cos theta). {You} used the transpose of that "
        "rotation, which turns by -theta, and position p's vector ends up where position -p's "
        "should be."),
    "induction_values_read_prev": (
        "Layer 2's values carry the prev slot (the token before each position) instead of the "
        "position's own token. Layer 2 finds the position right after an earlier copy of the current "
        "token; what it must copy from there is that position's own token, the one that came next, "
        "not the one before it (the current token again)."),
}


# Where one exercise's form of a mistake needs its own words.
FOR_EXERCISE = {
    ("scale_by_d_model", "wired_attention"): (
        "{Your} scores were scaled by 1/sqrt(d){dmodel_txt}, the width of the embeddings, instead of "
        "1/sqrt(d_k){sqrt_txt}, the width of the queries and keys: it is the spread of their dot "
        "products, sqrt(d_k), that the scale undoes. {fix}Divide by np.sqrt(K.shape[-1])."),
    ("weights_transposed", "qk_circuit"): (
        "{Your} circuit is the transpose of W_QK: the score of query token i on key token j is "
        "s_ij = x_i W_Q (x_j W_K)^T = x_i (W_Q W_K^T) x_j^T, so W_QK = W_Q @ W_K.T. Its rows "
        "belong to the query's features, its columns to the key's; W_K @ W_Q.T swaps who asks "
        "and who answers."),
    ("weights_transposed", "ov_circuit"): (
        "{Your} circuit is the transpose of W_OV: a token x that is attended to writes "
        "x W_V W_O into the output, so W_OV = W_V @ W_O, with rows indexed by the attended "
        "token's features and columns by the output's. Its transpose maps the wrong way round."),
}


def fields(numbers: dict) -> dict:
    """The phrases the templates above quote, each empty where its number is unknown."""
    dk, d_model = numbers.get("d_k"), numbers.get("d_model")
    T, d, n_heads = numbers.get("T"), numbers.get("d"), numbers.get("n_heads")
    return {
        "sqrt_T": f" = {np.sqrt(T):.3g}" if T else "",
        "d_txt": f" with d = {d}" if d else "",
        "dmodel_num": f" = {d_model}" if d_model else "",
        "head_txt": f" (d_head = {dk}, {n_heads} heads)" if dk and n_heads else "",
        "dk_num": f" = {dk}" if dk else "",
        "sqrt_num": f" = {np.sqrt(dk):.3g}" if dk else "",
        "scale_txt": f" by 1/sqrt(d_k) = 1/{np.sqrt(dk):.3g}" if dk else "",
        "dmodel_txt": f" = 1/{np.sqrt(d_model):.3g}" if d_model else "",
        "sqrt_txt": f" = 1/{np.sqrt(dk):.3g}" if dk else "",
    }
