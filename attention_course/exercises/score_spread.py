"""score_spread(d, n_rows, n_keys, rng): checked statistically, since the draws are free."""
from functools import lru_cache

import numpy as np

from autograder.checks import Call, Fail, Spec, Verdict, all_of, describe_value, each, failed, provided, returned
from autograder.exercise import Boundary, Exercise
from autograder.wire import Rng
from ..worked_inputs import SCORE_SPREAD

F = "score_spread"
# Mean top softmax weight with 8 keys, unscaled and scaled by 1/sqrt(d): the long-run means
# the notebook's table shows (CONTRACTS.md rounds them to two decimals).
TOP = {d: (top_unscaled, top_scaled) for d, (_, top_unscaled, top_scaled) in SCORE_SPREAD.items()}
ROW_SPREAD = 0.21  # the largest standard deviation of one row's top weight (measured: 0.209)
# Rows a call asks for. The student's draws are most of the problem set's grading time
# (d = 64 at 800 rows alone was half a million numbers), so each width gets the fewest rows
# whose tolerances (std_tol, tol: 5.5 standard errors) still separate every mistake: at
# d = 64 and 400 rows, 7.4 % on the std (a variance or a scaled std is off by 88 %, a mean
# of per-row stds by 10 %) and 0.058 on a top weight (scale_by_dk is off by 0.2).
ROWS = {4: 2000, 16: 800, 64: 400}
SCORES = 3200  # scores (rows x keys) for a width and key count not in the table
SE_MARGIN = 5.5  # standard errors: a right answer fails with a chance under 1 in 10^7


def tol(n_rows: int) -> float:
    """How far a right mean top weight may fall from its long-run value: SE_MARGIN standard
    errors (0.058 at 400 rows, far below the 0.2 to 0.5 that separate the table's rows from
    each other and from the mistakes)."""
    return SE_MARGIN * ROW_SPREAD / np.sqrt(n_rows)


def std_tol(d: int, n_rows: int, n_keys: int) -> float:
    """How far a right std may fall from sqrt(d), relative to it: SE_MARGIN standard errors
    of the std of n_rows x n_keys scores s = q . k with standard normal q and k. From the
    fourth moment E s^4 = 3 d^2 + 6 d, Var(s^2) / d^2 = 2 + 6 / d; the keys of one row share
    q, which correlates their s^2 by 2 / (2 d + 6); the std's relative error is half the
    variance's. (5.8 % at d = 4 with 2,000 rows, 7.4 % at d = 64 with 400.)"""
    n = n_rows * n_keys
    within_row = 1 + (n_keys - 1) * 2 / (2 * d + 6)
    return SE_MARGIN * 0.5 * np.sqrt((2 + 6 / d) / n * within_row)


def _three_floats(outcome):
    value = returned(outcome, F)
    if not (isinstance(value, (tuple, list)) and len(value) == 3):
        raise Fail(f"score_spread should return three floats: (std, top_unscaled, top_scaled); it returned "
                   f"{describe_value(value)}.")
    # Floats only (CONTRACTS.md): float("4") of a string, True as 1, or a rounded int is not a measurement.
    if not all(isinstance(v, (float, np.floating)) for v in value):
        raise Fail("score_spread should return three floats: (std, top_unscaled, top_scaled); it returned "
                   + ", ".join(describe_value(v) for v in value) + ".")
    return tuple(float(v) for v in value)


def _near(got: float, want: float, tol: float) -> bool:
    """Fail closed: nan and inf are near nothing."""
    return bool(abs(got - want) <= tol)


def _std(d):
    rel = std_tol(d, ROWS[d], 8)

    def judge(outcomes, ref):
        std, _, _ = _three_floats(outcomes[0])
        if not _near(std, np.sqrt(d), rel * np.sqrt(d)):
            hint = " That is close to d: you may have returned the variance." if _near(std, d, 0.1 * d) else ""
            # About 1, within the same statistical margin, at a width where sqrt(d) is not 1: the
            # spread of the scaled scores, however they were drawn.
            mistake = "spread_of_scaled_scores" if d > 1 and _near(std, 1.0, rel) else None
            raise failed(f"at d = {d} the scores' standard deviation should be about sqrt(d) = "
                         f"{np.sqrt(d):.3g}; yours is {std:.4g}.{hint}", mistake, func=F)
        return Verdict(True, f"the scores spread like sqrt(d) at d = {d}.")
    return judge


def _top(d, scaled):
    n_rows = ROWS[d]

    def judge(outcomes, ref):
        values = _three_floats(outcomes[0])
        got, expected = values[2 if scaled else 1], TOP[d][1 if scaled else 0]
        if _near(got, expected, tol(n_rows)):
            return Verdict(True, f"the mean top weight at d = {d} is right.")
        name = "top_scaled" if scaled else "top_unscaled"
        mistake = None
        if scaled and ref is not None:
            # The draws are free, so compare with each mistake on fresh draws, statistically.
            # Only score_spread's own: a softmax over the wrong axis, say, gives top weights
            # near 0, as does a function that returns zeros without computing anything.
            for mistake_id, fn in ref.mistakes(F, inherited=False):
                if _near(_statistics(fn, d, 8)[2], got, tol(n_rows)):
                    mistake = mistake_id
                    break
        raise failed(f"at d = {d} with 8 keys, {name} should be about {expected:.3f}; yours is {got:.3f}.", mistake,
                     func=F, numbers={"d_k": d})
    return judge


# Each query's own keys, tested where sharing them shows: with one key of width 1 per query,
# scores q * k of shared k have the std |k| of that one draw, not 1. OWN_KEYS_ROWS rows put
# a right std within 12 % of 1 (SE_MARGIN standard errors); a shared key lands there with a
# chance of 0.12 per call, so in all OWN_KEYS_CALLS calls with one in 10^7.
OWN_KEYS_ROWS, OWN_KEYS_CALLS = 4000, 8


def _own_keys(outcomes, ref):
    stds, tops = [], []
    for outcome in outcomes:
        std, top_unscaled, top_scaled = _three_floats(outcome)
        stds.append(std)
        tops += [top_unscaled, top_scaled]
    rel = std_tol(1, OWN_KEYS_ROWS, 1)
    if not all(_near(t, 1.0, 1e-9) for t in tops):
        raise Fail(f"with one key per query the softmax of a single score is 1, so both top weights should be "
                   f"1.0; yours are {', '.join(f'{t:.3g}' for t in tops[:4])}, ...")
    off = [s for s in stds if not _near(s, 1.0, rel)]
    if off:
        raise failed(f"with d = 1 and one key per query, {OWN_KEYS_ROWS} rows give a std within {rel:.0%} of 1 for "
                     f"every seed; yours, for {OWN_KEYS_CALLS} seeds, are {', '.join(f'{s:.3f}' for s in stds)}.",
                     "keys_shared", func=F)
    return Verdict(True, "each query draws its own keys.")


def _own_keys_calls(seeds) -> tuple[Call, ...]:
    return tuple(Call(F, (1, OWN_KEYS_ROWS, 1, Rng(int(s)))) for s in seeds)


def _reproducible(outcomes, ref):
    first, again, other, more_rows = (np.array(_three_floats(o)) for o in outcomes)
    if not all(np.isfinite(v).all() for v in (first, again, other, more_rows)):
        raise Fail("score_spread returned nan or inf: it should measure three finite numbers.")
    if np.allclose(first, other, rtol=1e-9, atol=0) and np.allclose(first, more_rows, rtol=1e-9, atol=0):
        # Not a draw ignored: no draw at all (a constant, or the notebook's table).
        raise Fail(f"score_spread returned {first.round(4).tolist()} whatever the seed and the number of rows: "
                   "it should measure its numbers on draws from rng.")
    if not np.allclose(first, again, rtol=1e-12, atol=0):
        raise failed(f"the same seed gave {first.round(4).tolist()} and then {again.round(4).tolist()}.",
                     "rng_ignored", func=F)
    if np.allclose(first, other, rtol=1e-9, atol=0):
        raise failed(f"two different seeds gave the same numbers, {first.round(4).tolist()}.", "rng_ignored",
                     func=F)
    return Verdict(True, "the same seed gives the same numbers, another seed others.")


def checks(rng):
    seeds = rng.integers(0, 2**31, size=4)
    # The student's code draws n_rows x (n_keys + 1) x d numbers per call: ROWS rows, and
    # widths 4 and 64, which already differ by a factor of 4 in spread and by 0.35 in the
    # unscaled top weight (a wider draw would cost every submission more than the rest of
    # the problem set).
    calls = {d: Call(F, (d, ROWS[d], 8, Rng(int(s)))) for d, s in zip((4, 64), seeds[:2], strict=True)}
    c_visible = Call(F, (16, ROWS[16], 8, Rng(16)))
    # A second width for the visible checks: one constant (the table's row for d = 16) must
    # not pass for a measurement.
    c_visible_4 = Call(F, (4, ROWS[4], 8, Rng(4)))
    n_keys = int(rng.choice([3, 5, 6]))
    c_other = Call(F, (int(rng.choice([24, 32, 48])), -(-SCORES // n_keys), n_keys, Rng(int(seeds[3]))))
    once_more = "(it depends on d), and it is not:"
    own_keys = _own_keys_calls(range(100, 100 + OWN_KEYS_CALLS))  # the notebook's: fixed seeds
    hidden_own_keys = _own_keys_calls(rng.integers(0, 2**31, size=OWN_KEYS_CALLS))
    # Two calls with the same seed (two Calls, so that both run), one with another seed, and
    # one with the first seed and more rows (a measurement changes with them, a constant not).
    c_seed, c_seed_again, c_seed_other, c_more_rows = (Call(F, (4, n, 8, Rng(s))) for s, n in
                                                       ((5, 50), (5, 50), (6, 50), (5, 60)))
    real = "this check counts once the top weight at d = 4 is right too (it depends on d), and it is not:"

    def counted(judge):
        """A hidden statistic, counted only once each query has its own keys: shared keys estimate
        the same means from one draw of keys, which passes or fails by the luck of that draw."""
        return provided(judge, _own_keys, "this check counts once each query draws its own keys, and it does "
                        "not:", last=OWN_KEYS_CALLS)

    return [
        Spec("std of scores at d = 16 is about 4", 1, visible=True).bind((c_visible, c_visible_4), provided(
            _std(16), _std(4), "this check counts once the std is right at another width too " + once_more)),
        Spec("top weights at d = 16", 1, visible=True).bind((c_visible, c_visible_4), provided(
            all_of(_top(16, False), _top(16, True)), _top(4, False),
            "this check counts once the top weight is right at another width too " + once_more)),
        Spec("each query has its own keys", 1, visible=True).bind(
            (*own_keys, c_visible_4), provided(_own_keys, _top(4, False), real)),
        Spec("draws from the rng it is given", 1, visible=True).bind(
            (c_seed, c_seed_again, c_seed_other, c_more_rows, c_visible_4),
            provided(_reproducible, _top(4, False), real)),
        Spec("std of scores grows like sqrt(d)", 1).bind(
            (calls[4], calls[64], *hidden_own_keys), counted(each(_std(4), _std(64)))),
        Spec("unscaled softmax gets peakier with d", 1).bind(
            (calls[4], calls[64], *hidden_own_keys), counted(each(_top(4, False), _top(64, False)))),
        # Staying the same is what a constant does: it counts only beside the unscaled
        # weights of the same draws, which do change with d.
        Spec("scaled softmax stays the same with d", 2).bind(
            (calls[4], calls[64], *hidden_own_keys), counted(each(all_of(_top(4, True), _top(4, False)),
                all_of(_top(64, True), _top(64, False))))),
        Spec("a width and key count not in the table", 1).bind(
            (c_other, *hidden_own_keys), counted(_like_reference(c_other))),
    ]


REFERENCE_ROWS = 4000  # the reference's own draws, once per grader process: its error is counted in the tolerance


@lru_cache(maxsize=64)
def _statistics(fn, d: int, n_keys: int) -> tuple[float, float, float]:
    """What the reference, or one of its mistakes, measures at (d, n_keys): the same draws
    every time, so once per grader process."""
    return fn(d, REFERENCE_ROWS, n_keys, np.random.default_rng(d * 1000 + n_keys))


def _like_reference(call):
    d, n_rows, n_keys, _ = call.args

    def judge(outcomes, ref):
        got = _three_floats(outcomes[0])
        # The draws are free: compare with the reference on draws of its own, within their spread.
        want = _statistics(ref.solution(F), d, n_keys)
        names = ("std", "top_unscaled", "top_scaled")
        # Against the reference's own draws (REFERENCE_ROWS): both means carry an error.
        top_tol = 5.5 * ROW_SPREAD * np.sqrt(1 / n_rows + 1 / REFERENCE_ROWS)
        std_tol_both = np.hypot(std_tol(d, n_rows, n_keys), std_tol(d, REFERENCE_ROWS, n_keys))
        tols = (std_tol_both * np.sqrt(d), top_tol, top_tol)
        off = [f"{n} should be about {w:.3f}, yours is {g:.3f}"
               for n, g, w, t in zip(names, got, want, tols, strict=True) if not _near(g, w, t)]
        if off:
            raise Fail(f"at d = {d} with {n_keys} keys: " + "; ".join(off) + ".")
        return Verdict(True, f"the statistics are right at d = {d} with {n_keys} keys.")
    return judge


DOMAIN = (
    Boundary("d", "any width >= 1: 1, the table's 4, 16 and 64, and widths not in it",
             ("each query has its own keys", "std of scores at d = 16 is about 4", "std of scores grows like sqrt(d)",
              "a width and key count not in the table")),
    Boundary("n_keys", "any count >= 1: one key (softmax of one score is 1), the table's 8, others",
             ("each query has its own keys", "top weights at d = 16", "a width and key count not in the table")),
    Boundary("n_rows", "any count: the checks' tolerances follow it (400 to 4000 rows)",
             ("std of scores grows like sqrt(d)", "each query has its own keys")),
    Boundary("rng", "a numpy Generator: every number drawn from it, the same seed giving the same numbers",
             ("draws from the rng it is given",)),
    Boundary("draws", "each query its own n_keys keys, not keys shared by every query",
             ("each query has its own keys", "std of scores grows like sqrt(d)", "unscaled softmax gets peakier with d",
              "scaled softmax stays the same with d", "a width and key count not in the table")),
    Boundary("result", "three Python floats (std, top_unscaled, top_scaled)", ("std of scores at d = 16 is about 4",)),
)

EXERCISE = Exercise(F, "ps1", build=checks, domain=DOMAIN)
