"""attention_with_biases(X, W_Q, W_K, W_V, b_Q, b_K, b_V): the key bias changes nothing."""
import numpy as np

from autograder.checks import (Call, Fail, Spec, Verdict, as_array, diagnose_any, expect_close, failed,
                               leaves_inputs_unchanged, matches_reference, matches_worked, output_differs, returned)
from autograder.exercise import Boundary, Exercise, shared
from autograder.misconceptions import context

F = "attention_with_biases"
TARGETS = [1, 2, 1]  # the token each token attends to in the visible example


def _sharp_inputs():
    """The visible check's inputs, built so that its answer needs no reference.

    X holds one-hot tokens; q_i = 40 sqrt(3) e_t(i) + b_Q and k_j = e_j + b_K with targets
    t = (1, 2, 1), so row i's scores, over sqrt(d_k), are about 40 higher for key t(i) than
    for the others (b_K adds the same q_i . b_K to the whole row): output row i is the value
    of token t(i), x W_V + b_V. Uniform, identity or zero weights are all wrong here, and so
    is a softmax over the query axis.
    """
    T, d, d_k, d_v = 3, 4, 3, 3
    n = np.random.default_rng(11).standard_normal
    W_Q, W_K, W_V = n((d, d_k)), n((d, d_k)), n((d, d_v))
    W_Q[:T] = 40.0 * np.sqrt(d_k) * np.eye(T)[TARGETS]
    W_K[:T] = np.eye(T)
    X = np.eye(T, d)
    b_Q, b_K, b_V = 0.1 * n(d_k), n(d_k), n(d_v)
    args = (X, W_Q, W_K, W_V, b_Q, b_K, b_V)
    expected = (X @ W_V + b_V)[TARGETS]
    return args, expected


def _bk_free_sharp(call, expected):
    X = call.args[0]

    def judge(outcomes, ref):
        a = as_array(returned(outcomes[0], F), F)
        b = as_array(returned(outcomes[1], F), F)
        if a.shape != expected.shape:
            mistake = "values_not_projected" if a.shape == X.shape and np.allclose(a, X[TARGETS]) else None
            raise failed(f"{F} should return (T, d_v) = {expected.shape}; yours has shape {a.shape}.", mistake)
        if not (b.shape == a.shape and np.isfinite(a).all() and np.allclose(a, b, atol=1e-6, rtol=1e-6)):
            raise Fail(BK_MOVES)
        # b_K-free is what a constant or an output that ignores the keys is too: the check
        # counts only for the right output of a head whose answer is known.
        expect_close(a, expected, F, "output of a sharp head", X,
                     expected_note="tokens 0, 1, 2 copy the values of 1, 2, 1")
        return Verdict(True, "the output does not depend on b_K.")
    return judge


def _bk_free(call):
    def judge(outcomes, ref):
        a = returned(outcomes[0], F)
        b = as_array(returned(outcomes[1], F), F)
        wrong = output_differs(call, a, ref)
        if wrong:
            found = diagnose_any(ref, call, a)
            raise failed(f"this check counts once the output is right, and it is not: {wrong}", found, func=F,
                         numbers=context(call))
        if not (b.shape == a.shape and np.allclose(a, b, atol=1e-6, rtol=1e-6)):
            raise Fail(BK_MOVES)
        return Verdict(True, "the output does not depend on b_K.")
    return judge


BK_MOVES = ("changing only b_K changed your output. Every query's score with every key moves "
            "by the same amount q·b_K, and softmax ignores a constant shift of a row, so b_K "
            "should make no difference. Check where you add the biases and what you scale.")


def _inputs(rng, shape, d, d_k, d_v, dtype=np.float64):
    n = rng.standard_normal
    return tuple(a.astype(dtype) for a in (n(shape + (d,)), n((d, d_k)), n((d, d_k)), n((d, d_v)),
                                           n(d_k), n(d_k), n(d_v)))


def _with_b_k(args, b_K):
    return args[:5] + (b_K,) + args[6:]


@shared
def _visible():
    """The checks on the notebook's worked examples: the same for every student."""
    vis, sharp = _sharp_inputs()
    c_vis1, c_vis2 = Call(F, vis), Call(F, _with_b_k(vis, vis[5] + 5.0))
    # Square projections (d = d_k = d_v = 3), so that transposed weights or raw X as values
    # give numbers to compare rather than a crash; every bias nonzero.
    worked = np.random.default_rng(13)
    c_worked = Call(F, (worked.standard_normal((4, 3)), *(worked.standard_normal((3, 3)) for _ in range(3)),
                        *(worked.standard_normal(3) for _ in range(3))))
    # The worked example with one more query and key coordinate, 0 in W_Q and W_K and 40 in
    # b_Q and b_K: 1600 more on every score (800 once scaled), past exp()'s 709 without the
    # max shift, and the weights those of the small scores.
    X_w, W_Q, W_K, W_V, b_Q, b_K, b_V = c_worked.args
    extra = np.zeros((3, 1))
    c_loud = Call(F, (X_w, np.hstack([W_Q, extra]), np.hstack([W_K, extra]), W_V,
                      np.append(b_Q, 40.0), np.append(b_K, 40.0), b_V))
    return [
        Spec("b_K makes no difference", 1, visible=True).bind((c_vis1, c_vis2), _bk_free_sharp(c_vis1, sharp)),
        Spec("a worked example with every bias", 1, visible=True).bind((c_worked,), matches_worked(c_worked)),
        Spec("scores over 1000 stay finite", 1, visible=True).bind(
            (c_loud, c_worked), matches_worked(c_loud, loud=True)),
    ]


def checks(rng):
    args = _inputs(rng, (2, 5), 6, 4, 3)
    square = _inputs(rng, (5,), 4, 4, 4)
    c_ref, c_sq = Call(F, args), Call(F, square)
    c_bk = Call(F, _with_b_k(args, rng.standard_normal(4) * 10))
    c_32 = Call(F, _inputs(rng, (5,), 6, 4, 3, np.float32))
    return [
        *_visible(),
        Spec("matches the reference on a batch", 2).bind((c_ref,), matches_reference(c_ref)),
        Spec("square projections", 1).bind((c_sq,), matches_reference(c_sq)),
        Spec("b_K makes no difference on other inputs", 1).bind((c_ref, c_bk), _bk_free(c_ref)),
        Spec("float32 input", 1).bind((c_32,), matches_reference(c_32)),
        leaves_inputs_unchanged(c_ref),
    ]

def _d_k(call):
    """d_k, for explanations: W_K is (d, d_k)."""
    return {"d_k": call.args[2].shape[-1]}


DOMAIN = (
    Boundary("X", "(..., T, d): batch axes", ("matches the reference on a batch",)),
    Boundary("W_Q, W_K, W_V", "(d, d_k), (d, d_k), (d, d_v), square as well", ("square projections",)),
    Boundary("b_Q, b_K, b_V", "any vectors: b_K, however large, changes nothing",
             ("b_K makes no difference",
              "b_K makes no difference on other inputs", "a worked example with every bias")),
    Boundary("X, biases", "scores past exp()'s 709", ("scores over 1000 stay finite",)),
    Boundary("dtype", "float64 and float32", ("matches the reference on a batch", "float32 input")),
    Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
)

EXERCISE = Exercise(F, "ps2", build=checks, numbers=_d_k, domain=DOMAIN)
