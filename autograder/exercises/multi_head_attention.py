"""multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False) -> (out, per_head)."""
import numpy as np

from ..checks import (Call, Check, Fail, Verdict, as_array, first_of, matches_reference, parts, returned,
                      leaves_inputs_unchanged)

F = "multi_head_attention"


def _inputs(rng, lead, d, n_heads, d_head, dtype=np.float64):
    n = rng.standard_normal
    w = n((d, n_heads * d_head)) / np.sqrt(d)
    return tuple(a.astype(dtype) for a in (n(lead + (d,)), w, n(w.shape) / np.sqrt(d), n(w.shape) / np.sqrt(d),
                                           n((n_heads * d_head, d)) / np.sqrt(d))) + (n_heads,)


def _sum_of_heads(call):
    X, n_heads = call.args[0], call.args[5]

    def judge(outcomes, ref):
        out, per_head = parts(returned(outcomes[0], F), 2, F, "out, per_head")
        out, per_head = as_array(out, F, "out"), as_array(per_head, F, "per_head")
        if out.shape != X.shape:
            raise Fail(f"out should have the shape of X, {X.shape}; yours has {out.shape}.")
        if per_head.shape != (n_heads,) + X.shape:
            raise Fail(f"per_head should have shape (n_heads, ..., T, d) = {(n_heads,) + X.shape}; yours has {per_head.shape}.")
        if not np.allclose(per_head.sum(0), out, atol=1e-6):
            raise Fail("per_head.sum(0) should equal out: each head's part goes through its own block of "
                       "rows of W_O, and the blocks add up to the concatenate-then-project result.")
        return Verdict(True, "shapes are right and the heads' parts add up to out.")
    return judge


def checks(rng):
    c_vis = Call(F, _inputs(np.random.default_rng(9), (2, 5), 8, 2, 4))
    args = _inputs(rng, (2, 6), 12, 3, 4)
    c_ref = Call(F, args)
    c_causal = Call(F, args, {"causal": True})
    c_32 = Call(F, _inputs(rng, (5,), 8, 4, 2, np.float32), {"causal": True})
    out, per_head = first_of(0), first_of(1)
    return [
        Check(f"{F}: the heads' parts add up to out", 1, (c_vis,), _sum_of_heads(c_vis), visible=True),
        Check(f"{F}: matches the reference", 2, (c_ref,), matches_reference(c_ref, out, "out")),
        Check(f"{F}: causal", 2, (c_causal,), matches_reference(c_causal, out, "out")),
        Check(f"{F}: each head's own contribution", 1, (c_ref,), matches_reference(c_ref, per_head, "per_head")),
        Check(f"{F}: float32 input", 1, (c_32,), matches_reference(c_32, out, "out")),
        leaves_inputs_unchanged(c_ref),
    ]
