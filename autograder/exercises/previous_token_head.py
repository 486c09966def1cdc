"""previous_token_head(n_vocab, T) -> (W_Q, W_K, W_V): position i attends to i - 1."""
import numpy as np

from ..checks import Call, Spec, Fail, Verdict, as_array, parts, provided, returned
from ..exercise import Exercise

F = "previous_token_head"
BAR_WEIGHT, BAR_OUTPUT = 0.99, 0.01  # CONTRACTS.md


def _run_head(W_Q, W_K, W_V, tokens, n_vocab, T):
    """The contract's grading rule: causal attention, default scale 1/sqrt(T)."""
    X = np.concatenate([np.eye(n_vocab)[tokens], np.eye(T)], axis=1)  # (T, n_vocab + T)
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1]) + np.triu(np.full((T, T), -np.inf), k=1)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    weights = e / e.sum(-1, keepdims=True)  # (T, T)
    return weights, weights @ (X @ W_V)


def _meets_bar(n_vocab, T, sequences):
    def judge(outcomes, ref):
        W_Q, W_K, W_V = (as_array(w, F, name) for w, name in
                         zip(parts(returned(outcomes[0], F), 3, F, "W_Q, W_K, W_V"), ("W_Q", "W_K", "W_V")))
        d = n_vocab + T
        want = {"W_Q": (d, T), "W_K": (d, T), "W_V": (d, n_vocab)}
        for name, W in zip(want, (W_Q, W_K, W_V)):
            if W.shape != want[name]:
                raise Fail(f"with n_vocab = {n_vocab} and T = {T} (so d = {d}), {name} should have shape "
                           f"{want[name]}; yours has {W.shape}.")
        for tokens in sequences:
            with np.errstate(all="ignore"):
                weights, out = _run_head(W_Q, W_K, W_V, tokens, n_vocab, T)
            if T < 2:
                continue
            prev = np.diag(weights, k=-1)  # weight of position i on i - 1, for i >= 1
            worst = int(np.nanargmin(prev)) if np.isfinite(prev).any() else 0
            if not (prev >= BAR_WEIGHT).all():
                on_self = weights[worst + 1, worst + 1]
                mistake = "attends_to_self" if on_self >= 0.5 else None
                text = (f"position {worst + 1} puts weight {prev[worst]:.3f} on position {worst} "
                        f"(needs at least {BAR_WEIGHT}) and {on_self:.3f} on itself.")
                if mistake:
                    from ..misconceptions import explain
                    text = explain(mistake) + "\n" + text
                elif prev[worst] > 0.3:
                    text += (" The head points the right way but is not sharp enough: scale up the "
                             "query weights (the scores are divided by sqrt(T)).")
                raise Fail(text, mistake, heatmap=(np.eye(T, k=-1), weights))
            target = np.eye(n_vocab)[tokens[:-1]]
            err = np.abs(out[1:] - target).max()
            if not err <= BAR_OUTPUT:
                raise Fail(f"the output rows should copy the previous token's one-hot vector (within "
                           f"{BAR_OUTPUT}); yours are off by {err:.3g}. Values should carry the token, "
                           "not the position.")
        return Verdict(True, f"every position attends to the previous one (n_vocab = {n_vocab}, T = {T}).",
                       heatmap=(np.eye(T, k=-1), weights) if T > 1 else None)
    return judge


N_VOCAB_4 = Spec("n_vocab = 4, T = 6", 1, visible=True)
RANDOM_SEQUENCES = Spec("random sequences", 2)
LONG_SEQUENCE_T = Spec("a long sequence (T = 64)", 1)
SINGLE_POSITION_T = Spec("a single position (T = 1)", 1)


def checks(rng):
    c_vis = Call(F, (4, 6))
    vis_tokens = [np.array([0, 3, 1, 1, 2, 0])]
    n_vocab, T = int(rng.integers(3, 12)), int(rng.integers(8, 20))
    c_rand, c_long, c_one = Call(F, (n_vocab, T)), Call(F, (5, 64)), Call(F, (3, 1))
    return [
        N_VOCAB_4.bind((c_vis,), _meets_bar(4, 6, vis_tokens)),
        RANDOM_SEQUENCES.bind((c_rand,), _meets_bar(n_vocab, T, [rng.integers(0, n_vocab, T) for _ in range(3)])),
        LONG_SEQUENCE_T.bind((c_long,), _meets_bar(5, 64, [rng.integers(0, 5, 64)])),
        # With one position nothing is graded but shapes: the check counts only with the head
        # right on a longer sequence too.
        SINGLE_POSITION_T.bind((c_one, c_vis), provided(_meets_bar(3, 1, [np.array([2])]), _meets_bar(4, 6, vis_tokens),
                       "at T = 1 only the shapes can be checked; this check counts once the head is right "
                       "for T = 6 too, and it is not:")),
    ]


EXERCISE = Exercise(F, "ps3", build=checks, specs=(
    N_VOCAB_4, RANDOM_SEQUENCES, LONG_SEQUENCE_T, SINGLE_POSITION_T))
