"""What a student reads for the mistakes issue 10 names, before and after the deadline."""
from __future__ import annotations

import numpy as np
import pytest

from autograder import selfcheck
from autograder.assignments import exercise
from autograder.checks import run_judge
from autograder.reference import Answers, load
from autograder.sandbox import call_one
from autograder.sandbox.frames import through_wire
from attention_course.worked_inputs import GAIN_EXAMPLE, PREVIOUS_TOKEN_VOCAB, PREVIOUS_TOKENS

F = "previous_token_head"


def verdicts(name: str, func, seed: int = 3) -> dict[str, tuple[bool, str, str | None]]:
    """Every check of exercise ``name`` on ``func``: visible ones without the reference, as a
    notebook runs them; hidden ones with it, as the grader does."""
    ref = Answers(load())
    out = {}
    for check in exercise(name).checks(np.random.default_rng(seed)):
        outcomes = through_wire([call_one(func, c.args, c.kwargs) for c in check.calls])
        v = run_judge(check, outcomes, None if check.visible else ref)
        out[check.title] = (v.passed, v.message, v.misconception)
    return out


def head(gain, values="token", shift=1):
    """A previous-token head (keys say their position, queries ask for i - shift, each with
    ``gain(T)``) whose values carry the token, or the position."""
    def previous_token_head(n_vocab, T):
        d = n_vocab + T
        W_Q, W_K, W_V = np.zeros((d, T)), np.zeros((d, T)), np.zeros((d, n_vocab))
        if T > shift:
            W_Q[n_vocab + shift:, : T - shift] = gain(T) * np.eye(T - shift)
        W_K[n_vocab:, :] = np.eye(T)
        if values == "token":
            W_V[:n_vocab] = np.eye(n_vocab)
        else:
            k = min(T, n_vocab)
            W_V[n_vocab:n_vocab + k, :k] = np.eye(k)
        return W_Q, W_K, W_V
    return previous_token_head


AT_THE_BAR = head(lambda T: np.sqrt(T) * np.log(99 * max(T - 1, 1)))  # weight exactly 0.99 on the last row
AS_DERIVED = head(lambda T: np.sqrt(T) * np.log(999 * max(T - 1, 1)))  # the notebook's 0.999


def test_a_head_exactly_at_the_bar_is_told_to_raise_the_gain_not_to_fix_its_values():
    for title, (passed, message, _) in verdicts(F, AT_THE_BAR).items():
        if passed:
            continue
        assert "raise the gain" in message and "Values should carry" not in message, (title, message)
    visible = [v for t, v in verdicts(F, AT_THE_BAR).items() if t == "n_vocab = 4, T = 6"][0]
    assert not visible[0] and "at the edge" in visible[1]


def test_the_gain_the_notebook_derives_passes_every_check():
    assert all(passed for passed, _, _ in verdicts(F, AS_DERIVED).values())
    assert GAIN_EXAMPLE["target"] == 0.999


@pytest.mark.parametrize("gain", [0.5, 2.0, 4.0])
def test_a_head_that_points_right_is_told_it_is_not_sharp_enough_however_blurred(gain):
    results = verdicts(F, head(lambda T: gain))
    failed = {t: m for t, (ok, m, _) in results.items() if not ok}
    assert failed and all("not sharp enough: raise the gain" in m for m in failed.values()), failed


def test_values_that_carry_the_position_are_named():
    failed = {t: m for t, (ok, m, _) in verdicts(F, head(lambda T: 12 * np.sqrt(T), values="position")).items()
              if not ok}
    assert failed and all("Values should carry the token" in m for m in failed.values())


def test_attending_to_itself_is_named_in_the_same_words_before_and_after_the_deadline():
    results = verdicts(F, head(lambda T: 12 * np.sqrt(T), shift=0))
    assert {m for ok, _, m in results.values() if not ok} == {"attends_to_self"}
    visible, hidden = results["n_vocab = 4, T = 6"][1], results["a single position (T = 1)"][1]
    assert visible.splitlines()[0] == hidden.splitlines()[0]  # the same words, then the guard's preamble
    assert hidden.splitlines()[1].startswith("at T = 1 only the shapes can be checked")


def _weight_on_previous(W_Q, W_K, n_vocab, tokens):
    """Each position's weight on the one before, running the head with the reference's attention."""
    ref = load()
    T = len(tokens)
    X = np.concatenate([np.eye(n_vocab)[list(tokens)], np.eye(T)], axis=1)
    values = X @ np.zeros((n_vocab + T, n_vocab))  # the weights do not depend on them
    _, weights = ref.solution("scaled_dot_product_attention")(X @ W_Q, X @ W_K, values,
                                                               mask=ref.solution("causal_mask")(T))
    return np.diag(weights, k=-1)


def test_the_margin_check_reads_the_same_weights_as_running_the_head():
    # Random heads (not only the designed ones): the visible check works the weight on i - 1
    # out of the score margins, 1 / (1 + sum e^-m); running the head gives the same numbers.
    rng = np.random.default_rng(0)
    n_vocab, tokens = PREVIOUS_TOKEN_VOCAB, PREVIOUS_TOKENS
    T = len(tokens)
    check = next(c for c in exercise(F).checks(np.random.default_rng(0)) if c.visible)
    for trial in range(200):
        d = n_vocab + T
        W_Q, W_K = rng.standard_normal((d, T)) * rng.uniform(0, 20), rng.standard_normal((d, T))
        W_V = np.vstack([np.eye(n_vocab), np.zeros((T, n_vocab))])
        prev = _weight_on_previous(W_Q, W_K, n_vocab, tokens)
        outcomes = through_wire([call_one(lambda n, t, W=(W_Q, W_K, W_V): W, (n_vocab, T), {})])
        verdict = run_judge(check, list(outcomes), None)
        if np.all(prev >= 0.99 + 1e-9):
            # the weights pass; the output bar then holds by at most 1 - min(prev) from the weights
            assert verdict.passed == bool(1 - prev.min() <= 0.01 - 1e-9), (trial, prev, verdict.message)
        elif np.any(prev < 0.99 - 1e-9):
            worst = int(np.argmin(prev)) + 1
            assert not verdict.passed
            # after the explanation of the mistake the head's behaviour names, if any
            assert f"position {worst} puts weight {prev[worst - 1]:.3f}" in verdict.message, (trial, prev,
                                                                                              verdict.message)


def test_numpy_integers_in_the_shapes_get_their_own_hint():
    def attention_shapes(B, T_q, T_k, d, d_k, d_v):
        i = np.int64
        return {"X_q": (i(B), i(T_q), i(d)), "X_kv": (i(B), i(T_k), i(d)), "W_Q": (i(d), i(d_k)),
                "W_K": (i(d), i(d_k)), "W_V": (i(d), i(d_v)), "Q": (i(B), i(T_q), i(d_k)), "K": (i(B), i(T_k), i(d_k)),
                "V": (i(B), i(T_k), i(d_v)), "S": (i(B), i(T_q), i(T_k)), "A": (i(B), i(T_q), i(T_k)),
                "O": (i(B), i(T_q), i(d_v))}

    # The checks of shapes, not the one that wants a ValueError (which this answer never raises).
    rows = [row for row in selfcheck.run_visible("attention_shapes", attention_shapes)
            if not row[0].startswith("rejects")]
    assert rows and all(not ok for _, ok, _, _ in rows)
    assert all("numpy integers" in message and "int(...)" in message for _, _, message, _ in rows)


def test_a_tuple_of_floats_is_not_called_numpy_integers():
    def attention_shapes(B, T_q, T_k, d, d_k, d_v):
        f = float
        shapes = {"X_q": (B, T_q, d), "X_kv": (B, T_k, d), "W_Q": (d, d_k), "W_K": (d, d_k), "W_V": (d, d_v),
                  "Q": (B, T_q, d_k), "K": (B, T_k, d_k), "V": (B, T_k, d_v), "S": (B, T_q, T_k),
                  "A": (B, T_q, T_k), "O": (B, T_q, d_v)}
        return {k: tuple(f(n) for n in v) for k, v in shapes.items()}

    rows = selfcheck.run_visible("attention_shapes", attention_shapes)
    assert all(not ok and "numpy integers" not in message for _, ok, message, _ in rows)
