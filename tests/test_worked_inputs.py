"""The worked examples are written once (attention_course/worked_inputs.py), and every number the
notebooks' prose quotes is what the reference computes on them.

Each notebook's prose (its markdown and the comments of its code cells) is scanned for
decimal numbers; each must be one the tests below recompute from the reference solutions
(rounded as the prose rounds it), one of the worked examples' inputs, or one of the few
settings the prose names (the grader's bars, a scale of 1.0). The tables and the key numbers
are also checked the other way: each must appear in its notebook.
"""
from __future__ import annotations

import inspect
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from autograder import notebooks as build  # the notebook builder
from autograder.assignments import ASSIGNMENTS

import attention_course.worked_inputs as W
from autograder.assignments import exercise
from attention_course.exercises import previous_token_head as previous_token_head_exercise
from attention_course.exercises import score_spread as score_spread_exercise
from solutions import ps1, ps2, ps3, ps4

ROOT = Path(__file__).resolve().parent.parent

DECIMAL = re.compile(r"(?<![\w.])(\d+\.\d+)(?!\w)")
# Numbers the prose names that are settings rather than results: the grader's bars for the
# previous-token head (CONTRACTS.md) and what the notebook aims for, as the checks hold them.
_HEAD = previous_token_head_exercise
SETTINGS = {"ps1": set(), "ps2": set(),
            "ps3": {f"{v:g}" for v in (_HEAD.BAR_WEIGHT, _HEAD.BAR_OUTPUT, _HEAD.AIM, round(1 - _HEAD.AIM, 3))},
            "ps4": {f"{inspect.signature(ps4.rope).parameters['base'].default}"}}


def prose(assignment: str) -> str:
    """The notebook's words: markdown cells and the comments of its code cells."""
    parts = []
    for kind, _, body in build.parse_template((ROOT / "templates" / f"{assignment}.py").read_text()):
        if kind == "markdown":
            parts.append(build.markdown_text(body))
        elif kind in ("code", "given"):
            parts.extend(line.split("#", 1)[1] for line in body.splitlines() if "#" in line)
    return "\n".join(parts)


def rounds_to(value: float, text: str) -> bool:
    digits = len(text.split(".")[1]) if "." in text else 0
    return abs(round(abs(float(value)), digits) - float(text)) < 1e-9


# ---------------------------------------------------------------- what the reference computes

def _river_bank():
    X = W.RIVER_BANK
    out_raw, w_raw = ps1.raw_self_attention(X)
    out_wired, w_wired, scores = ps1.wired_attention(X, W.W_Q_RIVER, W.W_K_RIVER)
    return X, out_raw, w_raw, out_wired, w_wired, scores


@lru_cache(maxsize=None)
def _self_weights(seed=None):
    """The shared-matrix demo of ps1, as the notebook runs it: (raw, separate, shared)."""
    T, d, d_k, draws = (W.RANDOM_TOKENS[k] for k in ("T", "d", "d_k", "draws"))
    rng = np.random.default_rng(W.RANDOM_TOKENS["seed"] if seed is None else seed)
    tokens = rng.standard_normal((draws, T, d))
    W_Qs, W_Ks, W_shared = np.linalg.qr(rng.standard_normal((3, draws, d, d_k)))[0]
    on_self = {"raw": [], "separate": [], "shared": []}
    for X, W_Q, W_K, W_one in zip(tokens, W_Qs, W_Ks, W_shared, strict=True):
        on_self["raw"].append(np.diag(ps1.raw_self_attention(X)[1]).mean())
        on_self["separate"].append(np.diag(ps1.wired_attention(X, W_Q, W_K)[1]).mean())
        on_self["shared"].append(np.diag(ps1.wired_attention(X, W_one, W_one)[1]).mean())
    return {k: float(np.mean(v)) for k, v in on_self.items()}


@lru_cache(maxsize=None)
def _long_run_self_weights(draws=20_000, seed=7):
    """The same measurement on many draws, vectorised: (raw, separate, shared)."""
    T, d, d_k = (W.RANDOM_TOKENS[k] for k in ("T", "d", "d_k"))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((draws, T, d))
    W_Q, W_K, W_shared = (np.linalg.qr(rng.standard_normal((draws, d, d_k)))[0] for _ in range(3))

    def on_self(Q, K, scale):
        weights = ps1.softmax(Q @ np.swapaxes(K, -1, -2) * scale, axis=-1)
        return float(np.diagonal(weights, axis1=-2, axis2=-1).mean())
    return {"raw": on_self(X, X, 1.0), "separate": on_self(X @ W_Q, X @ W_K, d_k ** -0.5),
            "shared": on_self(X @ W_shared, X @ W_shared, d_k ** -0.5)}


@lru_cache(maxsize=None)
def _raw_self_weight_demo():
    """ps1's raw_self_attention demo: random tokens, raw attention only."""
    T, d, draws = W.RANDOM_TOKENS["T"], W.RANDOM_TOKENS["d"], W.RANDOM_TOKENS["draws"]
    rng = np.random.default_rng(W.RANDOM_TOKENS["seed"])
    return float(np.mean([np.diag(ps1.raw_self_attention(rng.standard_normal((T, d)))[1]).mean()
                          for _ in range(draws)]))


def _cat_sat():
    Q, K, V = (W.CAT_SAT @ M for M in (W.W_Q_CAT_SAT, W.W_K_CAT_SAT, W.W_V_CAT_SAT))
    out, weights = ps2.scaled_dot_product_attention(Q, K, V, mask=ps2.causal_mask(3))
    return Q, K, V, out, weights


def _head():
    q, k, v = (W.HEAD_X @ M for M in (W.W_Q_HEAD, W.W_K_HEAD, W.W_V_HEAD))
    out, weights = ps2.scaled_dot_product_attention(q, k, v, scale=1.0)
    _, causal = ps2.scaled_dot_product_attention(q, k, v, mask=ps2.causal_mask(3))
    return q, k, out, weights, causal


def _library():
    """ps2's soft lookup: (scores, scaled scores, weights, taken home) of the one question."""
    scores = W.LIBRARY_QUESTION @ W.LIBRARY_CATALOGUE.T
    out, weights = ps2.scaled_dot_product_attention(W.LIBRARY_QUESTION, W.LIBRARY_CATALOGUE, W.LIBRARY_BOOKS)
    return scores[0], scores[0] / np.sqrt(W.LIBRARY_CATALOGUE.shape[1]), weights[0], out[0]


def _temperatures():
    """ps3's hand-built head at each gain: {gain: (sat's weights, their entropy)}."""
    q, k, v = (W.HEAD_X @ M for M in (W.W_Q_HEAD, W.W_K_HEAD, W.W_V_HEAD))
    rows = {}
    for gain in W.HEAD_GAINS:
        sat = ps2.scaled_dot_product_attention(q * (gain / W.HEAD_GAIN), k, v, scale=1.0)[1][2]
        rows[gain] = (sat, float(-np.sum(sat * np.log(sat))))
    return rows


def computed(assignment: str) -> list[float]:
    """Every number the reference gives on the worked inputs that the prose may quote."""
    values: list = []
    if assignment == "ps1":
        for scores, _ in W.SOFTMAX_BY_HAND:
            values += list(ps1.softmax(np.array(scores)))
        values += [math.e, math.e ** 2, 1 + math.e ** 2, math.e ** 8,
                   np.log(np.finfo(np.float32).max), np.log(np.finfo(np.float64).max)]
        X, out_raw, w_raw, out_wired, w_wired, scores = _river_bank()
        values += list((X @ X.T).ravel()) + list((X[:, None, :] * X[None, :, :]).ravel())
        values += list(w_raw.ravel()) + list(100 * w_raw.ravel()) + list(out_raw.ravel())
        values += list(w_wired.ravel()) + list(scores.ravel()) + list(out_wired.ravel())
        values += list((X @ W.W_Q_RIVER).ravel()) + list((X @ W.W_K_RIVER).ravel())
        values += [np.sqrt(2), out_raw[2, 0] / out_raw[2, 1], out_wired[2, 0] / out_wired[2, 1]]
        values += [out_raw[2, 0], out_wired[2, 0]]  # water of bank, spelt out term by term
        values += [w_raw[2, 1] * 0.9, w_raw[2, 2] * 0.3, w_wired[2, 1] * 0.9, w_wired[2, 2] * 0.3]
        warm = ps1.softmax(W.WARM_QUERY @ W.WARM_JACKET_KEYS.T)
        values += list(warm) + list(ps1.softmax(np.zeros(2)))
        winter = ps1.softmax((W.WINTER_TYPES @ W.W_Q_WINTER) @ (W.WINTER_TYPES @ W.W_K_WINTER).T)
        values += list(winter.ravel())
        demo = _self_weights()  # what the demos print: the prose quotes them
        values += [demo["raw"], 100 * demo["raw"], demo["separate"], demo["shared"]]
        values += [1 / W.RANDOM_TOKENS["T"], 1 / W.SCORE_SPREAD_KEYS]
        values += [v for row in W.SCORE_SPREAD.values() for v in row]  # checked by test_score_spread_*
        values += [0.02]  # how far 500 rows land: test_score_spread_runs_land_where_the_prose_says
    elif assignment == "ps2":
        values += list(ps1.softmax(np.array([1.0, 2.0, 3.0])))
        values += list(ps1.softmax(W.WARM_QUERY @ W.WARM_JACKET_KEYS.T))
        Q, K, V, out, weights = _cat_sat()
        S = Q @ K.T
        values += list(S.ravel()) + list((S / np.sqrt(2)).ravel()) + [np.sqrt(2)]
        values += list((S[2] - S[2].max()) / np.sqrt(2)) + list(np.exp((S[2] - S[2].max()) / np.sqrt(2)))
        values += [np.exp((S[2] - S[2].max()) / np.sqrt(2)).sum()]
        values += list(weights.ravel()) + list(out.ravel())
        values += [W.BIAS_QUERY @ W.B_K_EXAMPLE]
        values += [v for part in _library() for v in part]
    elif assignment == "ps3":
        q, k, out, weights, causal = _head()
        values += list(weights.ravel()) + list(out.ravel()) + list(causal.ravel())
        values += list((q @ k.T / np.sqrt(2)).ravel())
        values += list(_cat_sat()[4][2])  # ps2's example, quoted for contrast
        g = W.GAIN_EXAMPLE
        values += [np.log(g["bound"]), np.sqrt(g["T"]) * np.log(g["bound"])]
        X = W.RIVER_BANK
        W_QK = ps3.qk_circuit(W.W_Q_RIVER, W.W_K_RIVER)
        values += list(W_QK.ravel()) + list((X @ W_QK).ravel()) + list((X @ W_QK @ X.T).ravel())
        values += list(np.array(W.HEAD_OUTPUTS) @ W.W_O_TWO_HEADS)
        values += [v for sat, entropy in _temperatures().values() for v in (*sat, entropy)] + [np.log(3)]
    elif assignment == "ps4":
        out, weights = ps4.attend_step(W.STEP_QUERY, W.STEP_K_CACHE, W.STEP_V_CACHE)
        values += list(out) + list(weights)
        values += list(ps4.sinusoidal_positions(W.POSITIONS_T, W.POSITIONS_D).ravel())
        values += list(ps4.rope(W.ROPE_X).ravel())
        values += [p / 10000 ** (2 / W.POSITIONS_D) for p in range(W.POSITIONS_T)]  # the angles p / 100
    return [float(abs(v)) for v in values if np.isfinite(v)]


def inputs(assignment: str) -> set[float]:
    """The numbers of the worked inputs a notebook uses."""
    arrays = {
        "ps1": [W.RIVER_BANK, W.W_Q_RIVER, W.W_K_RIVER, W.WARM_QUERY, *[np.array(s) for s, _ in W.SOFTMAX_BY_HAND]],
        "ps2": [W.CAT_SAT, W.W_Q_CAT_SAT, W.W_K_CAT_SAT, W.W_V_CAT_SAT, W.BIAS_QUERY, W.B_K_EXAMPLE,
                W.LIBRARY_QUESTION, W.LIBRARY_CATALOGUE, W.LIBRARY_BOOKS],
        "ps3": [W.RIVER_BANK, W.HEAD_X, W.W_Q_HEAD, W.W_O_TWO_HEADS, W.R_EXAMPLE, np.array(W.HEAD_GAINS)],
        "ps4": [W.STEP_QUERY, W.STEP_K_CACHE, W.STEP_V_CACHE, W.ROPE_X],
    }[assignment]
    return {abs(float(v)) for a in arrays for v in np.ravel(a) if np.isfinite(v)}


@pytest.mark.parametrize("assignment", ["ps1", "ps2", "ps3", "ps4"])
def test_every_decimal_in_the_prose_is_recomputed(assignment):
    values, given = computed(assignment), inputs(assignment)
    unexplained = sorted({text for text in DECIMAL.findall(prose(assignment))
                          if text not in SETTINGS[assignment]
                          and not any(rounds_to(v, text) for v in values)
                          and float(text) not in given}, key=float)
    assert unexplained == [], f"{assignment}'s prose quotes numbers nothing computes: {unexplained}"


# ---------------------------------------------------------------- the tables, both ways

def _quoted(assignment: str) -> list[tuple[str, float]]:
    """(text as the prose writes it, the reference's value): each must appear in the prose."""
    q: list[tuple[str, float]] = []
    if assignment == "ps1":
        X, out_raw, w_raw, out_wired, w_wired, scores = _river_bank()
        q += [(f"{v:.3f}", v) for v in w_raw.ravel()] + [(f"{v:.3f}", v) for v in w_wired.ravel()]
        q += [(f"{v:.3f}", v) for v in out_raw[2]] + [(f"{v:.3f}", v) for v in out_wired[2]]
        q += [(f"{v:.2f}", v) for v in scores.ravel() if v]
        q += [(f"{W.RIVER_BANK_BLEND['raw']}", out_raw[2, 0] / out_raw[2, 1]),
              (f"{W.RIVER_BANK_BLEND['wired']}", out_wired[2, 0] / out_wired[2, 1])]
        demo = _self_weights()
        q += [(f"{W.SELF_WEIGHT[k]}", demo[k]) for k in ("raw", "separate", "shared")]
        q += [("2981", math.e ** 8), (f"{W.FLOAT32_EXP_LIMIT}", np.log(np.finfo(np.float32).max))]
        q += [(f"{v:.3f}", v) for row in W.SCORE_SPREAD.values() for v in row[1:]]
    elif assignment == "ps2":
        Q, K, V, out, weights = _cat_sat()
        S = Q @ K.T
        by_hand = W.CAT_SAT_BY_HAND
        q += [(f"{v:.3f}", v) for v in weights[2]] + [(f"{v:.3f}", v) for v in out[2]]
        q += [(f"{v:.3f}", v) for v in weights[1, :2]]
        q += [(f"{v:.2f}", v) for v in S[2] / np.sqrt(2)] + [(f"{by_hand['sum_sat']}", np.exp(
            (S[2] - S[2].max()) / np.sqrt(2)).sum())]
        q += [("= 4", S[2, 1])]  # S[sat, cat]
        B, T, _, d, d_k, _ = W.BATCH_SHAPES
        long = W.LONG_CONTEXT
        q += [(f"{v:.3f}", v) for v in _library()[2]]
        q += [(f"{3 * d * d_k}", 3 * d * d_k), (f"{long['scores']:,}", long["T"] ** 2),
              (f"{long['megabytes_float32']} MB", long["T"] ** 2 * 4 / 1e6), ("2304", 3 * 768)]
    elif assignment == "ps3":
        q_, k_, out, weights, causal = _head()
        q += [(f"{v:.3f}", v) for v in causal[2]] + [("0.909", weights[2, 1]), ("0.045", weights[2, 0])]
        g = W.GAIN_EXAMPLE
        q += [(f"{g['bound']}", 999 * (g["T"] - 1)), (f"{g['log_bound']:.2f}", np.log(g["bound"])),
              (f"{g['gain']}", np.sqrt(g["T"]) * np.log(g["bound"]))]
        gpt2 = W.GPT2_SMALL
        assert gpt2["per_head_weights"] == 3 * gpt2["d_model"] * gpt2["d_head"]
        assert gpt2["n_heads"] * gpt2["d_head"] == gpt2["d_model"] and gpt2["c_attn"][1] == 3 * gpt2["d_model"]
        q += [("147{,}456", gpt2["per_head_weights"]), ("2304", gpt2["c_attn"][1])]
        q += [(f"{v:.3f}", v) for sat, entropy in _temperatures().values() for v in (sat.max(), entropy)]
    elif assignment == "ps4":
        out, weights = ps4.attend_step(W.STEP_QUERY, W.STEP_K_CACHE, W.STEP_V_CACHE)
        q += [(f"{v:.3f}", v) for v in weights] + [(f"{v:.3f}", v) for v in out]
        q += [(f"{v:.3f}", v) for v in ps4.sinusoidal_positions(W.POSITIONS_T, W.POSITIONS_D)[1]]
        q += [(f"{v:.3f}", v) for v in ps4.rope(W.ROPE_X)[1]]
        q += [("162{,}755", math.exp(12))]  # the induction head's logit gap of 12
    return q


@pytest.mark.parametrize("assignment", ["ps1", "ps2", "ps3", "ps4"])
def test_the_key_numbers_appear_in_the_prose_as_the_reference_gives_them(assignment):
    text = prose(assignment)
    missing = [quote for quote, _ in _quoted(assignment) if quote not in text]
    assert missing == []
    for quote, value in _quoted(assignment):
        number = re.sub(r"[^\d.]", "", quote)
        assert rounds_to(value, number), (quote, value)


def test_the_prose_tables_are_the_reference_weights():
    X, out_raw, w_raw, out_wired, w_wired, scores = _river_bank()
    text = prose("ps1")
    for name, row_raw, row_wired in zip(W.RIVER_BANK_TOKENS, w_raw, w_wired, strict=True):
        assert f"| **{name}** | " + " | ".join(f"{v:.3f}" for v in row_raw) + " |" in text
        assert f"| **{name}** | " + " | ".join(f"{v:.3f}" for v in row_wired) + " |" in text
    for d, (std, top_unscaled, top_scaled) in W.SCORE_SPREAD.items():
        assert f"| {d} | {np.sqrt(d):g} | {std} | {top_unscaled:.3f} | {top_scaled:.3f} |" in text


# ---------------------------------------------------------------- numbers that are not one output

def test_softmax_by_hand_is_the_references():
    for scores, by_hand in W.SOFTMAX_BY_HAND:
        got = ps1.softmax(np.array(scores))
        assert all(rounds_to(g, f"{h}") or abs(g - h) < 5e-4 for g, h in zip(got, by_hand, strict=True)), (scores, got)


def test_river_bank_blends():
    _, out_raw, _, out_wired, _, _ = _river_bank()
    assert round(out_raw[2, 0] / out_raw[2, 1], 1) == W.RIVER_BANK_BLEND["raw"] == 2.9
    assert round(out_wired[2, 0] / out_wired[2, 1], 1) == W.RIVER_BANK_BLEND["wired"] == 5.4


@pytest.mark.parametrize("name", ["raw", "separate", "shared"])
def test_self_weights_are_what_the_demos_print(name):
    assert rounds_to(_self_weights()[name], f"{W.SELF_WEIGHT[name]}"), (name, _self_weights()[name])


def test_the_raw_demo_of_exercise_2_prints_the_same_self_weight():
    assert rounds_to(_raw_self_weight_demo(), f"{W.SELF_WEIGHT['raw']}"), _raw_self_weight_demo()


@pytest.mark.parametrize("name", ["raw", "separate", "shared"])
def test_self_weights_of_the_demos_are_within_a_hundredth_of_the_long_run(name):
    assert abs(_long_run_self_weights()[name] - W.SELF_WEIGHT[name]) <= 0.01, (name, _long_run_self_weights()[name])


def test_cat_sat_by_hand():
    Q, K, V, out, weights = _cat_sat()
    by_hand = W.CAT_SAT_BY_HAND
    assert tuple(Q[2]) == by_hand["q_sat"] and tuple((Q @ K.T)[2]) == by_hand["scores_sat"]
    scaled = (Q @ K.T)[2] / np.sqrt(2)
    assert np.allclose(scaled, by_hand["scaled_sat"], atol=5e-3)
    assert np.allclose(scaled - scaled.max(), by_hand["shifted_sat"], atol=5e-3)
    assert np.allclose(np.exp(scaled - scaled.max()), by_hand["exp_sat"], atol=5e-4)
    assert abs(np.exp(scaled - scaled.max()).sum() - by_hand["sum_sat"]) < 5e-4
    assert np.allclose((Q @ K.T)[1, :2] / np.sqrt(2), by_hand["scaled_cat"], atol=5e-3)
    assert np.array_equal(Q, W.Q_CAT_SAT) and np.array_equal(K, W.K_CAT_SAT) and np.array_equal(V, W.V_CAT_SAT)
    assert np.array_equal(ps2.causal_mask(3), W.CAUSAL_MASK_3)
    assert np.allclose(out[0], V[0]) and np.allclose(weights[0], [1, 0, 0])


def test_the_hand_built_head_made_causal_is_not_ps2s_example():
    _, _, _, _, causal = _head()
    assert np.allclose(causal[2], [0.097, 0.807, 0.097], atol=5e-4)
    assert not np.allclose(causal[2], _cat_sat()[4][2], atol=0.01)


def test_the_gain_the_notebook_derives_meets_both_bars_with_room():
    g = W.GAIN_EXAMPLE
    T = g["T"]
    assert g["bound"] == round(1 / (1 - g["target"]) - 1) * (T - 1)
    gain = np.sqrt(T) * np.log(g["bound"])
    assert rounds_to(gain, f"{g['gain']}") and rounds_to(np.log(g["bound"]), f"{g['log_bound']:.2f}")
    weight = np.exp(gain / np.sqrt(T)) / (np.exp(gain / np.sqrt(T)) + T - 1)
    assert weight >= g["target"] - 1e-12 and 1 - weight <= 0.001 + 1e-12


@pytest.fixture(scope="module")
def long_run():
    """The reference's statistics on many rows (a few seconds): (mean, standard error) per d."""
    stats = {}
    for d, rows in ((4, 200_000), (16, 100_000), (64, 40_000), (256, 20_000)):
        rng = np.random.default_rng(d)
        chunks = np.array([ps1.score_spread(d, rows // 10, W.SCORE_SPREAD_KEYS, rng) for _ in range(10)])
        stats[d] = (chunks.mean(0), chunks.std(0, ddof=1) / np.sqrt(len(chunks)))
    return stats


def test_score_spread_table_is_the_long_run_mean(long_run):
    for d, (mean, se) in long_run.items():
        table = np.array(W.SCORE_SPREAD[d])
        assert abs(table[0] - mean[0]) <= 0.05 * np.sqrt(d), (d, table, mean)  # the std, given to 1 decimal
        assert (np.abs(table[1:] - mean[1:]) <= np.maximum(0.0015, 5 * se[1:])).all(), (d, table, mean, se)


def test_score_spread_runs_land_where_the_prose_says():
    # "a run of 500 rows typically lands within about ±0.02": two standard errors of the mean
    # top weight at the spreadiest width.
    rng = np.random.default_rng(0)
    spread = max(np.std([ps1.score_spread(d, 1, 8, rng)[1] for _ in range(4000)]) for d in (4, 16))
    assert 2 * spread / np.sqrt(500) <= 0.02


def test_the_prose_says_how_many_rows_the_checks_draw():
    rows = score_spread_exercise.ROWS.values()
    assert f"between {min(rows)} and {max(rows)} rows per width" in " ".join(prose("ps1").split())


def test_the_grader_reads_the_same_table():
    assert score_spread_exercise.TOP == {d: row[1:] for d, row in W.SCORE_SPREAD.items()}


# ---------------------------------------------------------------- one place for each example

def _visible_args(name):
    return [(c.args, c.kwargs) for check in exercise(name).checks(np.random.default_rng(0)) if check.visible
            for c in check.calls]


def _holds(calls, *arrays):
    flat = [a for args, kwargs in calls for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray)]
    return all(any(f.shape == a.shape and np.array_equal(f, a) for f in flat) for a in arrays)


def test_the_visible_checks_use_the_worked_inputs():
    assert _holds(_visible_args("raw_self_attention"), W.RIVER_BANK)
    assert _holds(_visible_args("wired_attention"), W.RIVER_BANK, W.W_Q_RIVER, W.W_K_RIVER)
    assert _holds(_visible_args("scaled_dot_product_attention"), W.Q_CAT_SAT, W.K_CAT_SAT, W.V_CAT_SAT,
                  W.CAUSAL_MASK_3, W.WARM_JACKET_KEYS)
    shapes = [args for args, _ in _visible_args("attention_shapes")]
    assert shapes[:2] == [W.BATCH_SHAPES, W.CROSS_ATTENTION_SHAPES]  # then the contract's boundaries
    assert _visible_args("previous_token_head") == [((W.PREVIOUS_TOKEN_VOCAB, len(W.PREVIOUS_TOKENS)), {})]


def test_the_worked_inputs_cannot_be_changed_by_a_notebook():
    for name in dir(W):
        value = getattr(W, name)
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, name


# Rows of the worked arrays as a notebook would type them: none may be typed again.
TYPED = [r"0\.9,\s*0\.0,\s*0\.3", r"0\.3,\s*0\.3,\s*0\.9", r"\[2\.0,\s*0\.0\],\s*\[0\.0,\s*1\.5\]",
         r"\[1\.0,\s*0\.0\],\s*\[1\.0,\s*0\.0\],\s*\[1\.0,\s*1\.0\]", r"\[0\.0,\s*0\.0\],\s*\[1\.0,\s*0\.0\]"]


@pytest.mark.parametrize("assignment", ["ps1", "ps2", "ps3", "ps4"])
def test_notebooks_import_the_worked_inputs_rather_than_type_them(assignment):
    cells = build.parse_template((ROOT / "templates" / f"{assignment}.py").read_text())
    code = "\n".join(body for kind, _, body in cells if kind in ("code", "given"))
    assert "from attention_course.worked_inputs import" in code
    assert [p for p in TYPED if re.search(p, code)] == []
    modules = [ROOT / "attention_course" / "exercises" / f"{n}.py" for n in
               ("raw_self_attention", "wired_attention", "scaled_dot_product_attention", "attention_shapes",
                "previous_token_head", "score_spread", "causal_mask")]
    assert [str(m) for m in modules if any(re.search(p, m.read_text()) for p in TYPED)] == []


# ---------------------------------------------------------------- the notebooks, graded

@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_a_graded_notebook_runs_every_cell(assignment, tmp_path):
    from autograder.grade import grade, hidden_paths
    from autograder.sandbox import Sandbox

    path = tmp_path / f"{assignment}.ipynb"
    path.write_text((ROOT / "source" / assignment / f"{assignment}.ipynb").read_text())
    with Sandbox(hide=hidden_paths(tmp_path)) as sandbox:
        results = grade(path, assignment, sandbox=sandbox)
    assert "raised" not in results.output, results.output
    assert results.score == results.max_score


def test_grading_never_imports_matplotlib(tmp_path):
    # The picture cells fall back to printing: importing matplotlib in every sandboxed child
    # would cost more than grading the submission.
    from autograder.grade import grade, hidden_paths
    from autograder.sandbox import Sandbox

    path = tmp_path / "pictures.py"
    path.write_text("import matplotlib.pyplot as plt\n")
    with Sandbox(hide=hidden_paths(tmp_path)) as sandbox:
        results = grade(path, "ps1", sandbox=sandbox)
    assert "ModuleNotFoundError" in results.output or "ImportError" in results.output, results.output
