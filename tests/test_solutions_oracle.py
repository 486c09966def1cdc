"""The reference solutions against independent oracles (torch) and CONTRACTS.md's worked numbers."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from solutions.ps1 import raw_self_attention, score_spread, softmax, wired_attention
from solutions.ps2 import (
    attention_shapes,
    attention_with_biases,
    causal_mask,
    fused_self_attention,
    scaled_dot_product_attention,
)
from solutions.ps3 import multi_head_attention, ov_circuit, qk_circuit

# Explicit tolerances per input dtype: (atol, rtol).
TOL = {np.float64: dict(atol=1e-6, rtol=1e-7), np.float32: dict(atol=1e-5, rtol=0)}
WORKED = dict(atol=5e-4, rtol=0)  # the contract gives three decimals


def t(a):
    """numpy -> torch, keeping the dtype."""
    return torch.from_numpy(np.ascontiguousarray(a))


def torch_weights(Q, K, scale, mask=None):
    """Attention weights the torch way: softmax(Q K^T * scale + mask) over the keys."""
    scores = t(Q) @ t(K).transpose(-2, -1) * scale
    if mask is not None:
        scores = scores + t(mask).to(scores.dtype)
    return F.softmax(scores, dim=-1).numpy()


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


@pytest.fixture
def river_bank():
    """the, river, bank on the axes (water, money, place, filler)."""
    return np.array([[0.0, 0.0, 0.0, 1.0], [0.9, 0.0, 0.3, 0.0], [0.3, 0.3, 0.9, 0.0]])


@pytest.fixture
def hand_wiring():
    W_Q = np.array([[0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 1.5]])
    W_K = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    return W_Q, W_K


# ---------------------------------------------------------------- ps1: softmax


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_softmax_matches_torch(rng, axis):
    S = rng.standard_normal((3, 4, 5)) * 3
    np.testing.assert_allclose(softmax(S, axis=axis), torch.softmax(t(S), dim=axis).numpy(), atol=1e-12, rtol=0)


def test_softmax_default_axis_is_last(rng):
    S = rng.standard_normal((4, 6))
    np.testing.assert_allclose(softmax(S), torch.softmax(t(S), dim=-1).numpy(), atol=1e-12, rtol=0)


@pytest.mark.parametrize("magnitude", [1e4, -1e4])
def test_softmax_is_finite_for_huge_scores(magnitude):
    S = np.array([[magnitude, 0.0, -magnitude], [magnitude, magnitude, 0.0]])
    W = softmax(S, axis=-1)
    assert np.isfinite(W).all()
    np.testing.assert_allclose(W, torch.softmax(t(S), dim=-1).numpy(), atol=1e-12, rtol=0)


def test_softmax_gives_exactly_zero_weight_to_minus_inf(rng):
    S = rng.standard_normal((3, 5))
    S[:, 2] = -np.inf
    W = softmax(S, axis=-1)
    assert (W[:, 2] == 0.0).all()
    np.testing.assert_allclose(W.sum(axis=-1), 1.0, atol=1e-12, rtol=0)


def test_softmax_does_not_modify_its_input(rng):
    S = rng.standard_normal((4, 5))
    before = S.copy()
    softmax(S, axis=0)
    np.testing.assert_array_equal(S, before)


# ---------------------------------------------------------------- ps1: river bank


def test_raw_self_attention_river_bank_weights(river_bank):
    _, weights = raw_self_attention(river_bank)
    expected = [[0.576, 0.212, 0.212], [0.193, 0.475, 0.332], [0.185, 0.317, 0.498]]
    np.testing.assert_allclose(weights, expected, **WORKED)


def test_raw_self_attention_out_blends_the_embeddings(river_bank):
    out, weights = raw_self_attention(river_bank)
    np.testing.assert_allclose(out, weights @ river_bank, atol=1e-12, rtol=0)


def test_wired_attention_river_bank_scores(river_bank, hand_wiring):
    _, _, scores = wired_attention(river_bank, *hand_wiring)
    expected = [[0.0, 0.45, 1.35], [0.0, 0.54, 0.36], [0.0, 1.62, 1.08]]
    np.testing.assert_allclose(scores, expected, **WORKED)


def test_wired_attention_river_bank_weights(river_bank, hand_wiring):
    _, weights, _ = wired_attention(river_bank, *hand_wiring)
    expected = [[0.201, 0.276, 0.522], [0.266, 0.390, 0.344], [0.159, 0.500, 0.341]]
    np.testing.assert_allclose(weights, expected, **WORKED)


def test_wired_attention_values_are_the_raw_embeddings(river_bank, hand_wiring):
    out, weights, _ = wired_attention(river_bank, *hand_wiring)
    np.testing.assert_allclose(out, weights @ river_bank, atol=1e-12, rtol=0)


# ---------------------------------------------------------------- ps1: score spread

# d -> (top_unscaled, top_scaled), the contract's table for 8 keys and 2000 rows.
SPREAD_TABLE = {4: (0.52, 0.34), 16: (0.75, 0.36), 64: (0.88, 0.36), 256: (0.94, 0.37)}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("d", [4, 16, 64, 256])
def test_score_spread_std_is_sqrt_d(d, seed):
    std, _, _ = score_spread(d=d, n_rows=2000, n_keys=8, rng=np.random.default_rng(seed))
    assert abs(std - np.sqrt(d)) <= 0.05 * np.sqrt(d)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("d", [4, 16, 64, 256])
def test_score_spread_top_unscaled_weight(d, seed):
    _, top_unscaled, _ = score_spread(d=d, n_rows=2000, n_keys=8, rng=np.random.default_rng(seed))
    assert abs(top_unscaled - SPREAD_TABLE[d][0]) <= 0.03


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("d", [4, 16, 64, 256])
def test_score_spread_top_scaled_weight(d, seed):
    _, _, top_scaled = score_spread(d=d, n_rows=2000, n_keys=8, rng=np.random.default_rng(seed))
    assert abs(top_scaled - SPREAD_TABLE[d][1]) <= 0.03


def test_score_spread_returns_python_floats():
    result = score_spread(d=4, n_rows=50, n_keys=8, rng=np.random.default_rng(0))
    assert [type(x) for x in result] == [float, float, float]


# ---------------------------------------------------------------- ps2: causal mask


@pytest.mark.parametrize("T", [1, 2, 5])
def test_causal_mask_matches_torch_is_causal(T):
    expected = torch.zeros(T, T, dtype=torch.float64).masked_fill(
        ~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf")
    )
    np.testing.assert_array_equal(causal_mask(T), expected.numpy())


def test_causal_mask_is_a_float_array():
    assert causal_mask(4).dtype.kind == "f"


# ---------------------------------------------------------------- ps2: scaled dot-product attention


def qkv(rng, dtype, batch=(2, 3), T_q=4, T_k=4, d_k=5, d_v=5):
    Q = rng.standard_normal((*batch, T_q, d_k)).astype(dtype)
    K = rng.standard_normal((*batch, T_k, d_k)).astype(dtype)
    V = rng.standard_normal((*batch, T_k, d_v)).astype(dtype)
    return Q, K, V


SHAPES = [
    dict(batch=(), T_q=4, T_k=4, d_k=5, d_v=5),
    dict(batch=(2, 3), T_q=6, T_k=6, d_k=8, d_v=8),
    dict(batch=(2, 3), T_q=3, T_k=7, d_k=4, d_v=6),
    dict(batch=(2,), T_q=5, T_k=2, d_k=6, d_v=3),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_sdpa_output_matches_torch(rng, dtype, shape):
    Q, K, V = qkv(rng, dtype, **shape)
    out, _ = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(out, F.scaled_dot_product_attention(t(Q), t(K), t(V)).numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_sdpa_weights_match_torch(rng, dtype, shape):
    Q, K, V = qkv(rng, dtype, **shape)
    _, weights = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(weights, torch_weights(Q, K, scale=1 / np.sqrt(shape["d_k"])), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sdpa_causal_output_matches_torch_is_causal(rng, dtype):
    Q, K, V = qkv(rng, dtype, batch=(2, 3), T_q=6, T_k=6, d_k=4, d_v=3)
    out, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(6))
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=True).numpy()
    np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sdpa_causal_output_matches_torch_additive_mask(rng, dtype):
    Q, K, V = qkv(rng, dtype, batch=(2, 3), T_q=6, T_k=6, d_k=4, d_v=3)
    mask = causal_mask(6)
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=t(mask.astype(dtype))).numpy()
    np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sdpa_causal_weights_match_torch(rng, dtype):
    Q, K, V = qkv(rng, dtype, batch=(2, 3), T_q=6, T_k=6, d_k=4, d_v=3)
    mask = causal_mask(6)
    _, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_allclose(weights, torch_weights(Q, K, scale=1 / np.sqrt(4), mask=mask), **TOL[dtype])


def test_sdpa_causal_weights_are_exactly_zero_above_the_diagonal(rng):
    Q, K, V = qkv(rng, np.float64, batch=(2,), T_q=5, T_k=5)
    _, weights = scaled_dot_product_attention(Q, K, V, mask=causal_mask(5))
    future = np.triu(np.ones((5, 5), dtype=bool), k=1)
    assert (weights[:, future] == 0.0).all()


def test_sdpa_rectangular_mask_matches_torch(rng):
    Q, K, V = qkv(rng, np.float64, batch=(2, 3), T_q=3, T_k=5, d_k=4, d_v=2)
    mask = np.where(rng.random((3, 5)) < 0.4, -np.inf, 0.0)
    mask[:, 0] = 0.0  # every query keeps at least one key
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=t(mask)).numpy()
    np.testing.assert_allclose(out, expected, **TOL[np.float64])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [0.1, 1.0, 2.5])
def test_sdpa_custom_scale_output_matches_torch(rng, dtype, scale):
    Q, K, V = qkv(rng, dtype, batch=(2, 3), T_q=3, T_k=5, d_k=4, d_v=6)
    out, _ = scaled_dot_product_attention(Q, K, V, scale=scale)
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), scale=scale).numpy()
    np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("scale", [0.1, 1.0, 2.5])
def test_sdpa_custom_scale_weights_match_torch(rng, scale):
    Q, K, V = qkv(rng, np.float64, batch=(2, 3), T_q=3, T_k=5, d_k=4, d_v=6)
    _, weights = scaled_dot_product_attention(Q, K, V, scale=scale)
    np.testing.assert_allclose(weights, torch_weights(Q, K, scale=scale), **TOL[np.float64])


def test_sdpa_shapes_with_distinct_sizes(rng):
    Q, K, V = qkv(rng, np.float64, batch=(2, 3), T_q=3, T_k=7, d_k=4, d_v=6)
    out, weights = scaled_dot_product_attention(Q, K, V)
    assert (out.shape, weights.shape) == ((2, 3, 3, 6), (2, 3, 3, 7))


@pytest.mark.parametrize("which", [0, 1, 2, 3], ids=["Q", "K", "V", "mask"])
def test_sdpa_does_not_modify_its_inputs(rng, which):
    inputs = (*qkv(rng, np.float64, batch=(2,), T_q=4, T_k=4), causal_mask(4))
    before = inputs[which].copy()
    scaled_dot_product_attention(*inputs[:3], mask=inputs[3], scale=0.3)
    np.testing.assert_array_equal(inputs[which], before)


@pytest.fixture
def cat_sat():
    """LESSONS.md's causal cat-sat head (d_head = 2): row 3's scores are 0, 1, 2 before the scale."""
    Q = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    K = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    V = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 0.0]])
    return Q, K, V


def test_sdpa_cat_sat_causal_row_3_weights(cat_sat):
    _, weights = scaled_dot_product_attention(*cat_sat, mask=causal_mask(3))
    np.testing.assert_allclose(weights[2], [0.140, 0.284, 0.576], **WORKED)


def test_sdpa_cat_sat_causal_row_3_output(cat_sat):
    out, _ = scaled_dot_product_attention(*cat_sat, mask=causal_mask(3))
    np.testing.assert_allclose(out[2], [1.284, 0.564], **WORKED)


def test_sdpa_cat_sat_causal_row_1_is_exactly_v1(cat_sat):
    out, _ = scaled_dot_product_attention(*cat_sat, mask=causal_mask(3))
    np.testing.assert_array_equal(out[0], cat_sat[2][0])


# ---------------------------------------------------------------- ps2: attention shapes


def test_attention_shapes_exact_dict():
    assert attention_shapes(B=2, T_q=3, T_k=5, d=16, d_k=8, d_v=7) == {
        "X_q": (2, 3, 16), "X_kv": (2, 5, 16),
        "W_Q": (16, 8), "W_K": (16, 8), "W_V": (16, 7),
        "Q": (2, 3, 8), "K": (2, 5, 8), "V": (2, 5, 7),
        "S": (2, 3, 5), "A": (2, 3, 5), "O": (2, 3, 7),
    }  # fmt: skip


def test_attention_shapes_agree_with_sdpa(rng):
    shapes = attention_shapes(B=2, T_q=3, T_k=5, d=16, d_k=8, d_v=7)
    X_q, X_kv = rng.standard_normal(shapes["X_q"]), rng.standard_normal(shapes["X_kv"])
    W_Q, W_K, W_V = (rng.standard_normal(shapes[k]) for k in ("W_Q", "W_K", "W_V"))
    out, weights = scaled_dot_product_attention(X_q @ W_Q, X_kv @ W_K, X_kv @ W_V)
    assert (out.shape, weights.shape) == (shapes["O"], shapes["A"])


def test_attention_shapes_accepts_numpy_integers():
    shapes = attention_shapes(B=np.int64(2), T_q=np.int64(3), T_k=np.int32(5), d=16, d_k=8, d_v=7)
    assert shapes["S"] == (2, 3, 5)
    assert all(type(n) is int for shape in shapes.values() for n in shape)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
@pytest.mark.parametrize("arg", ["B", "T_q", "T_k", "d", "d_k", "d_v"])
def test_attention_shapes_rejects_non_positive_integers(arg, bad):
    kwargs = dict(B=2, T_q=3, T_k=5, d=16, d_k=8, d_v=7) | {arg: bad}
    with pytest.raises(ValueError):
        attention_shapes(**kwargs)


# ---------------------------------------------------------------- ps2: fused projection


def torch_fused(X, W_qkv, scale):
    W_Q, W_K, W_V = t(W_qkv).chunk(3, dim=1)
    X = t(X)
    return F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, scale=scale).numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", [(), (3,), (2, 3)])
def test_fused_self_attention_matches_torch(rng, dtype, batch):
    X = rng.standard_normal((*batch, 5, 8)).astype(dtype)
    W_qkv = (rng.standard_normal((8, 12)) / np.sqrt(8)).astype(dtype)
    out = fused_self_attention(X, W_qkv, scale=0.5)
    np.testing.assert_allclose(out, torch_fused(X, W_qkv, scale=0.5), **TOL[dtype])


def test_fused_self_attention_output_shape(rng):
    out = fused_self_attention(rng.standard_normal((2, 5, 8)), rng.standard_normal((8, 9)), scale=1.0)
    assert out.shape == (2, 5, 3)


def test_fused_self_attention_rejects_columns_not_divisible_by_3(rng):
    with pytest.raises(ValueError):
        fused_self_attention(rng.standard_normal((5, 8)), rng.standard_normal((8, 10)), scale=1.0)


def test_fused_self_attention_rejects_width_mismatch(rng):
    with pytest.raises(ValueError):
        fused_self_attention(rng.standard_normal((5, 7)), rng.standard_normal((8, 12)), scale=1.0)


# ---------------------------------------------------------------- ps2: biases


@pytest.fixture
def biased_head(rng):
    d, d_k, d_v = 6, 4, 3
    return dict(
        W_Q=rng.standard_normal((d, d_k)), W_K=rng.standard_normal((d, d_k)), W_V=rng.standard_normal((d, d_v)),
        b_Q=rng.standard_normal(d_k), b_K=rng.standard_normal(d_k), b_V=rng.standard_normal(d_v),
    )  # fmt: skip


def torch_biased(X, W_Q, W_K, W_V, b_Q, b_K, b_V):
    X = t(X)
    q, k, v = (F.linear(X, t(W.T), t(b)) for W, b in ((W_Q, b_Q), (W_K, b_K), (W_V, b_V)))
    return F.scaled_dot_product_attention(q, k, v).numpy()


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_attention_with_biases_matches_torch(rng, biased_head, batch):
    X = rng.standard_normal((*batch, 5, 6))
    out = attention_with_biases(X, **biased_head)
    np.testing.assert_allclose(out, torch_biased(X, **biased_head), **TOL[np.float64])


@pytest.mark.parametrize("name", ["b_Q", "b_V"])
def test_attention_with_biases_depends_on_b_Q_and_b_V(rng, biased_head, name):
    X = rng.standard_normal((5, 6))
    changed = biased_head | {name: biased_head[name] + 1.0}
    difference = attention_with_biases(X, **changed) - attention_with_biases(X, **biased_head)
    assert np.abs(difference).max() > 1e-3


# ---------------------------------------------------------------- ps3: circuits


@pytest.fixture
def head(rng):
    d, d_k = 6, 3
    return dict(W_Q=rng.standard_normal((d, d_k)), W_K=rng.standard_normal((d, d_k)),
                W_V=rng.standard_normal((d, d_k)), W_O=rng.standard_normal((d_k, d)))  # fmt: skip


def test_qk_circuit_matches_torch(head):
    expected = (t(head["W_Q"]) @ t(head["W_K"]).T).numpy()
    np.testing.assert_allclose(qk_circuit(head["W_Q"], head["W_K"]), expected, atol=1e-12, rtol=0)


def test_qk_circuit_gives_the_scores(rng, head):
    X = rng.standard_normal((5, 6))
    scores = (X @ head["W_Q"]) @ (X @ head["W_K"]).T
    np.testing.assert_allclose(X @ qk_circuit(head["W_Q"], head["W_K"]) @ X.T, scores, atol=1e-12, rtol=0)


def test_ov_circuit_matches_torch(head):
    expected = (t(head["W_V"]) @ t(head["W_O"])).numpy()
    np.testing.assert_allclose(ov_circuit(head["W_V"], head["W_O"]), expected, atol=1e-12, rtol=0)


def test_ov_circuit_gives_what_the_head_writes(rng, head):
    X, A = rng.standard_normal((5, 6)), softmax(rng.standard_normal((5, 5)))
    written = A @ (X @ head["W_V"]) @ head["W_O"]
    np.testing.assert_allclose(A @ X @ ov_circuit(head["W_V"], head["W_O"]), written, atol=1e-12, rtol=0)


# ---------------------------------------------------------------- ps3: multi-head attention


def torch_mha(X, W_Q, W_K, W_V, W_O, n_heads, causal):
    """Reshape into heads (..., h, T, d_head), torch SDPA, concatenate, @ W_O."""
    X = t(X)
    *batch, T, _ = X.shape

    def heads(W):
        return (X @ t(W)).reshape(*batch, T, n_heads, -1).transpose(-3, -2)

    o = F.scaled_dot_product_attention(heads(W_Q), heads(W_K), heads(W_V), is_causal=causal)
    return (o.transpose(-3, -2).reshape(*batch, T, -1) @ t(W_O)).numpy()


@pytest.fixture
def mha_weights(rng):
    d, n_heads, d_head = 8, 4, 3
    W = [rng.standard_normal((d, n_heads * d_head)) / np.sqrt(d) for _ in range(3)]
    return dict(W_Q=W[0], W_K=W[1], W_V=W[2], W_O=rng.standard_normal((n_heads * d_head, d)), n_heads=n_heads)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_multi_head_attention_matches_torch(rng, mha_weights, dtype, causal, batch):
    X = rng.standard_normal((*batch, 5, 8)).astype(dtype)
    weights = {k: (v.astype(dtype) if isinstance(v, np.ndarray) else v) for k, v in mha_weights.items()}
    out, _ = multi_head_attention(X, **weights, causal=causal)
    np.testing.assert_allclose(out, torch_mha(X, **weights, causal=causal), **TOL[dtype])


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_matches_nn_multihead_attention(rng, causal):
    d, n_heads = 8, 4  # nn.MultiheadAttention needs n_heads * d_head == d
    W_Q, W_K, W_V, W_O = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))
    X = rng.standard_normal((2, 5, d))
    m = torch.nn.MultiheadAttention(d, n_heads, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # nn.Linear stores (out, in) and computes x @ W.T: transpose ours
        m.in_proj_weight.copy_(t(np.concatenate([W_Q, W_K, W_V], axis=1).T))
        m.out_proj.weight.copy_(t(W_O.T))
        mask = t(causal_mask(5)) if causal else None
        expected, _ = m(t(X), t(X), t(X), attn_mask=mask, need_weights=False)
    out, _ = multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads=n_heads, causal=causal)
    np.testing.assert_allclose(out, expected.numpy(), **TOL[np.float64])


@pytest.mark.parametrize("h", [0, 1, 2, 3])
@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_per_head_is_head_h_through_its_rows_of_W_O(rng, mha_weights, causal, h):
    X = rng.standard_normal((2, 5, 8))
    _, per_head = multi_head_attention(X, **mha_weights, causal=causal)
    cols = slice(h * 3, (h + 1) * 3)  # d_head = 3
    one = {k: mha_weights[k][:, cols] for k in ("W_Q", "W_K", "W_V")} | {"W_O": mha_weights["W_O"][cols]}
    np.testing.assert_allclose(per_head[h], torch_mha(X, **one, n_heads=1, causal=causal), **TOL[np.float64])
