"""fused_self_attention(X, W_qkv, scale): one projection, split [Q | K | V], no mask."""
import numpy as np

from autograder.checks import (Call, Spec, Verdict, as_array, each, expect_close, failed, leaves_inputs_unchanged,
                               matches_reference, matches_worked, provided, raised, returned)
from autograder.exercise import Boundary, Exercise, shared

F = "fused_self_attention"
TARGETS = [1, 2, 1]  # the token each token attends to in the sharp example


def _sharp_inputs():
    """A worked example whose answer needs no reference: tokens 0, 1, 2 attend to 1, 2, 1.

    X holds one-hot tokens, so Q = 100 P (P[i] the one-hot of i's target) and K = I: every
    row's scores are 50 for its target and 0 elsewhere (scale 0.5), a gap that leaves e^-50
    for the others. Each output row is then its target's value row. A uniform or identity
    answer, a split in another order, blended keys or inputs, and a softmax over the query
    axis (P is not a permutation) all give something else.
    """
    T, d, h = 3, 4, 3
    W = np.random.default_rng(4).standard_normal((d, 3 * h))
    W[:T, :h] = 100.0 * np.eye(T)[TARGETS]  # W_Q: row i asks for key TARGETS[i]
    W[:T, h:2 * h] = np.eye(T)  # W_K: a key says which token it is
    X = np.eye(T, d)
    expected = (X @ W[:, 2 * h:])[TARGETS]  # row i: the value of token TARGETS[i]
    return Call(F, (X, W, 0.5)), expected


def _sharp(call, expected):
    X = call.args[0]

    def judge(outcomes, ref):
        got = as_array(returned(outcomes[0], F), F, "the output")
        if got.shape != expected.shape:
            mistake = "values_not_projected" if got.shape == X.shape and np.allclose(got, X[TARGETS]) else None
            text = (f"with a sharp head (tokens 0, 1, 2 attend to 1, 2, 1) on X of shape {X.shape}, the output "
                    f"should be (T, h) = {expected.shape}, one value row per token; yours has shape {got.shape}.")
            raise failed(text, mistake)
        expect_close(got, expected, F, "output of a sharp head", X,
                     expected_note="tokens 0, 1, 2 copy the values of 1, 2, 1")
        return Verdict(True, "a sharp head copies each token's target value.")
    return judge


def _uniform_keys(call, why="W_K = 0"):
    X, W_qkv, _ = call.args
    h = W_qkv.shape[1] // 3
    # With W_K = 0 (or a scale of 0) every score is 0, so each row of weights is uniform and
    # every output row is the mean of the values: a case whose answer needs no reference.
    expected = np.broadcast_to((X @ W_qkv[:, 2 * h:]).mean(-2, keepdims=True), X.shape[:-1] + (h,))
    raw_mean = np.broadcast_to(X.mean(-2, keepdims=True), X.shape)

    def judge(outcomes, ref):
        got = as_array(returned(outcomes[0], F), F, "the output")
        if got.shape == raw_mean.shape and np.isfinite(got).all() and np.allclose(got, raw_mean, atol=1e-6):
            # Uniform weights blend the mean of whatever is blended: here, X itself.
            raise failed(f"With {why} your output is the mean of X's rows, shape {got.shape}; it should be the "
                         f"mean of the values X @ W_V, shape {expected.shape}.", "values_not_projected")
        expect_close(got, expected, F, f"output when {why}", X, expected_note="every row is the mean value")
        return Verdict(True, f"with {why} every token gets the mean of the values.")
    return judge


def _raises(why):
    return lambda o, ref: (raised(o[0], F, "ValueError", why), Verdict(True, "ValueError raised."))[1]


@shared
def _visible():
    """The checks on the notebook's worked examples: the same for every student."""
    vis = np.random.default_rng(3)
    d, h = 4, 2
    W_vis = vis.standard_normal((d, 3 * h))
    W_vis[:, h:2 * h] = 0.0
    c_vis = Call(F, (vis.standard_normal((5, d)), W_vis, 0.7))
    c_cols = Call(F, (vis.standard_normal((3, d)), vis.standard_normal((d, 7)), 1.0))
    c_width = Call(F, (vis.standard_normal((3, d + 1)), vis.standard_normal((d, 6)), 1.0))
    c_sharp, sharp = _sharp_inputs()
    c_zero = Call(F, (vis.standard_normal((4, d)), vis.standard_normal((d, 3 * h)), 0.0))
    # Generic weights and a scale that is neither 1 nor 1/sqrt(h): a split in another order,
    # a softmax over the queries, a scale ignored or raw values each give other numbers.
    worked = np.random.default_rng(12)
    c_worked = Call(F, (worked.standard_normal((4, 3)), worked.standard_normal((3, 6)), 0.5))
    return [
        # Uniform weights are right when W_K = 0: the check counts only with a sharp head right too.
        Spec("W_K = 0 gives uniform weights", 1, visible=True).bind(
            (c_vis, c_sharp), provided(_uniform_keys(c_vis), _sharp(c_sharp, sharp),
                "this check counts once a head that does not attend uniformly is right too, and it is not:")),
        # Raising is what a stub that checks shapes does: it counts only with real output too.
        Spec("rejects a W_qkv that cannot be split in three or does not fit X", 1, visible=True).bind(
            (c_cols, c_width, c_sharp), provided(
                each(_raises("when W_qkv has 7 columns"), _raises("when X is 5 wide but W_qkv has 4 rows")),
                _sharp(c_sharp, sharp),
                "this check counts once the output for a W_qkv that fits is right too, and it is not:")),
        Spec("a worked example: 4 tokens, h = 2, scale 0.5", 1, visible=True).bind(
            (c_worked,), matches_worked(c_worked)),
        Spec("scale = 0.0 gives uniform weights", 1, visible=True).bind(
            (c_zero, c_sharp), provided(_uniform_keys(c_zero, "scale = 0.0"), _sharp(c_sharp, sharp),
                "this check counts once a head that does not attend uniformly is right too, and it is not:")),
    ]


def checks(rng):
    d, h, T = 8, 4, 6
    X, W = rng.standard_normal((2, T, d)), rng.standard_normal((d, 3 * h))
    c_ref = Call(F, (X, W, 1 / np.sqrt(h)))
    c_scale = Call(F, (X, W, 0.9))
    c_32 = Call(F, (rng.standard_normal((T, d)).astype(np.float32),
                    rng.standard_normal((d, 3 * h)).astype(np.float32), 0.5))
    return [
        *_visible(),
        Spec("matches the reference on a batch", 3).bind((c_ref,), matches_reference(c_ref)),
        Spec("uses the scale it is given", 1).bind((c_scale,), matches_reference(c_scale)),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]


DOMAIN = (
    Boundary("X", "(..., T, d): batch axes", ("matches the reference on a batch",)),
    Boundary("W_qkv", "(d, 3h): columns a multiple of 3, rows X's width; else ValueError",
             ("rejects a W_qkv that cannot be split in three or does not fit X",)),
    Boundary("scale", "any number, 0.0 included (uniform weights)",
             ("a worked example: 4 tokens, h = 2, scale 0.5", "uses the scale it is given",
              "scale = 0.0 gives uniform weights")),
    Boundary("dtype", "float64 and float32", ("matches the reference on a batch", "float32 input")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps2", build=checks, domain=DOMAIN)
