"""ps4's reference solutions against independent oracles: torch's scaled_dot_product_attention
for the cache, a direct loop for the sinusoidal table, complex numbers for RoPE, and torch
running the two-layer induction model."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from solutions.ps4 import (attend_step, decode_with_cache, induction_heads, key_bias_effect, rope,
                           sinusoidal_positions)

EXACT = dict(atol=1e-10, rtol=0)  # float64 against float64: the bar for the cache
FLOAT32 = dict(atol=1e-5, rtol=0)


def t(a):
    """numpy -> torch, keeping the dtype."""
    return torch.from_numpy(np.ascontiguousarray(a))


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


# ---------------------------------------------------------------- the KV cache


@pytest.mark.parametrize("t_cached, d_k, d_v", [(1, 4, 3), (5, 8, 2), (12, 16, 5)])
def test_attend_step_is_one_row_of_torch_attention(rng, t_cached, d_k, d_v):
    q, K, V = rng.standard_normal(d_k), rng.standard_normal((t_cached, d_k)), rng.standard_normal((t_cached, d_v))
    out, weights = attend_step(q, K, V)
    want = F.scaled_dot_product_attention(t(q[None]), t(K), t(V)).numpy()[0]
    np.testing.assert_allclose(out, want, **EXACT)
    np.testing.assert_allclose(weights, F.softmax(t(K @ q) / np.sqrt(d_k), dim=-1).numpy(), **EXACT)


def test_attend_step_uses_the_scale_it_is_given(rng):
    q, K, V = rng.standard_normal(4), rng.standard_normal((6, 4)), rng.standard_normal((6, 2))
    out, _ = attend_step(q, K, V, scale=0.3)
    np.testing.assert_allclose(out, F.scaled_dot_product_attention(t(q[None]), t(K), t(V), scale=0.3).numpy()[0],
                               **EXACT)


@pytest.mark.parametrize("T, d, d_k, d_v", [(1, 3, 2, 2), (6, 5, 4, 3), (17, 8, 8, 6)])
def test_decode_with_cache_is_torch_causal_attention(rng, T, d, d_k, d_v):
    X = rng.standard_normal((T, d))
    W_Q, W_K, W_V = rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k)), rng.standard_normal((d, d_v))
    want = F.scaled_dot_product_attention(t(X @ W_Q), t(X @ W_K), t(X @ W_V), is_causal=True).numpy()
    np.testing.assert_allclose(decode_with_cache(X, W_Q, W_K, W_V), want, **EXACT)


def test_decode_with_cache_is_blind_to_huge_future_tokens(rng):
    X = rng.standard_normal((8, 5))
    W_Q, W_K, W_V = (rng.standard_normal((5, 4)) for _ in range(3))
    loud = X.copy()
    loud[4:] *= 1e3
    np.testing.assert_allclose(decode_with_cache(loud, W_Q, W_K, W_V)[:4], decode_with_cache(X, W_Q, W_K, W_V)[:4],
                               **EXACT)


def test_decode_with_cache_float32(rng):
    X, W_Q, W_K, W_V = (rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (4, 4), (4, 4), (4, 2)))
    want = F.scaled_dot_product_attention(t(X @ W_Q), t(X @ W_K), t(X @ W_V), is_causal=True).numpy()
    np.testing.assert_allclose(decode_with_cache(X, W_Q, W_K, W_V), want, **FLOAT32)


# ---------------------------------------------------------------- positions


def looped_positions(T, d):
    """The formula as written, one entry at a time."""
    PE = np.zeros((T, d))
    for p in range(T):
        for i in range(d // 2):
            PE[p, 2 * i] = np.sin(p / 10000 ** (2 * i / d))
            PE[p, 2 * i + 1] = np.cos(p / 10000 ** (2 * i / d))
    return PE


@pytest.mark.parametrize("T, d", [(1, 2), (3, 4), (16, 10), (50, 64)])
def test_sinusoidal_positions_is_the_formula(T, d):
    np.testing.assert_allclose(sinusoidal_positions(T, d), looped_positions(T, d), atol=1e-12, rtol=0)


@pytest.mark.parametrize("T, d", [(4, 5), (4, 1), (0, 4), (3, 0), (-2, 4)])
def test_sinusoidal_positions_rejects_bad_sizes(T, d):
    with pytest.raises(ValueError):
        sinusoidal_positions(T, d)


def complex_rope(X, base=10000.0):
    """RoPE as Meta's original LLaMA computes it: neighbours as complex numbers, times e^(i p w)."""
    T, d = X.shape[-2:]
    z = X[..., 0::2] + 1j * X[..., 1::2]  # (..., T, d/2)
    turn = np.exp(1j * np.outer(np.arange(T), base ** (-np.arange(0, d, 2) / d)))  # (T, d/2)
    rotated = z * turn
    return np.stack([rotated.real, rotated.imag], axis=-1).reshape(X.shape)


@pytest.mark.parametrize("shape", [(3, 4), (7, 8), (2, 5, 6), (2, 3, 9, 16)])
@pytest.mark.parametrize("base", [10000.0, 50.0])
def test_rope_is_the_complex_rotation(rng, shape, base):
    X = rng.standard_normal(shape)
    np.testing.assert_allclose(rope(X, base=base), complex_rope(X, base=base), atol=1e-12, rtol=0)


def test_rope_scores_depend_only_on_the_distance(rng):
    T, d = 11, 16
    RQ, RK = rope(np.tile(rng.standard_normal(d), (T, 1))), rope(np.tile(rng.standard_normal(d), (T, 1)))
    S = RQ @ RK.T
    for offset in range(-(T - 1), T):
        np.testing.assert_allclose(np.diag(S, k=offset), np.diag(S, k=offset)[0], atol=1e-12, rtol=0)


def test_rope_rejects_an_odd_width(rng):
    with pytest.raises(ValueError):
        rope(rng.standard_normal((3, 5)))


def torch_weight_change(Q, K, b_K, rotate):
    """The largest change of torch's softmax weights from b_K, rotating with the complex oracle."""
    Qr, Kr, Kb = (complex_rope(a) if rotate else a for a in (Q, K, K + b_K))
    d = Q.shape[-1]
    weights = [F.softmax(t(Qr) @ t(k).transpose(-2, -1) / np.sqrt(d), dim=-1) for k in (Kr, Kb)]
    return float((weights[1] - weights[0]).abs().max())


@pytest.mark.parametrize("batch", [(), (2,)])
def test_key_bias_effect_agrees_with_torch(rng, batch):
    Q, K, b_K = rng.standard_normal((*batch, 6, 8)), rng.standard_normal((*batch, 6, 8)), rng.standard_normal(8)
    plain, rotated = key_bias_effect(Q, K, b_K)
    assert plain == pytest.approx(0.0, abs=1e-12)
    assert rotated == pytest.approx(torch_weight_change(Q, K, b_K, rotate=True), abs=1e-12)
    assert rotated > 1e-3  # generic inputs: the rotated bias moves the weights


# ---------------------------------------------------------------- the induction head


def run_torch(weights, tokens, n_vocab):
    """Both layers with torch's causal attention (float64); layer 2's (T, n_vocab) output."""
    W_Q1, W_K1, W_V1, W_Q2, W_K2, W_V2 = (t(w) for w in weights)
    T = len(tokens)
    x = torch.cat([t(np.eye(n_vocab)[tokens]), t(np.eye(T)), torch.zeros(T, n_vocab, dtype=torch.float64)], dim=1)
    out1 = F.scaled_dot_product_attention(x @ W_Q1, x @ W_K1, x @ W_V1, is_causal=True)
    x = x + torch.cat([torch.zeros(T, n_vocab + T, dtype=torch.float64), out1], dim=1)
    return F.scaled_dot_product_attention(x @ W_Q2, x @ W_K2, x @ W_V2, is_causal=True).numpy()


@pytest.mark.parametrize("n_vocab, T", [(4, 6), (7, 12), (33, 64), (200, 64)])
def test_induction_heads_complete_every_graded_position(rng, n_vocab, T):
    prefix = rng.permutation(n_vocab)[: T // 2]
    tokens = np.concatenate([prefix, prefix])
    predictions = run_torch(induction_heads(n_vocab, T), tokens, n_vocab).argmax(-1)
    graded = np.arange(T // 2 + 1, T - 1)
    np.testing.assert_array_equal(predictions[graded], tokens[graded + 1])


def test_position_t_over_2_is_split_between_two_keys(rng):
    n_vocab, T = 6, 10
    prefix = rng.permutation(n_vocab)[: T // 2]
    out = run_torch(induction_heads(n_vocab, T), np.concatenate([prefix, prefix]), n_vocab)
    # half the first token (position 0 is its own predecessor), half the second
    assert out[T // 2, prefix[0]] == pytest.approx(0.5, abs=1e-3)
    assert out[T // 2, prefix[1]] == pytest.approx(0.5, abs=1e-3)


def test_a_beginning_of_sequence_token_resolves_position_t_over_2(rng):
    # The notebook's claim: with a token at position 0 that never recurs, the first token of
    # the repeat has one match, and it is predicted like every other.
    n_vocab, half = 8, 5
    bos = n_vocab - 1
    prefix = rng.permutation(bos)[:half]
    tokens = np.concatenate([[bos], prefix, prefix])  # T = 11
    predictions = run_torch(induction_heads(n_vocab, len(tokens)), tokens, n_vocab).argmax(-1)
    np.testing.assert_array_equal(predictions[half + 1: -1], tokens[half + 2:])
