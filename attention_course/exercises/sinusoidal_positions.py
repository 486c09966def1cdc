"""sinusoidal_positions(T, d) -> PE (T, d): sin and cos of p / 10000^(2i/d), interleaved."""
from autograder.checks import Call, Spec, Verdict, each, matches_reference, matches_worked, provided, raised
from autograder.exercise import Boundary, Exercise
from ..worked_inputs import POSITIONS_D, POSITIONS_T

F = "sinusoidal_positions"


def _raises(why):
    return lambda o, ref: (raised(o[0], F, "ValueError", why), Verdict(True, "ValueError raised."))[1]


def checks(rng):
    c_small = Call(F, (POSITIONS_T, POSITIONS_D))
    c_odd = Call(F, (4, 5))
    T, d = int(rng.integers(8, 20)), 2 * int(rng.integers(3, 9))
    c_ref, c_long = Call(F, (T, d)), Call(F, (50, 64))
    c_bad = (Call(F, (0, 4)), Call(F, (3, 0)), Call(F, (-2, 4)))
    # Raising ValueError for everything rejects bad sizes too: these checks count only with a
    # right table as well.
    guard = "this check counts once the table for good sizes is right too, and it is not:"
    return [
        Spec("the table for T = 3, d = 4", 1, visible=True).bind(
            (c_small,), matches_worked(c_small, what="table",
                                       expected_note="row 1 is about 0.841, 0.540, 0.010, 1.000")),
        Spec("rejects an odd d", 1, visible=True).bind(
            (c_odd, c_small), provided(_raises("when d is odd (d = 5)"), matches_worked(c_small),
                guard)),
        Spec("matches the reference", 2).bind((c_ref,), matches_reference(c_ref, what="table")),
        Spec("a long, wide table (T = 50, d = 64)", 1).bind((c_long,), matches_reference(c_long, what="table")),
        Spec("rejects sizes that are not positive", 1).bind(c_bad + (c_ref,), provided(
            each(_raises("when T is 0"), _raises("when d is 0"), _raises("when T is negative")),
            matches_reference(c_ref, what="table"), guard)),
    ]


DOMAIN = (
    Boundary("T", "a positive int: 3, 8 to 19, 50; 0 and negatives: ValueError",
             ("the table for T = 3, d = 4", "matches the reference", "a long, wide table (T = 50, d = 64)",
              "rejects sizes that are not positive")),
    Boundary("d", "an even positive int: 4, 6 to 16, 64; odd or 0: ValueError",
             ("the table for T = 3, d = 4", "rejects an odd d", "rejects sizes that are not positive")),
)

def _d(call):
    """d, for explanations: the exponent is 2i/d."""
    return {"d": int(call.args[1])}


EXERCISE = Exercise(F, "ps4", build=checks, numbers=_d, domain=DOMAIN)
