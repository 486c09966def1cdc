"""previous_token_head(n_vocab, T) -> (W_Q, W_K, W_V): position i attends to i - 1.

Graded (CONTRACTS.md) by running problem set 2's causal attention on the head: that runs
only in the grader, with the reference's own ``scaled_dot_product_attention`` and
``causal_mask`` (hidden checks). This module ships to students, so it computes no
attention: the visible check reads the head's scores instead.

The visible check's condition. Row i (i >= 1) sees keys 0..i. Call its scores, scaled by
1/sqrt(d_k) = 1/sqrt(T), s_j, and the margins of the previous position m_j = s_(i-1) - s_j
(j != i - 1). Since softmax weights are proportional to e^(s_j), the weight on i - 1 is
exactly 1 / (1 + sum_j e^(-m_j)), so

    weight on i - 1 >= 0.99   <=>   sum_j e^(-m_j) <= 1/99.

When every margin is the same m (keys that say only their position, queries that ask only
for i - 1) this is e^m >= 99 i: a margin of ln(99 i), at most ln(99 (T - 1)) on the last
row. An output row is then off by at most (1 - weight) plus how far the values are from
the one-hot tokens, so the visible check asks that sum to be within 0.01.
"""
import numpy as np

from autograder.checks import Call, Fail, Spec, Verdict, as_array, failed, parts, provided, returned
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import PREVIOUS_TOKEN_VOCAB, PREVIOUS_TOKENS

F = "previous_token_head"
BAR_WEIGHT, BAR_OUTPUT = 0.99, 0.01  # CONTRACTS.md
AIM = 0.999  # what the notebook's derivation aims for: then the output is within 0.001


def _tokens_X(tokens, n_vocab, T):
    """The contract's token vectors: [one_hot(token, n_vocab) | one_hot(position, T)]."""
    return np.concatenate([np.eye(n_vocab)[np.asarray(tokens)], np.eye(T)], axis=1)  # (T, n_vocab + T)


def _matrices(outcome, n_vocab, T):
    W_Q, W_K, W_V = (as_array(w, F, name) for w, name in
                     zip(parts(returned(outcome, F), 3, F, "W_Q, W_K, W_V"), ("W_Q", "W_K", "W_V"), strict=True))
    d = n_vocab + T
    want = {"W_Q": (d, T), "W_K": (d, T), "W_V": (d, n_vocab)}
    for name, W in zip(want, (W_Q, W_K, W_V), strict=True):
        if W.shape != want[name]:
            raise Fail(f"with n_vocab = {n_vocab} and T = {T} (so d = {d}), {name} should have shape "
                       f"{want[name]}; yours has {W.shape}.")
    return W_Q, W_K, W_V


def _looks_ahead(scaled):
    """Before the mask, every row i < T - 1 has its largest score on position i + 1: a head
    that asks for the next token (which the causal mask then hides)."""
    T = len(scaled)
    return T > 2 and all(np.isfinite(scaled[i]).all() and (scaled[i, i + 1] > np.delete(scaled[i], i + 1)).all()
                         for i in range(1, T - 1))


def _weights_fail(T, position, on_prev, on_self, prev_is_largest, heatmap=None, ahead=False):
    """The words for a row whose weight on the previous position is under the bar. A mistake
    is named by what the head does: most of the row on itself, the row's largest score on
    i - 1 but too little weight (not sharp), or, before the mask, every largest score on i + 1."""
    text = (f"position {position} puts weight {on_prev:.3f} on position {position - 1} "
            f"(needs at least {BAR_WEIGHT}) and {on_self:.3f} on itself.")
    mistake = ("attends_to_self" if on_self >= 0.5 else "head_not_sharp" if prev_is_largest
               else "attends_to_next" if ahead else None)
    if mistake == "head_not_sharp":
        text += (f" Position {position} has {position} other position{'s' if position > 1 else ''} to outweigh: "
                 f"aim for a weight of {AIM}, e^(gain / sqrt(T)) >= {round(1 / (1 - AIM) - 1)} (T - 1).")
    raise failed(text, mistake, numbers={"T": T}, heatmap=heatmap)


def _output_fail(position, error, leak, values_off, heatmap=None):
    """The words for an output row off by more than the bar, once the weights are over theirs."""
    if leak >= values_off:
        raise Fail(f"every position puts at least {BAR_WEIGHT} of its weight on the previous one, but only just: "
                   f"position {position} keeps {leak:.4f} for other positions, so its output row is off by "
                   f"{error:.5f} (allowed {BAR_OUTPUT}). You are at the edge: raise the gain (aim for a weight "
                   f"of {AIM} on the previous position, and the output is within {1 - AIM:.3g}).",
                   None, heatmap)
    raise Fail(f"the output rows should copy the previous token's one-hot vector (within {BAR_OUTPUT}); yours "
               f"are off by {error:.3g}. Values should carry the token, not the position: x_j W_V should be "
               f"one_hot(token_j), and yours is off by up to {values_off:.3g}.", None, heatmap)


def _by_margins(n_vocab, T, tokens):
    """A visible judge: the contract's bars read off the head's scores, with no softmax."""
    def judge(outcomes, ref):
        W_Q, W_K, W_V = _matrices(outcomes[0], n_vocab, T)
        X = _tokens_X(tokens, n_vocab, T)
        scaled = (X @ W_Q) @ (X @ W_K).T / np.sqrt(T)  # (T, T): s_ij, d_k = T
        values_off = float(np.abs(X @ W_V - np.eye(n_vocab)[list(tokens)]).max())
        rows = []  # (position i, weight on i - 1, weight on i itself, i - 1 has the largest score)
        for i in range(1, T):
            margins = scaled[i, i - 1] - np.delete(scaled[i, : i + 1], i - 1)  # i margins, itself last
            log_tail = float(np.logaddexp.reduce(-margins))  # log of sum_j e^(-m_j)
            on_prev = 1.0 / (1.0 + np.exp(log_tail))
            rows.append((i, on_prev, on_prev * float(np.exp(-margins[-1])), bool((margins > 0).all())))
        if rows:
            on_prev = np.array([r[1] for r in rows])
            if not (on_prev >= BAR_WEIGHT).all():  # nan fails too
                _weights_fail(T, *rows[int(np.argmin(np.where(np.isnan(on_prev), -np.inf, on_prev)))],
                              ahead=_looks_ahead(scaled))
            # An output row is off by at most its leak plus values_off; ask that with a hair to
            # spare, so that a head exactly at the bar hears that it is at the edge.
            worst = int(np.argmin(on_prev))
            leak = 1.0 - float(on_prev[worst])
            if not leak + values_off <= BAR_OUTPUT - 1e-9:
                _output_fail(worst + 1, leak + values_off, leak, values_off)
        return Verdict(True, f"every position attends to the previous one (n_vocab = {n_vocab}, T = {T}).")
    return judge


def _by_running(n_vocab, T, sequences):
    """A hidden judge: runs the head as the contract says, with the reference's attention."""
    def judge(outcomes, ref):
        W_Q, W_K, W_V = _matrices(outcomes[0], n_vocab, T)
        attend = ref.solution("scaled_dot_product_attention")
        mask = ref.solution("causal_mask")(T)
        weights = None
        for tokens in sequences:
            X = _tokens_X(tokens, n_vocab, T)
            out, weights = attend(X @ W_Q, X @ W_K, X @ W_V, mask=mask)
            if T < 2:
                continue
            picture = (np.eye(T, k=-1), weights)
            prev = np.diag(weights, k=-1)  # weight of position i on i - 1, for i >= 1
            if not (prev >= BAR_WEIGHT).all():
                worst = int(np.nanargmin(prev)) + 1 if np.isfinite(prev).any() else 1
                row = weights[worst, : worst + 1]
                _weights_fail(T, worst, prev[worst - 1], weights[worst, worst],
                              bool(np.isfinite(row).all() and row.argmax() == worst - 1
                                   and (row[worst - 1] > np.delete(row, worst - 1)).all()), picture,
                              _looks_ahead((X @ W_Q) @ (X @ W_K).T))
            err = np.abs(out[1:] - np.eye(n_vocab)[tokens[:-1]]).max(axis=-1)
            if not (err <= BAR_OUTPUT).all():
                worst = int(np.nanargmax(np.where(np.isnan(err), np.inf, err))) + 1
                values_off = float(np.abs(X @ W_V - np.eye(n_vocab)[tokens]).max())
                _output_fail(worst, float(err[worst - 1]), 1.0 - float(prev[worst - 1]), values_off, picture)
        return Verdict(True, f"every position attends to the previous one (n_vocab = {n_vocab}, T = {T}).",
                       heatmap=(np.eye(T, k=-1), weights) if T > 1 else None)
    return judge


def checks(rng):
    n_vis, vis_tokens = PREVIOUS_TOKEN_VOCAB, np.array(PREVIOUS_TOKENS)
    T_vis = len(vis_tokens)
    c_vis = Call(F, (n_vis, T_vis))
    n_vocab, T = int(rng.integers(3, 12)), int(rng.integers(8, 20))
    c_rand, c_long, c_one = Call(F, (n_vocab, T)), Call(F, (5, 64)), Call(F, (3, 1))
    return [
        Spec("n_vocab = 4, T = 6", 1, visible=True).bind((c_vis,), _by_margins(n_vis, T_vis, tuple(PREVIOUS_TOKENS))),
        Spec("random sequences", 2).bind(
            (c_rand,), _by_running(n_vocab, T, [rng.integers(0, n_vocab, T) for _ in range(3)])),
        Spec("a long sequence (T = 64)", 1).bind((c_long,), _by_running(5, 64, [rng.integers(0, 5, 64)])),
        # With one position nothing is graded but shapes: the check counts only with the head
        # right on a longer sequence too.
        Spec("a single position (T = 1)", 1).bind((c_one, c_vis), provided(
            _by_running(3, 1, [np.array([2])]), _by_running(n_vis, T_vis, [vis_tokens]),
            f"at T = 1 only the shapes can be checked; this check counts once the head is right "
            f"for T = {T_vis} too, and it is not:")),
    ]


DOMAIN = (
    Boundary("n_vocab", "a positive int: 3 to 11, and 5", ("n_vocab = 4, T = 6", "random sequences")),
    Boundary("T", "a positive int: 1 (nothing to attend to but itself), 6 to 19, and a long 64",
             ("a single position (T = 1)", "random sequences", "a long sequence (T = 64)")),
)

def _T(call):
    """T, for explanations: the scores are divided by sqrt(T)."""
    return {"T": int(call.args[1])}


EXERCISE = Exercise(F, "ps3", build=checks, numbers=_T, domain=DOMAIN)
