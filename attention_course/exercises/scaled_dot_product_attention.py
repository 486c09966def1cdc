"""scaled_dot_product_attention(Q, K, V, mask=None, scale=None) -> (out, weights)."""
import numpy as np

from autograder import worked_examples
from autograder.checks import (Call, Fail, Spec, Verdict, as_array, expect_close, failed, first_of,
                               leaves_inputs_unchanged, matches_reference, matches_worked, parts, returned)
from autograder.exercise import Boundary, Exercise, shared
from ..worked_inputs import CAUSAL_MASK_3, K_CAT_SAT, Q_CAT_SAT, V_CAT_SAT, WARM_JACKET_KEYS, WARM_QUERY

F = "scaled_dot_product_attention"


def _attention(outcome):
    out, weights = parts(returned(outcome, F), 2, F, "out, weights")
    return as_array(out, F, "out"), as_array(weights, F, "weights")


def _warm_jacket(call):
    def judge(outcomes, ref):
        out, weights = _attention(outcomes[0])
        want_out, want_weights = worked_examples.answer(call)
        if weights.shape != want_weights.shape or out.shape != want_out.shape:
            raise Fail(f"with one query and two keys expected weights {want_weights.shape} and out {want_out.shape}; "
                       f"got {weights.shape} and {out.shape}.")
        expect_close(weights, want_weights, F, "weights for warm's query", atol=5e-4,
                     expected_note="about 0.12, 0.88")
        expect_close(out, want_out, F, "output for warm's query", atol=5e-4,
                     expected_note="about 0.12, 0.88")
        return Verdict(True, "warm attends 0.12 / 0.88 to itself and jacket, as in the worked example.")
    return judge


def _cat_sat(call):
    def judge(outcomes, ref):
        out, weights = _attention(outcomes[0])
        want_out, want_weights = worked_examples.answer(call)
        if weights.shape != (3, 3) or out.shape != (3, 2):
            raise Fail(f"with 3 tokens and values of width 2 expected weights (3, 3) and out (3, 2); got "
                       f"{weights.shape} and {out.shape}.")
        # within the worked example's 3 decimals, as in the notebook
        expect_close(weights[2], want_weights[2], F, "weights of row 2, sat", atol=5e-4,
                     expected_note="about 0.140, 0.284, 0.576")
        expect_close(out[2], want_out[2], F, "output of row 2, sat", atol=5e-4,
                     expected_note="about 1.284, 0.564")
        expect_close(weights, want_weights, F, "weights", atol=5e-4,
                     expected_note="row 0 sees only itself, row 1 the and cat")
        expect_close(weights[0], want_weights[0], F, "weights of row 0", atol=1e-9,
                     expected_note="masked, exactly 1, 0, 0")
        expect_close(out, want_out, F, "output", atol=5e-4,
                     expected_note="row 0 is exactly v_the = (1, 2)")
        return Verdict(True, "the causal 'cat sat' head matches the worked example.")
    return judge


def _shapes(call):
    Q, K, V = call.args[:3]
    d_k = Q.shape[-1]
    # What softmax(Q K^T / sqrt(d_k)) means, without computing it: in each row, the log-ratio
    # of two keys' weights is the difference of their scaled scores. Rows that merely sum to
    # 1 (uniform weights) or have the right shape (zeros) do not have it.
    unscaled = Q @ np.swapaxes(K, -1, -2)
    diffs = unscaled - unscaled[..., :1]

    def judge(outcomes, ref):
        out, weights = _attention(outcomes[0])
        want_w, want_o = Q.shape[:-1] + K.shape[-2:-1], Q.shape[:-1] + V.shape[-1:]
        if weights.shape != want_w or out.shape != want_o:
            mistake = "shape_tq_tk_swapped" if weights.shape == want_w[:-2] + want_w[:-3:-1] else None
            if (weights.shape == want_w and out.shape == Q.shape[:-1] + K.shape[-1:]
                    and np.isfinite(out).all() and np.allclose(out, weights @ K, atol=1e-6)):
                mistake = "values_not_projected"  # blended the keys: d_k wide, not d_v
            raise failed(f"with Q {Q.shape}, K {K.shape}, V {V.shape} expected weights {want_w} and "
                         f"out {want_o}; got {weights.shape} and {out.shape}.", mistake)
        finite = bool(np.isfinite(weights).all() and np.isfinite(out).all())
        if not (finite and np.allclose(weights.sum(-1), 1.0, atol=1e-5, rtol=0)):
            wrong_axis = finite and bool(np.allclose(weights.sum(-2), 1.0, atol=1e-5, rtol=0))
            raise Fail("each row of weights should be finite and sum to 1 over the keys (the last axis).",
                       "softmax_wrong_axis" if wrong_axis else None)
        if not (weights > 0).all():
            raise Fail("every weight should be positive here: no key is masked, and softmax gives each a share.")
        with np.errstate(all="ignore"):
            logs = np.log(weights)
        got = logs - logs[..., :1]
        if not np.allclose(got, diffs / np.sqrt(d_k), atol=1e-6, rtol=1e-6):
            # Fit the multiplier the student applied to the scores, to name a wrong scale.
            used = float((got * diffs).sum() / (diffs * diffs).sum())
            mistake = None
            if np.allclose(got, diffs * used, atol=1e-6, rtol=1e-6):
                mistake = ("scale_by_dk" if np.isclose(used, 1 / d_k, rtol=1e-6) else
                           "missing_scale" if np.isclose(used, 1.0, rtol=1e-6) else None)
            text = (f"your weights are not softmax(Q K^T / sqrt(d_k)) with d_k = {d_k}: in each row the log-ratio "
                    "of two keys' weights should be the difference of their scores times 1/sqrt(d_k).")
            raise failed(text, mistake, numbers={"d_k": d_k})
        expect_close(out, weights @ V, F, "output", Q, K, V, expected_note="weights @ V")
        return Verdict(True, "shapes are right, every row of weights sums to 1, and the weights are softmax "
                             "of the scaled scores.")
    return judge


def _uniform(call):
    """With scale 0 every score is 0: each row spreads its weight evenly over the keys its
    mask lets it see, and its output is their values' mean. Known without a reference."""
    V, mask = call.args[2], call.kwargs["mask"]
    seen = np.isfinite(mask).astype(np.float64)
    want_w = seen / seen.sum(-1, keepdims=True)

    def judge(outcomes, ref):
        out, weights = _attention(outcomes[0])
        expect_close(weights, want_w, F, "weights with scale=0.0", *call.args[:3],
                     expected_note="row i is 1/(i + 1) on keys 0..i")
        expect_close(out, want_w @ V, F, "output with scale=0.0", *call.args[:3],
                     expected_note="row i is the mean of values 0..i")
        return Verdict(True, "scale=0.0 is honoured: every visible key gets the same weight.")
    return judge


@shared
def _visible():
    """The checks on the notebook's worked examples: the same for every student."""
    c_warm = Call(F, (WARM_QUERY[None, :], WARM_JACKET_KEYS, WARM_JACKET_KEYS), {"scale": 1.0})
    c_cat = Call(F, (Q_CAT_SAT, K_CAT_SAT, V_CAT_SAT), {"mask": CAUSAL_MASK_3})
    # A shared extra coordinate of 40 adds 1600 to every score: exp() overflows past 709
    # without the max shift, and the weights stay those of the small scores, not one-hot.
    loud = np.full((3, 1), 40.0)
    c_loud = Call(F, (np.hstack([Q_CAT_SAT, loud]), np.hstack([K_CAT_SAT, loud]), V_CAT_SAT))
    c_zero = Call(F, (Q_CAT_SAT, K_CAT_SAT, V_CAT_SAT), {"mask": CAUSAL_MASK_3, "scale": 0.0})
    # The cat sat hidden by -1e9 rather than -inf: a mask is added, whatever its numbers.
    c_finite = Call(F, (Q_CAT_SAT, K_CAT_SAT, V_CAT_SAT), {"mask": np.where(np.isinf(CAUSAL_MASK_3), -1e9, 0.0)})
    # Query 0 scores 10000.5 on the key its mask hides and 0 on the one it sees: the hidden key
    # must get weight exactly 0 however it scores, which a finite fill (-1e4 leaves it 0.5
    # ahead) or a softmax taken before the mask and renormalised after (0/0 here) does not give.
    c_dominant = Call(F, (np.array([[1.0], [2e-4]]), np.array([[0.0], [10000.5]]), np.array([[1.0, 0.0], [0.0, 1.0]])),
                      {"mask": CAUSAL_MASK_3[:2, :2], "scale": 1.0})
    vis = np.random.default_rng(7)
    c_shape = Call(F, (vis.standard_normal((2, 3, 4)), vis.standard_normal((2, 5, 4)), vis.standard_normal((2, 5, 6))))
    return [
        Spec("warm jacket", 1, visible=True).bind((c_warm,), _warm_jacket(c_warm)),
        Spec("the causal cat sat", 1, visible=True).bind((c_cat,), _cat_sat(c_cat)),
        Spec("shapes with a batch and T_q != T_k", 1, visible=True).bind((c_shape,), _shapes(c_shape)),
        Spec("scores over 1000 stay finite", 1, visible=True).bind(
            (c_loud, c_cat), matches_worked(c_loud, first_of(1), "weights", loud=True)),
        Spec("scale = 0.0 gives uniform weights", 1, visible=True).bind((c_zero,), _uniform(c_zero)),
        Spec("a finite mask (-1e9) hides keys as -inf does", 1, visible=True).bind(
            (c_finite,), matches_worked(c_finite, first_of(1), "weights with a mask of 0 and -1e9")),
        Spec("a hidden key gets weight 0 however high it scores", 1, visible=True).bind(
            (c_dominant,), matches_worked(c_dominant, first_of(1), "weights",
                                                   expected_note="query 0's hidden key scores 10000.5")),
    ]


def checks(rng):
    B, H, T, d_k, d_v = 2, 3, 6, 16, 5
    args = (rng.standard_normal((B, H, T, d_k)), rng.standard_normal((B, H, T, d_k)),
            rng.standard_normal((B, H, T, d_v)))
    c_plain = Call(F, args)
    # An additive mask that hides a random half of the keys (each query keeps itself): not
    # symmetric, so a mask applied transposed, or not at all, gives other weights.
    hidden = rng.random((T, T)) < 0.5
    hidden[np.arange(T), np.arange(T)] = False
    c_masked = Call(F, args, {"mask": np.where(hidden, -np.inf, 0.0)})
    c_scale = Call(F, args, {"scale": 0.05})
    T_q, T_k = 4, 7
    c_cross = Call(F, tuple(a.astype(np.float32) for a in (
        rng.standard_normal((2, T_q, 8)), rng.standard_normal((2, T_k, 8)), rng.standard_normal((2, T_k, 3)))))
    c_big = Call(F, (rng.standard_normal((3, 4)) * 300, rng.standard_normal((5, 4)) * 300, rng.standard_normal((5, 2))))
    weights, out = first_of(1), first_of(0)
    heat = lambda w: w[0, 0]  # noqa: E731 - first batch, first head
    return [
        *_visible(),
        Spec("weights match the reference", 2).bind((c_plain,), matches_reference(c_plain, weights, "weights", heat)),
        Spec("output matches the reference", 1).bind((c_plain,), matches_reference(c_plain, out, "out")),
        Spec("an additive mask is applied", 2).bind((c_masked,), matches_reference(c_masked, weights, "weights", heat)),
        Spec("an explicit scale is used", 1).bind((c_scale,), matches_reference(c_scale, weights, "weights")),
        Spec("float32 cross-attention (T_q != T_k, d_k != d_v)", 1).bind(
            (c_cross,), matches_reference(c_cross, out, "out")),
        Spec("large scores stay finite", 1).bind((c_big,), matches_reference(c_big, weights, "weights")),
        leaves_inputs_unchanged(c_masked),
    ]


def _d_k(call):
    """d_k, for explanations: K is (..., T_k, d_k)."""
    return {"d_k": call.args[1].shape[-1]}


DOMAIN = (
    Boundary("Q, K, V", "(..., T_q, d_k), (..., T_k, d_k), (..., T_k, d_v): batch axes, T_q != T_k, d_k != d_v",
             ("shapes with a batch and T_q != T_k", "weights match the reference",
              "float32 cross-attention (T_q != T_k, d_k != d_v)")),
    Boundary("scale", "None: 1/sqrt(d_k)", ("the causal cat sat", "weights match the reference")),
    Boundary("scale", "given: 1.0, any other number, and 0.0, which is not None",
             ("warm jacket", "an explicit scale is used", "scale = 0.0 gives uniform weights")),
    Boundary("mask", "None, or 0 and -inf, added, broadcast over the batch axes",
             ("the causal cat sat", "an additive mask is applied")),
    Boundary("mask", "finite large negatives (-1e9) hide keys too", ("a finite mask (-1e9) hides keys as -inf does",)),
    Boundary("mask", "a hidden key whose score would dominate its row",
             ("a hidden key gets weight 0 however high it scores",)),
    Boundary("Q, K", "scores past exp()'s 709", ("scores over 1000 stay finite", "large scores stay finite")),
    Boundary("dtype", "float64 and float32",
             ("weights match the reference", "float32 cross-attention (T_q != T_k, d_k != d_v)")),
    Boundary("inputs", "left unchanged, the mask included", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps2", build=checks, numbers=_d_k, domain=DOMAIN)
