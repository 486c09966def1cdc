"""ps4's checks against answers built to slip through: a cache that peeks one position ahead,
a rope that keeps the relative property with the wrong layout, an induction head keyed on the
token, and right answers built another way, which must pass. Judged in-process on outcomes
shaped like the sandbox's; the corpus (test_grading_corpus.py) grades the catalogue's
mistakes end to end in the sandbox."""
from __future__ import annotations

import numpy as np
import pytest

from attention_course import worked_inputs as W
from autograder.assignments import exercise
from autograder.checks import run_judge
from autograder.sandbox.frames import CallOutcome
from autograder.grade import plan
from autograder.reference import Answers, load
from solutions import ps1, ps3, ps4

STUDENT = "ps4-attacks"


@pytest.fixture(scope="module")
def ref():
    return Answers(load())


@pytest.fixture(scope="module")
def checks():
    return plan("ps4", STUDENT)


def outcome(fn, call):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in call.args]
    try:
        with np.errstate(all="ignore"):
            value = fn(*args, **call.kwargs)
    except Exception as e:  # noqa: BLE001 - a raised error is an outcome, as the sandbox reports it
        return CallOutcome.raised(type(e).__name__, f"{type(e).__name__}: {e}")
    return CallOutcome.returned(value, 0.0, tuple(a for a in args if isinstance(a, np.ndarray)) if call.echo else None)


def judged(checks, ref, name, fn) -> dict[str, tuple[bool, str | None]]:
    """Check title -> (passed, misconception) for ``fn`` as exercise ``name``."""
    verdicts = {}
    for check in checks[name]:
        v = run_judge(check, [outcome(fn, c) for c in check.calls], None if check.visible else ref)
        verdicts[check.title] = (v.passed, v.misconception)
    return verdicts


def score(checks, verdicts, name):
    return sum(c.points for c in checks[name] if verdicts[c.title][0])


@pytest.mark.parametrize("name", ["attend_step", "decode_with_cache", "sinusoidal_positions", "rope",
                                  "key_bias_effect", "induction_heads"])
def test_the_reference_earns_every_point(checks, ref, name):
    verdicts = judged(checks, ref, name, getattr(ps4, name))
    assert score(checks, verdicts, name) == exercise(name).points, verdicts


# ---------------------------------------------------------------- the cache


def peeking_cache(X, W_Q, W_K, W_V):
    """Attends to keys 0..t+1: one position of the future."""
    K, V = X @ W_K, X @ W_V
    return np.stack([ps4.attend_step(X[t] @ W_Q, K[: t + 2], V[: t + 2])[0] for t in range(X.shape[0])])


def test_a_cache_that_peeks_one_position_ahead_fails_the_visible_check_by_name(checks, ref):
    verdicts = judged(checks, ref, "decode_with_cache", peeking_cache)
    assert verdicts["a later token changes no earlier row"] == (False, "cache_sees_future")
    assert verdicts["huge future tokens"][0] is False


def test_causal_attention_in_one_go_is_a_right_answer(checks, ref):
    def whole(X, W_Q, W_K, W_V):
        T = X.shape[0]
        scores = np.where(np.tril(np.ones((T, T))) > 0, (X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1]), -np.inf)
        return ps1.softmax(scores) @ (X @ W_V)
    verdicts = judged(checks, ref, "decode_with_cache", whole)
    assert score(checks, verdicts, "decode_with_cache") == exercise("decode_with_cache").points, verdicts


# ---------------------------------------------------------------- positions


def rope_halves(X, base=10000.0):
    """The GPT-NeoX layout: x[i] pairs with x[i + d/2]; the relative property still holds."""
    T, d = X.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    angles = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)
    a, b = X[..., : d // 2], X[..., d // 2:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), a * np.sin(angles) + b * np.cos(angles)], -1)


def test_rope_on_halves_keeps_the_property_and_is_named_on_the_values(checks, ref):
    verdicts = judged(checks, ref, "rope", rope_halves)
    assert verdicts["scores depend only on m - n"] == (True, None)
    assert verdicts["three copies of (1, 0, 1, 0)"] == (False, "pairs_as_halves")
    assert verdicts["matches the reference on a batch"] == (False, "pairs_as_halves")


@pytest.mark.parametrize("fake", [lambda X, base=10000.0: X.copy(), lambda X, base=10000.0: np.zeros_like(X),
                                  lambda X, base=10000.0: np.ones_like(X)], ids=["identity", "zeros", "ones"])
def test_no_rotation_fails_the_relative_property(checks, ref, fake):
    assert judged(checks, ref, "rope", fake)["scores depend only on m - n"][0] is False


def test_bias_added_after_rotating_is_named(checks, ref):
    def after(Q, K, b_K, base=10000.0):
        weights = lambda Q, K: ps1.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))  # noqa: E731
        RQ, RK = ps4.rope(Q, base), ps4.rope(K, base)
        return (float(np.abs(weights(Q, K + b_K) - weights(Q, K)).max()),
                float(np.abs(weights(RQ, RK + b_K) - weights(RQ, RK)).max()))
    verdicts = judged(checks, ref, "key_bias_effect", after)
    assert verdicts["three queries and keys of width 4"] == (False, "bias_after_rope")
    assert verdicts["matches the reference on a batch"] == (False, "bias_after_rope")


@pytest.mark.parametrize("fake", [(0.0, 0.0), (0.0, 1.0), (np.float64(0.0), np.nan)], ids=str)
def test_made_up_bias_effects_earn_nothing(checks, ref, fake):
    verdicts = judged(checks, ref, "key_bias_effect", lambda Q, K, b_K, base=10000.0: fake)
    assert score(checks, verdicts, "key_bias_effect") == 0


# ---------------------------------------------------------------- the induction head


def keyed_on_token(n_vocab, T):
    Ws = list(ps4.induction_heads(n_vocab, T))
    Ws[4] = np.zeros_like(Ws[4])
    Ws[4][:n_vocab] = np.eye(n_vocab)
    return tuple(Ws)


def test_an_induction_head_keyed_on_the_token_is_named_in_every_check(checks, ref):
    verdicts = judged(checks, ref, "induction_heads", keyed_on_token)
    assert set(verdicts.values()) == {(False, "induction_keyed_on_token")}


def test_a_self_attending_layer_1_fails_the_visible_check(checks, ref):
    def self_attending(n_vocab, T):
        Ws = list(ps4.induction_heads(n_vocab, T))
        Ws[0] = np.zeros_like(Ws[0])
        Ws[0][n_vocab: n_vocab + T] = 50.0 * np.eye(T)  # position i asks for i: itself
        return tuple(Ws)
    verdicts = judged(checks, ref, "induction_heads", self_attending)
    assert score(checks, verdicts, "induction_heads") == 0


def test_another_right_construction_passes_every_check(checks, ref):
    # Layer 1 scaled up, layer 2's values doubled and its gain larger: the predictions are the same.
    def other(n_vocab, T):
        W_Q1, W_K1, W_V1 = (np.vstack([w, np.zeros((n_vocab, w.shape[1]))])
                            for w in ps3.previous_token_head(n_vocab, T))
        W_Q2, W_K2, W_V2 = (np.zeros((2 * n_vocab + T, n_vocab)) for _ in range(3))
        W_Q2[:n_vocab] = 40.0 * np.sqrt(n_vocab) * np.eye(n_vocab)
        W_K2[n_vocab + T:] = np.eye(n_vocab)
        W_V2[:n_vocab] = 2.0 * np.eye(n_vocab)
        return 3.0 * W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2
    verdicts = judged(checks, ref, "induction_heads", other)
    assert score(checks, verdicts, "induction_heads") == exercise("induction_heads").points, verdicts


def test_the_visible_checks_use_the_worked_inputs():
    visible = {name: [c.args for check in exercise(name).checks(np.random.default_rng(0)) if check.visible
                      for c in check.calls] for name in ("attend_step", "sinusoidal_positions", "induction_heads")}
    assert (W.STEP_QUERY, W.STEP_K_CACHE, W.STEP_V_CACHE) in visible["attend_step"]
    assert (W.POSITIONS_T, W.POSITIONS_D) in visible["sinusoidal_positions"]
    assert visible["induction_heads"] == [(W.INDUCTION_VOCAB, len(W.INDUCTION_TOKENS))]


def test_the_quoted_worked_numbers_are_the_references():
    np.testing.assert_allclose(ps4.sinusoidal_positions(W.POSITIONS_T, W.POSITIONS_D)[1], W.POSITION_1, atol=5e-4)
    np.testing.assert_allclose(ps4.rope(W.ROPE_X)[1], W.ROPE_ROW_1, atol=5e-4)


def test_the_class_summary_lines_up_ps4s_longest_mistake():
    from autograder.class_results import BatchSummary
    from autograder.report.dashboard import summary_text

    mistakes = {"induction_keyed_on_token": ["ada"], "angles_from_one": ["ben", "cy"]}
    text = summary_text(BatchSummary("ps4", 3, 30.0, 40, {}, mistakes))
    rows = text.splitlines()[-2:]
    assert [row.index("student") for row in rows] == [rows[0].index("student")] * 2
    assert rows[0].startswith("  induction_keyed_on_token ")
