"""Properties of the reference solutions that hold for every shape and input (hypothesis)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solutions.ps1 import raw_self_attention, softmax
from solutions.ps2 import attention_with_biases, causal_mask, fused_self_attention, scaled_dot_product_attention
from solutions.ps3 import multi_head_attention, previous_token_head, qk_circuit

PROPERTY = settings(max_examples=50, deadline=None)
EXACT = dict(atol=1e-12, rtol=1e-12)  # same arithmetic up to summation order

seeds = st.integers(min_value=0, max_value=2**32 - 1)
sizes = st.integers(min_value=1, max_value=6)
batches = st.lists(st.integers(min_value=1, max_value=3), max_size=2).map(tuple)


def one_hot(indices, n):
    return np.eye(n)[indices]


# ---------------------------------------------------------------- weights are distributions


@PROPERTY
@given(S=hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=5), elements=st.floats(-1e4, 1e4)),
       data=st.data())  # fmt: skip
def test_softmax_slices_sum_to_one(S, data):
    axis = data.draw(st.integers(min_value=-S.ndim, max_value=S.ndim - 1), label="axis")
    np.testing.assert_allclose(softmax(S, axis=axis).sum(axis=axis), 1.0, atol=1e-12, rtol=0)


@PROPERTY
@given(seed=seeds, T=sizes, d=sizes)
def test_raw_self_attention_rows_sum_to_one(seed, T, d):
    X = np.random.default_rng(seed).standard_normal((T, d))
    _, weights = raw_self_attention(X)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12, rtol=0)


@PROPERTY
@given(seed=seeds, batch=batches, T_q=sizes, T_k=sizes, d_k=sizes, d_v=sizes)
def test_sdpa_rows_sum_to_one(seed, batch, T_q, T_k, d_k, d_v):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((*batch, T, w)) for T, w in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
    _, weights = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12, rtol=0)


@PROPERTY
@given(seed=seeds, batch=batches, T=sizes, d_k=sizes, d_v=sizes)
def test_sdpa_causal_rows_sum_to_one(seed, batch, T, d_k, d_v):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((*batch, T, w)) for w in (d_k, d_k, d_v))
    _, weights = scaled_dot_product_attention(Q, K, V, mask=causal_mask(T))
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12, rtol=0)


# ---------------------------------------------------------------- permutation equivariance


@PROPERTY
@given(seed=seeds, batch=batches, T=sizes, d_k=sizes, d_v=sizes)
def test_sdpa_permuting_all_tokens_permutes_the_output_rows(seed, batch, T, d_k, d_v):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((*batch, T, w)) for w in (d_k, d_k, d_v))
    perm = rng.permutation(T)
    out, _ = scaled_dot_product_attention(Q, K, V)
    permuted, _ = scaled_dot_product_attention(Q[..., perm, :], K[..., perm, :], V[..., perm, :])
    np.testing.assert_allclose(permuted, out[..., perm, :], **EXACT)


@PROPERTY
@given(seed=seeds, batch=batches, T_q=sizes, T_k=sizes, d_k=sizes, d_v=sizes)
def test_sdpa_permuting_keys_with_values_leaves_the_output_unchanged(seed, batch, T_q, T_k, d_k, d_v):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((*batch, T, w)) for T, w in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
    perm = rng.permutation(T_k)
    out, _ = scaled_dot_product_attention(Q, K, V)
    permuted, _ = scaled_dot_product_attention(Q, K[..., perm, :], V[..., perm, :])
    np.testing.assert_allclose(permuted, out, **EXACT)


@PROPERTY
@given(seed=seeds, batch=batches, T=sizes, d=sizes, h=sizes)
def test_fused_self_attention_permuting_tokens_permutes_the_output_rows(seed, batch, T, d, h):
    rng = np.random.default_rng(seed)
    X, W_qkv = rng.standard_normal((*batch, T, d)), rng.standard_normal((d, 3 * h))
    perm = rng.permutation(T)
    out = fused_self_attention(X, W_qkv, scale=1 / np.sqrt(h))
    np.testing.assert_allclose(fused_self_attention(X[..., perm, :], W_qkv, scale=1 / np.sqrt(h)), out[..., perm, :],
                               **EXACT)


# ---------------------------------------------------------------- the bias that does nothing


@PROPERTY
@given(seed=seeds, batch=batches, T=sizes, d=sizes, d_k=sizes, d_v=sizes)
def test_attention_with_biases_output_does_not_depend_on_b_K(seed, batch, T, d, d_k, d_v):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((*batch, T, d))
    W_Q, W_K, W_V = rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k)), rng.standard_normal((d, d_v))
    b_Q, b_V = rng.standard_normal(d_k), rng.standard_normal(d_v)
    first, second = 5 * rng.standard_normal(d_k), 5 * rng.standard_normal(d_k)
    np.testing.assert_allclose(
        attention_with_biases(X, W_Q, W_K, W_V, b_Q, second, b_V),
        attention_with_biases(X, W_Q, W_K, W_V, b_Q, first, b_V),
        atol=1e-10, rtol=1e-10,
    )  # fmt: skip


# ---------------------------------------------------------------- QK circuit


@st.composite
def narrow_heads(draw):
    """(seed, d, d_k) with d_k < d, so that rank <= d_k is a real constraint."""
    d = draw(st.integers(min_value=2, max_value=8))
    return draw(seeds), d, draw(st.integers(min_value=1, max_value=d - 1))


@PROPERTY
@given(head=narrow_heads())
def test_qk_circuit_has_rank_at_most_d_k(head):
    seed, d, d_k = head
    rng = np.random.default_rng(seed)
    W_QK = qk_circuit(rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k)))
    assert W_QK.shape == (d, d)
    assert np.linalg.matrix_rank(W_QK) <= d_k


@PROPERTY
@given(seed=seeds, d=sizes, d_k=sizes)
def test_qk_circuit_is_unchanged_by_an_invertible_R(seed, d, d_k):
    rng = np.random.default_rng(seed)
    W_Q, W_K = rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k))
    U, _ = np.linalg.qr(rng.standard_normal((d_k, d_k)))
    V, _ = np.linalg.qr(rng.standard_normal((d_k, d_k)))
    R = U @ np.diag(rng.uniform(0.5, 2.0, size=d_k)) @ V  # condition number <= 4
    np.testing.assert_allclose(
        qk_circuit(W_Q @ R, W_K @ np.linalg.inv(R).T), qk_circuit(W_Q, W_K), atol=1e-10, rtol=1e-10
    )


# ---------------------------------------------------------------- heads as a sum


@st.composite
def mha_inputs(draw, batch_shapes=batches):
    rng = np.random.default_rng(draw(seeds))
    batch, T, d = draw(batch_shapes), draw(sizes), draw(sizes)
    n_heads, d_head = draw(st.integers(min_value=1, max_value=4)), draw(sizes)
    X = rng.standard_normal((*batch, T, d))
    W_Q, W_K, W_V = (rng.standard_normal((d, n_heads * d_head)) for _ in range(3))
    W_O = rng.standard_normal((n_heads * d_head, d))
    return X, dict(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, n_heads=n_heads, causal=draw(st.booleans()))


@PROPERTY
@given(inputs=mha_inputs())
def test_multi_head_attention_per_head_sums_to_out(inputs):
    X, weights = inputs
    out, per_head = multi_head_attention(X, **weights)
    np.testing.assert_allclose(per_head.sum(axis=0), out, **EXACT)


@PROPERTY
@given(inputs=mha_inputs())
def test_multi_head_attention_per_head_shape(inputs):
    X, weights = inputs
    _, per_head = multi_head_attention(X, **weights)
    assert per_head.shape == (weights["n_heads"], *X.shape)


# ---------------------------------------------------------------- batch dimensions ride along


@PROPERTY
@given(seed=seeds, B=sizes, T_q=sizes, T_k=sizes, d_k=sizes, d_v=sizes)
def test_sdpa_batch_equals_stacked_sequences(seed, B, T_q, T_k, d_k, d_v):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((B, T, w)) for T, w in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
    out, _ = scaled_dot_product_attention(Q, K, V)
    stacked = np.stack([scaled_dot_product_attention(Q[b], K[b], V[b])[0] for b in range(B)])
    np.testing.assert_allclose(out, stacked, **EXACT)


@PROPERTY
@given(seed=seeds, B=sizes, T=sizes, d=sizes, h=sizes)
def test_fused_self_attention_batch_equals_stacked_sequences(seed, B, T, d, h):
    rng = np.random.default_rng(seed)
    X, W_qkv = rng.standard_normal((B, T, d)), rng.standard_normal((d, 3 * h))
    stacked = np.stack([fused_self_attention(X[b], W_qkv, scale=0.7) for b in range(B)])
    np.testing.assert_allclose(fused_self_attention(X, W_qkv, scale=0.7), stacked, **EXACT)


@PROPERTY
@given(seed=seeds, B=sizes, T=sizes, d=sizes, d_k=sizes, d_v=sizes)
def test_attention_with_biases_batch_equals_stacked_sequences(seed, B, T, d, d_k, d_v):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((B, T, d))
    W_Q, W_K, W_V = rng.standard_normal((d, d_k)), rng.standard_normal((d, d_k)), rng.standard_normal((d, d_v))
    b_Q, b_K, b_V = rng.standard_normal(d_k), rng.standard_normal(d_k), rng.standard_normal(d_v)
    params = (W_Q, W_K, W_V, b_Q, b_K, b_V)
    stacked = np.stack([attention_with_biases(X[b], *params) for b in range(B)])
    np.testing.assert_allclose(attention_with_biases(X, *params), stacked, **EXACT)


@PROPERTY
@given(inputs=mha_inputs(batch_shapes=st.tuples(sizes)))
def test_multi_head_attention_batch_equals_stacked_sequences(inputs):
    X, weights = inputs  # X (B, T, d)
    out, _ = multi_head_attention(X, **weights)
    stacked = np.stack([multi_head_attention(X_b, **weights)[0] for X_b in X])
    np.testing.assert_allclose(out, stacked, **EXACT)


# ---------------------------------------------------------------- the previous-token head


def run_previous_token_head(n_vocab, tokens):
    """The contract's grading run: [one_hot(token) | one_hot(position)], causal, default scale."""
    T = len(tokens)
    W_Q, W_K, W_V = previous_token_head(n_vocab, T)
    X = np.concatenate([one_hot(tokens, n_vocab), np.eye(T)], axis=1)  # (T, n_vocab + T)
    return scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, mask=causal_mask(T))


def random_sequence(T):
    """n_vocab and tokens drawn per T, from a generator seeded by T."""
    rng = np.random.default_rng(1000 + T)
    n_vocab = int(rng.integers(1, 33))
    return n_vocab, rng.integers(0, n_vocab, size=T)


@st.composite
def token_sequences(draw):
    n_vocab, T = draw(st.integers(min_value=1, max_value=40)), draw(st.integers(min_value=1, max_value=64))
    tokens = draw(st.lists(st.integers(min_value=0, max_value=n_vocab - 1), min_size=T, max_size=T))
    return n_vocab, np.array(tokens)


@pytest.mark.parametrize("T", [1, 2, 17, 64])
def test_previous_token_head_shapes(T):
    W_Q, W_K, W_V = previous_token_head(n_vocab=5, T=T)
    assert (W_Q.shape, W_K.shape, W_V.shape) == ((5 + T, T), (5 + T, T), (5 + T, 5))


@pytest.mark.parametrize("T", range(1, 65))
def test_previous_token_head_puts_weight_on_the_previous_position(T):
    """For T = 1 nothing is graded; the head must still build and run."""
    _, weights = run_previous_token_head(*random_sequence(T))
    assert (np.diagonal(weights, offset=-1) >= 0.99).all()


@pytest.mark.parametrize("T", range(1, 65))
def test_previous_token_head_copies_the_previous_token(T):
    n_vocab, tokens = random_sequence(T)
    out, _ = run_previous_token_head(n_vocab, tokens)
    np.testing.assert_allclose(out[1:], one_hot(tokens[:-1], n_vocab), atol=0.01, rtol=0)


@PROPERTY
@given(sequence=token_sequences())
def test_previous_token_head_puts_weight_on_the_previous_position_for_any_tokens(sequence):
    _, weights = run_previous_token_head(*sequence)
    assert (np.diagonal(weights, offset=-1) >= 0.99).all()


@PROPERTY
@given(sequence=token_sequences())
def test_previous_token_head_copies_the_previous_token_for_any_tokens(sequence):
    n_vocab, tokens = sequence
    out, _ = run_previous_token_head(n_vocab, tokens)
    np.testing.assert_allclose(out[1:], one_hot(tokens[:-1], n_vocab), atol=0.01, rtol=0)
