"""fused_self_attention(X, W_qkv, scale): one projection, split [Q | K | V], no mask."""
import numpy as np

from ..checks import Call, Check, Verdict, each, expect_close, matches_reference, raised, returned, leaves_inputs_unchanged

F = "fused_self_attention"


def _uniform_keys(call):
    X, W_qkv, _ = call.args
    h = W_qkv.shape[1] // 3
    # With W_K = 0 every score is 0, so each row of weights is uniform and every output
    # row is the mean of the values: a case whose answer needs no reference.
    expected = np.broadcast_to((X @ W_qkv[:, 2 * h:]).mean(-2, keepdims=True), X.shape[:-1] + (h,))

    def judge(outcomes, ref):
        expect_close(returned(outcomes[0], F), expected, F, "output when W_K = 0 (every row: the mean value)", X)
        return Verdict(True, "with W_K = 0 every token gets the mean of the values.")
    return judge


def _raises(why):
    return lambda o, ref: (raised(o[0], F, "ValueError", why), Verdict(True, "ValueError raised."))[1]


def checks(rng):
    vis = np.random.default_rng(3)
    d, h = 4, 2
    W_vis = vis.standard_normal((d, 3 * h))
    W_vis[:, h:2 * h] = 0.0
    c_vis = Call(F, (vis.standard_normal((5, d)), W_vis, 0.7))
    c_cols = Call(F, (vis.standard_normal((3, d)), vis.standard_normal((d, 7)), 1.0))
    c_width = Call(F, (vis.standard_normal((3, d + 1)), vis.standard_normal((d, 6)), 1.0))

    d, h, T = 8, 4, 6
    X, W = rng.standard_normal((2, T, d)), rng.standard_normal((d, 3 * h))
    c_ref = Call(F, (X, W, 1 / np.sqrt(h)))
    c_scale = Call(F, (X, W, 0.9))
    c_32 = Call(F, (rng.standard_normal((T, d)).astype(np.float32), rng.standard_normal((d, 3 * h)).astype(np.float32), 0.5))
    return [
        Check(f"{F}: W_K = 0 gives uniform weights", 1, (c_vis,), _uniform_keys(c_vis), visible=True),
        Check(f"{F}: rejects a W_qkv that cannot be split in three or does not fit X", 1, (c_cols, c_width),
              each(_raises("when W_qkv has 7 columns"), _raises("when X is 5 wide but W_qkv has 4 rows")), visible=True),
        Check(f"{F}: matches the reference on a batch", 3, (c_ref,), matches_reference(c_ref)),
        Check(f"{F}: uses the scale it is given", 1, (c_scale,), matches_reference(c_scale)),
        Check(f"{F}: float32 input", 1, (c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]
