"""induction_heads(n_vocab, T) -> (W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2): a previous-token head
whose output layer 2 reads to complete a repeated sequence.

Graded (the issue's contract) by running the two layers with the reference's causal attention:
that runs only in the grader (hidden checks). This module ships to students, so it computes no
attention: the visible check reads the layers' scores, as problem set 3's does, and lower-
bounds each graded row's weight on its target from the margins of its scores.

A row's weight on its target is exactly 1 / (1 + sum_j e^(-m_j)) with m_j the target's
scaled score minus key j's. Its prediction (the argmax of its output) is then right whenever
w * gap > (1 - w) * spread, gap being how far the target's value puts the right token above
any other, spread how far any other visible value puts a wrong token above the right one.
"""
import numpy as np

from autograder.checks import Call, Fail, Spec, Verdict, as_array, failed, parts, returned
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import INDUCTION_TOKENS, INDUCTION_VOCAB

F = "induction_heads"
SHARE = 0.95  # of the graded positions whose prediction must be right (the contract)
NAMES = ("W_Q1", "W_K1", "W_V1", "W_Q2", "W_K2", "W_V2")


def repeated_sequence(rng, n_vocab, T):
    """The contract's sequences: a prefix of T/2 distinct tokens, repeated once."""
    prefix = rng.permutation(n_vocab)[: T // 2]
    return np.concatenate([prefix, prefix])


def graded_positions(T):
    """T/2 + 1 .. T - 2: position T/2 is ambiguous (position 0 has no predecessor), T - 1 has no next token."""
    return np.arange(T // 2 + 1, T - 1)


def stream(tokens, n_vocab, T):
    """The residual stream on input: [onehot(token) | onehot(t) | prev = 0]."""
    return np.concatenate([np.eye(n_vocab)[np.asarray(tokens)], np.eye(T), np.zeros((T, n_vocab))], axis=1)


def _matrices(outcome, n_vocab, T):
    Ws = [as_array(w, F, name) for w, name in zip(parts(returned(outcome, F), 6, F, ", ".join(NAMES)), NAMES,
                                                  strict=True)]
    d = 2 * n_vocab + T
    want = dict(zip(NAMES, [(d, T), (d, T), (d, n_vocab), (d, n_vocab), (d, n_vocab), (d, n_vocab)], strict=True))
    for name, W in zip(NAMES, Ws, strict=True):
        if W.shape != want[name]:
            raise Fail(f"with n_vocab = {n_vocab} and T = {T} (so d = 2 n_vocab + T = {d}), {name} should have "
                       f"shape {want[name]}; yours has {W.shape}.")
        if not np.isfinite(W).all():
            raise Fail(f"{name} holds nan or inf.")
    return Ws


def _keyed_on_token(W_K2, n_vocab, T):
    """Layer 2's keys read the token slot and not prev: the catalogued mistake."""
    token_part, prev_part = np.abs(W_K2[:n_vocab]).sum(), np.abs(W_K2[n_vocab + T:]).sum()
    return token_part > 0 and prev_part == 0


def _values_read_prev(W_V2, n_vocab, T):
    """Layer 2's values read prev and not the token slot: the catalogued mistake."""
    token_part, prev_part = np.abs(W_V2[:n_vocab]).sum(), np.abs(W_V2[n_vocab + T:]).sum()
    return prev_part > 0 and token_part == 0


def _layer2_mistake(W_K2, W_V2, n_vocab, T):
    """The catalogued mistake layer 2's matrices show, where exactly one does."""
    found = [m for m, shown in (("induction_keyed_on_token", _keyed_on_token(W_K2, n_vocab, T)),
                                ("induction_values_read_prev", _values_read_prev(W_V2, n_vocab, T))) if shown]
    return found[0] if len(found) == 1 else None


def _wrong(n_vocab, T, W_K2, W_V2, tokens, predictions, heatmap=None):
    ts = graded_positions(T)
    right = predictions[ts] == np.asarray(tokens)[ts + 1]
    t = int(ts[~right][0])
    text = (f"on the sequence {list(map(int, tokens))}, your model predicts the next token right at "
            f"{int(right.sum())} of the {len(ts)} graded positions {int(ts[0])}..{int(ts[-1])} (needs "
            f"{SHARE:.0%}); at position {t} (token {int(tokens[t])}) it predicts {int(predictions[t])}, and the "
            f"next token is {int(tokens[t + 1])}.")
    mistake = _layer2_mistake(W_K2, W_V2, n_vocab, T)
    raise failed(text, mistake, heatmap=heatmap)


def _by_margins(n_vocab, tokens):
    """A visible judge: the contract's bar read off both layers' scores, with no softmax."""
    tokens = np.asarray(tokens)
    T = len(tokens)

    def weight_on(scaled_row, target):
        margins = scaled_row[target] - np.delete(scaled_row, target)
        return 1.0 / (1.0 + np.exp(float(np.logaddexp.reduce(-margins)))) if margins.size else 1.0

    def judge(outcomes, ref):
        W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2 = _matrices(outcomes[0], n_vocab, T)
        X = stream(tokens, n_vocab, T)
        # Layer 1: every position i >= 1 must put (nearly) all its weight on i - 1 and copy its token.
        S1 = (X @ W_Q1) @ (X @ W_K1).T / np.sqrt(W_K1.shape[1])  # (T, T)
        V1 = X @ W_V1  # (T, n_vocab)
        for i in range(1, T):
            w = weight_on(S1[i, : i + 1], i - 1)
            if not w >= 0.99:
                raise Fail(f"layer 1 should be a previous-token head: position {i} puts only {w:.3f} of its weight "
                           f"on position {i - 1} (needs 0.99). Build it from your previous_token_head.")
        if not np.abs(V1 - np.eye(n_vocab)[tokens]).max() <= 0.01:
            raise Fail("layer 1's values should carry each position's token, one_hot(token), into the prev slot.")
        # Layer 2, on the stream as a sharp layer 1 leaves it (prev of position 0: its own token).
        prev = np.eye(n_vocab)[np.concatenate([tokens[:1], tokens[:-1]])]
        X2 = X + np.concatenate([np.zeros((T, n_vocab + T)), prev], axis=1)
        S2 = (X2 @ W_Q2) @ (X2 @ W_K2).T / np.sqrt(W_K2.shape[1])  # (T, T)
        V2 = X2 @ W_V2  # (T, n_vocab)
        for t in graded_positions(T):
            target = int(np.flatnonzero(tokens[: t + 1] == tokens[t])[0]) + 1  # right after the earlier copy
            w = weight_on(S2[t, : t + 1], target)
            right = tokens[t + 1]
            gap = V2[target, right] - np.delete(V2[target], right).max()
            spread = max(0.0, float((V2[: t + 1] - V2[: t + 1, right : right + 1]).max()))
            if not w * gap > (1 - w) * spread:
                mistake = _layer2_mistake(W_K2, W_V2, n_vocab, T)
                # Where the weight is there, what fails is the value: say so, never only the weight.
                failing = (f"it puts only {w:.3f} of its weight there" if not w >= 0.99 else
                           f"it puts {w:.3f} of its weight there, but position {target}'s value does not carry "
                           f"token {right}: it puts token {right} {gap:.3f} above the best other token (needs "
                           f"more than 0)")
                raise failed(f"at position {t} (token {tokens[t]}) layer 2 should attend to position {target}, "
                             f"right after the earlier {tokens[t]}, and copy its token {right}; {failing}.", mistake)
        return Verdict(True, f"both layers point the right way on {list(map(int, tokens))}.")
    return judge


def _run(Ws, tokens, n_vocab, T, attend, mask):
    """Both layers as the contract says: layer 2's output (T, n_vocab) and weights (T, T)."""
    W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2 = Ws
    X = stream(tokens, n_vocab, T)
    out1, _ = attend(X @ W_Q1, X @ W_K1, X @ W_V1, mask=mask, scale=1 / np.sqrt(W_K1.shape[1]))
    X = X + np.concatenate([np.zeros((T, n_vocab + T)), out1], axis=1)  # layer 1 writes into prev
    return attend(X @ W_Q2, X @ W_K2, X @ W_V2, mask=mask, scale=1 / np.sqrt(W_K2.shape[1]))


def _by_running(n_vocab, T, sequences):
    """A hidden judge: runs both layers as the contract says, with the reference's attention."""
    def judge(outcomes, ref):
        Ws = _matrices(outcomes[0], n_vocab, T)
        attend = ref.solution("scaled_dot_product_attention")
        mask = ref.solution("causal_mask")(T)
        ts = graded_positions(T)

        def picture(tokens, weights):  # layer 2's weights beside the reference model's: the stripe
            return _run(ref.solution(F)(n_vocab, T), tokens, n_vocab, T, attend, mask)[1], weights

        for tokens in sequences:
            out2, weights = _run(Ws, tokens, n_vocab, T, attend, mask)
            predictions = np.where(np.isfinite(out2).all(-1), out2.argmax(-1), -1)
            if not (predictions[ts] == tokens[ts + 1]).mean() >= SHARE:
                _wrong(n_vocab, T, Ws[4], Ws[5], tokens, predictions, picture(tokens, weights))
        return Verdict(True, f"the model completes the repeated sequences (n_vocab = {n_vocab}, T = {T}).",
                       heatmap=picture(tokens, weights))
    return judge


def checks(rng):
    c_vis = Call(F, (INDUCTION_VOCAB, len(INDUCTION_TOKENS)))
    T = 2 * int(rng.integers(4, 12))
    n_vocab = int(rng.integers(T // 2 + 1, T + 8))
    c_rand, c_small, c_long = Call(F, (n_vocab, T)), Call(F, (4, 6)), Call(F, (40, 64))
    return [
        Spec("the notebook's repeated sequence", 1, visible=True).bind(
            (c_vis,), _by_margins(INDUCTION_VOCAB, INDUCTION_TOKENS)),
        Spec("random repeated sequences", 2).bind((c_rand,), _by_running(n_vocab, T, [repeated_sequence(rng, n_vocab, T)
                                                                   for _ in range(3)])),
        Spec("the smallest case (T = 6, n_vocab = 4)", 1).bind(
            (c_small,), _by_running(4, 6, [repeated_sequence(rng, 4, 6) for _ in range(2)])),
        Spec("a long sequence (T = 64)", 1).bind((c_long,), _by_running(40, 64, [repeated_sequence(rng, 40, 64)])),
    ]


DOMAIN = (
    Boundary("T", "an even int >= 6: 6, 8 to 22, 64", ("the smallest case (T = 6, n_vocab = 4)",
                                                       "random repeated sequences", "a long sequence (T = 64)")),
    Boundary("n_vocab", "at least T/2 (the prefix's tokens are distinct): 4, T/2 + 1 to T + 7, 40",
             ("the notebook's repeated sequence", "random repeated sequences", "a long sequence (T = 64)")),
)

EXERCISE = Exercise(F, "ps4", build=checks, domain=DOMAIN)
