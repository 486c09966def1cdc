"""attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V): the key bias changes nothing."""
import numpy as np

from ..checks import Call, Check, Fail, Verdict, as_array, matches_reference, returned, leaves_inputs_unchanged

F = "attention_with_biases"


def _bk_free(call: Call):
    X, W_V = call.args[0], call.args[3]
    want = X.shape[:-1] + W_V.shape[-1:]  # (..., T, d_v)

    def judge(outcomes, ref):
        a = as_array(returned(outcomes[0], F), F)
        b = as_array(returned(outcomes[1], F), F)
        if a.shape != want or np.ptp(a) == 0:
            # A constant is b_K-free too: the property counts only for a real output.
            raise Fail(f"{F} should return (..., T, d_v) = {want} values that depend on the input; "
                       f"yours has shape {a.shape}" + (" and is constant." if a.shape == want else "."))
        if a.shape != b.shape or not np.allclose(a, b, atol=1e-6, rtol=1e-6):
            raise Fail("changing only b_K changed your output. Every query's score with every key moves "
                       "by the same amount q·b_K, and softmax ignores a constant shift of a row, so b_K "
                       "should make no difference. Check where you add the biases and what you scale.")
        return Verdict(True, "the output does not depend on b_K.")
    return judge


def _inputs(rng, shape, d, d_k, d_v, dtype=np.float64):
    n = rng.standard_normal
    return tuple(a.astype(dtype) for a in (n(shape + (d,)), n((d, d_k)), n((d, d_k)), n((d, d_v)),
                                           n(d_k), n(d_k), n(d_v)))


def _with_b_k(args, b_K):
    return args[:5] + (b_K,) + args[6:]


def checks(rng):
    vis = _inputs(np.random.default_rng(11), (4,), 3, 2, 3)
    c_vis1, c_vis2 = Call(F, vis), Call(F, _with_b_k(vis, vis[5] + 5.0))
    args = _inputs(rng, (2, 5), 6, 4, 3)
    square = _inputs(rng, (5,), 4, 4, 4)
    c_ref, c_sq = Call(F, args), Call(F, square)
    c_bk = Call(F, _with_b_k(args, rng.standard_normal(4) * 10))
    c_32 = Call(F, _inputs(rng, (5,), 6, 4, 3, np.float32))
    return [
        Check(f"{F}: b_K makes no difference", 1, (c_vis1, c_vis2), _bk_free(c_vis1), visible=True),
        Check(f"{F}: matches the reference on a batch", 2, (c_ref,), matches_reference(c_ref)),
        Check(f"{F}: square projections", 1, (c_sq,), matches_reference(c_sq)),
        Check(f"{F}: b_K makes no difference on other inputs", 1, (c_ref, c_bk), _bk_free(c_ref)),
        Check(f"{F}: float32 input", 1, (c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]
