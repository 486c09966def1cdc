"""attention_shapes(B, T_q, T_k, d, d_k, d_v) -> dict of shape tuples; ValueError on bad sizes."""
import numpy as np

from autograder.checks import Call, Fail, Spec, Verdict, describe_value, each, failed, provided, raised, returned
from autograder.exercise import Boundary, Exercise, shared
from autograder import worked_examples
from autograder.wire import NpInt
from ..worked_inputs import BATCH_SHAPES, CROSS_ATTENTION_SHAPES

F = "attention_shapes"
KEYS = ("X_q", "X_kv", "W_Q", "W_K", "W_V", "Q", "K", "V", "S", "A", "O")


def _integer_kind(value) -> str:
    """'numpy' when a shape holds numpy integers, 'other' for anything else not an int."""
    if not isinstance(value, (tuple, list)):
        return "other"
    if any(type(n) is not int and isinstance(n, np.integer) for n in value):
        return "numpy"
    return "" if all(type(n) is int for n in value) else "other"


def _matches(sizes, example=None):
    def judge(outcomes, ref):
        got = returned(outcomes[0], F)
        want = example or ref.solution(F)(*sizes)
        if not isinstance(got, dict):
            raise Fail(f"{F} should return a dict, not {describe_value(got)}.")
        if set(got) != set(KEYS):
            missing, extra = set(KEYS) - set(got), set(got) - set(KEYS)
            raise Fail(f"the dict's keys should be exactly {', '.join(KEYS)}"
                       + (f"; missing {sorted(missing)}" if missing else "")
                       + (f"; unexpected {sorted(extra)}" if extra else "") + ".")
        ints = {k for k in KEYS if isinstance(got[k], tuple) and all(type(n) is int for n in got[k])}
        wrong = [k for k in KEYS if not (k in ints and got[k] == want[k])]
        if wrong:
            lines = [f"  {k}: yours {got[k]!r:.60}, expected {want[k]}" for k in wrong]
            B, T_q, T_k = sizes[:3]
            swapped = [k for k in wrong if k in ints and len(got[k]) == 3
                       and tuple(got[k]) == (want[k][0], T_k, T_q) and T_q != T_k]
            mistake = "shape_tq_tk_swapped" if swapped else None
            kinds = {_integer_kind(got[k]) for k in wrong}
            types = ""
            if "numpy" in kinds:
                types = (" Your shapes hold numpy integers (such as np.int64(2)): every entry must be a tuple of "
                         "Python ints, so convert each size with int(...) first, as in (int(B), int(T_q), int(d)).")
            elif any(not isinstance(got[k], tuple) for k in wrong):
                types = " Every entry must be a tuple of Python ints."
            raise failed(f"with B={B}, T_q={T_q}, T_k={T_k}, d={sizes[3]}, d_k={sizes[4]}, d_v={sizes[5]}:\n"
                         + "\n".join(lines) + types, mistake)
        return Verdict(True, "every shape is right.")
    return judge


def _matches_worked(call):
    """The shapes of a public example, known from the worked examples' table."""
    def judge(outcomes, ref):
        return _matches(call.args, worked_examples.answer(call))(outcomes, ref)
    return judge


@shared
def _visible():
    """The checks on the notebook's worked examples: the same for every student."""
    c_vis = Call(F, BATCH_SHAPES)
    c_cross = Call(F, CROSS_ATTENTION_SHAPES)  # T_q != T_k and d_k != d_v: every size has its own place
    c_whole = Call(F, (2, 5, 5, 16, 8.0, 8))  # a float that looks like an integer is still no size
    return [
        Spec("the batch-shapes example", 1, visible=True).bind((c_vis,), _matches_worked(c_vis)),
        Spec("a cross-attention example: 3 queries, 5 keys", 1, visible=True).bind(
            (c_cross,), _matches_worked(c_cross)),
        Spec("rejects a float size that looks like an integer (d_k = 8.0)", 1, visible=True).bind(
            (c_whole, c_vis), provided(
                lambda o, ref: (raised(o[0], F, "ValueError", "when d_k is 8.0 (a float, though a whole number)"),
                                Verdict(True, "ValueError raised."))[1],
                _matches_worked(c_vis),
                "this check counts once the shapes for good sizes are right too, and they are not:")),
    ]


def checks(rng):
    B, T_q, T_k, d, d_k, d_v = (int(n) for n in rng.choice(range(2, 30), size=6, replace=False))
    sizes = (B, T_q, T_k, d, d_k, d_v)
    c_rand = Call(F, sizes)
    c_np = Call(F, tuple(NpInt(n) for n in sizes))
    bad = [(0, 5, 5, 16, 8, 8), (2, -1, 5, 16, 8, 8), (2, 5, 5, 16, 2.5, 8), (True, 5, 5, 16, 8, 8),
           (2, 5, "3", 16, 8, 8), (2, 5, 5, 16.0, 8, 8)]
    c_bad = tuple(Call(F, b) for b in bad)
    why = ["when B is 0", "when T_q is negative", "when d_k is 2.5", "when B is True (a bool is not a size)",
           "when T_k is the string '3'", "when d is 16.0 (a float, though a whole number)"]
    return [
        *_visible(),
        Spec("cross-attention sizes", 2).bind((c_rand,), _matches(sizes)),
        Spec("accepts numpy integers", 1).bind((c_np,), _matches(sizes)),
        # Raising ValueError for everything rejects bad sizes too: the check counts only
        # with the shapes right for good sizes.
        Spec("rejects sizes that are not positive integers", 1).bind(c_bad + (c_rand,), provided(
            each(*[lambda o, ref, w=w: (raised(o[0], F, "ValueError", w), Verdict(True, "ValueError raised."))[1]
                   for w in why]), _matches(sizes),
            "this check counts once the shapes for good sizes are right too, and they are not:")),
    ]

DOMAIN = (
    Boundary("sizes", "positive Python ints, T_q != T_k and d_k != d_v each in its own place",
             ("the batch-shapes example", "a cross-attention example: 3 queries, 5 keys", "cross-attention sizes")),
    Boundary("sizes", "numpy integers: accepted, returned as Python ints", ("accepts numpy integers",)),
    Boundary("sizes", "0, negatives, 2.5, True, '3': ValueError", ("rejects sizes that are not positive integers",)),
    Boundary("sizes", "floats that look like integers (8.0, 16.0): ValueError",
             ("rejects a float size that looks like an integer (d_k = 8.0)",
              "rejects sizes that are not positive integers")),
)

EXERCISE = Exercise(F, "ps2", build=checks, domain=DOMAIN)
