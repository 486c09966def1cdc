"""multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=False) -> (out, per_head)."""
import numpy as np

from autograder.checks import (Call, Fail, Spec, Verdict, as_array, expect_close, first_of,
                               leaves_inputs_unchanged, matches_reference, matches_worked, parts, returned)
from autograder.exercise import Boundary, Exercise, shared

F = "multi_head_attention"


def _inputs(rng, lead, d, n_heads, d_head, dtype=np.float64):
    n = rng.standard_normal
    w = n((d, n_heads * d_head)) / np.sqrt(d)
    return tuple(a.astype(dtype) for a in (n(lead + (d,)), w, n(w.shape) / np.sqrt(d), n(w.shape) / np.sqrt(d),
                                           n((n_heads * d_head, d)) / np.sqrt(d))) + (n_heads,)


def _sharp_inputs():
    """The visible check's inputs, built so that each head's part is known without a reference.

    Tokens are one-hot (each sequence holds the 4 tokens once, in its own order); head 0's
    query for token k asks for token k + 1 (mod 4), head 1's for token 0, with a score gap
    of 40 after the 1/sqrt(d_head) scale. So head h copies its target's value:
    per_head[h] = X @ P_h @ W_V[:, block h] @ W_O[block h, :], P_h the map k -> target.
    Zeros, uniform or identity weights, heads swapped or summed wrong, and a softmax over
    the query axis (head 1's map is not a permutation) all differ.
    """
    n_tok, d, n_heads, d_head = 4, 8, 2, 4
    n = np.random.default_rng(9).standard_normal
    W_Q, W_K = n((d, n_heads * d_head)), n((d, n_heads * d_head))
    W_V, W_O = n((d, n_heads * d_head)) / np.sqrt(d), n((n_heads * d_head, d)) / np.sqrt(d)
    P = [np.eye(d), np.eye(d)]
    for h, targets in enumerate(([1, 2, 3, 0], [0, 0, 0, 0])):
        block = slice(h * d_head, (h + 1) * d_head)
        target = np.eye(n_tok)[targets]  # row k: one-hot of token k's target
        W_Q[:n_tok, block] = 40.0 * np.sqrt(d_head) * target
        W_K[:n_tok, block] = np.eye(n_tok)
        P[h] = np.zeros((d, d))
        P[h][:n_tok, :n_tok] = target
    X = np.stack([np.eye(n_tok, d), np.eye(n_tok, d)[[2, 0, 3, 1]]])  # (2, 4, 8)
    per_head = np.stack([X @ P[h] @ W_V[:, h * d_head:(h + 1) * d_head] @ W_O[h * d_head:(h + 1) * d_head]
                         for h in range(n_heads)])
    return (X, W_Q, W_K, W_V, W_O, n_heads), per_head


def _sum_of_heads(call, expected):
    X, n_heads = call.args[0], call.args[5]

    def judge(outcomes, ref):
        out, per_head = parts(returned(outcomes[0], F), 2, F, "out, per_head")
        out, per_head = as_array(out, F, "out"), as_array(per_head, F, "per_head")
        if out.shape != X.shape:
            raise Fail(f"out should have the shape of X, {X.shape}; yours has {out.shape}.")
        if per_head.shape != (n_heads,) + X.shape:
            raise Fail(f"per_head should have shape (n_heads, ..., T, d) = {(n_heads,) + X.shape}; "
                       f"yours has {per_head.shape}.")
        if not (np.isfinite(out).all() and np.isfinite(per_head).all()
                and np.allclose(per_head.sum(0), out, atol=1e-6, rtol=1e-6)):
            raise Fail("per_head.sum(0) should equal out: each head's part goes through its own block of "
                       "rows of W_O, and the blocks add up to the concatenate-then-project result.")
        # Adding up is what zeros do too: the check counts only for the right parts of a head
        # whose answer is known.
        expect_close(per_head, expected, F, "per_head", X,
                     expected_note="head 0 copies the next token's value, head 1 token 0's")
        return Verdict(True, "shapes are right and the heads' parts add up to out.")
    return judge


@shared
def _visible():
    """The checks on the notebook's worked examples: the same for every student."""
    vis, vis_per_head = _sharp_inputs()
    c_vis = Call(F, vis)
    # d_head = 4, d_model = 8: scaling by 1/sqrt(d_model), by 1/d_head or not at all, the
    # causal flag ignored or the mask turned round each give other numbers.
    c_worked = Call(F, _inputs(np.random.default_rng(14), (4,), 8, 2, 4), {"causal": True})
    # Heads need not split d_model: 2 heads of width 4 in d_model = 6.
    c_uneven = Call(F, _inputs(np.random.default_rng(15), (4,), 6, 2, 4))
    out = first_of(0)
    return [
        Spec("the heads' parts add up to out", 1, visible=True).bind((c_vis,), _sum_of_heads(c_vis, vis_per_head)),
        Spec("a worked causal example: 2 heads of width 4 in d_model = 8", 1, visible=True).bind(
            (c_worked,), matches_worked(c_worked, out, "out")),
        Spec("heads wider than d_model / n_heads: 2 heads of width 4 in d_model = 6", 1, visible=True).bind(
            (c_uneven,), matches_worked(c_uneven, out, "out")),
    ]


def checks(rng):
    args = _inputs(rng, (2, 6), 12, 3, 4)
    c_ref = Call(F, args)
    c_causal = Call(F, args, {"causal": True})
    c_32 = Call(F, _inputs(rng, (5,), 8, 4, 2, np.float32), {"causal": True})
    c_narrow = Call(F, _inputs(rng, (2, 5), 10, 2, 3), {"causal": True})  # n_heads * d_head = 6, not 10
    out, per_head = first_of(0), first_of(1)
    return [
        *_visible(),
        Spec("matches the reference", 2).bind((c_ref,), matches_reference(c_ref, out, "out")),
        Spec("causal", 2).bind((c_causal,), matches_reference(c_causal, out, "out")),
        Spec("each head's own contribution", 1).bind((c_ref,), matches_reference(c_ref, per_head, "per_head")),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32, out, "out")),
        Spec("heads narrower than d_model / n_heads", 1).bind((c_narrow,), matches_reference(c_narrow, out, "out")),
        leaves_inputs_unchanged(c_ref),
    ]

def _d_head(call):
    """Each head's d_k, for explanations: W_Q is (d, n_heads * d_head)."""
    return {"d_k": call.args[1].shape[-1] // int(call.args[5]), "d_model": call.args[0].shape[-1],
            "n_heads": int(call.args[5])}


DOMAIN = (
    Boundary("X", "(..., T, d_model): batch axes", ("matches the reference", "the heads' parts add up to out")),
    Boundary("n_heads, d_head", "d_head = W_Q.shape[1] / n_heads, which n_heads * d_head = d_model need not hold",
             ("heads wider than d_model / n_heads: 2 heads of width 4 in d_model = 6",
              "heads narrower than d_model / n_heads", "matches the reference")),
    Boundary("causal", "False by default; True masks the future",
             ("matches the reference", "causal", "a worked causal example: 2 heads of width 4 in d_model = 8")),
    Boundary("dtype", "float64 and float32", ("matches the reference", "float32 input")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps3", build=checks, numbers=_d_head, domain=DOMAIN)
