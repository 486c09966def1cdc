"""What a check is, and the trusted comparisons every exercise's checks are built from.

A ``Check`` names the calls to make in the sandbox and a ``judge`` that turns what came
back into a ``Verdict``. Judges run in the grader's process on typed outcomes
(``sandbox.frames.CallOutcome``, one per call: parsed at the boundary, never a child's raw
dicts), whose values are wire.py's plain data. A visible
check's judge gets ``ref=None`` and must manage without the reference: the same check
runs in a student's notebook (selfcheck.py), where no reference exists.

The judges here give their verdicts in parts (``results.Finding``: how the check ended, the
mistake's explanation, the other words, the arrays compared), so the reports render each
part without reading it back out of the message. A course's judge that names a mistake
does so by ``failed`` (its explanation first, then the judge's words), which gives the
parts; a ``Fail`` of its own words is kept whole, and nothing reads them back.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from . import misconceptions, results
from .closeness import TOLERANCE, is_close, tolerance  # noqa: F401  (judges and exercises use them)
from .errors import GraderError
from .results import SHOWN, Comparison, Finding, Kind
from .spec import Bound, Call, Check, Fail, Spec, Verdict, test_name  # noqa: F401  (what exercises import)
from .sandbox.frames import NOT_A_RESULT, CallOutcome, Ending
from .wire import Opaque


def run_judge(check: Check, outcomes: list[CallOutcome], ref) -> Verdict:
    """The check's verdict. A judge fails closed: it passes only by returning a passing
    Verdict, and it reads a student's value only after checking its type, dtype and shape,
    so a malformed value fails the check (with a message naming what came back) by ``Fail``.
    Any other exception is a bug in the judge, never the student's fault: GraderError.
    ``outcomes`` must be CallOutcomes (frames.py parsed them): anything else is the grader's bug."""
    if not all(isinstance(o, CallOutcome) for o in outcomes):
        raise GraderError(f"the judge of check {check.name!r} was handed outcomes that were never parsed")
    try:
        # A student's huge or inf values overflow; the judge fails them itself.
        with np.errstate(all="ignore"):
            verdict = check.judge(outcomes, ref)
    except Fail as f:
        return named_from_table(check, outcomes, f.verdict) if check.visible else f.verdict
    except Exception as e:
        raise GraderError(f"the judge of check {check.name!r} failed: {type(e).__name__}: "
                          f"{' '.join(str(e).split())[:300]}") from e
    if not isinstance(verdict, Verdict) or not isinstance(verdict.passed, bool):
        # Only an explicit Verdict(True) passes; anything else a judge returns is a judge bug.
        raise GraderError(f"the judge of check {check.name!r} returned {verdict!r} instead of a Verdict")
    return verdict


def named_from_table(check: Check, outcomes: list[CallOutcome], verdict: Verdict) -> Verdict:
    """A failed visible check names the catalogued mistake whose output on one of its
    (public) inputs is the student's, from the table of worked_examples.py: the notebook
    has no reference to diagnose with, and the grader says the same words."""
    from . import worked_examples

    if verdict.misconception is not None:
        return verdict
    for call, outcome in zip(check.calls, outcomes, strict=False):  # a short list is the judge's to fail
        found = outcome.ending is Ending.RETURNED and worked_examples.name(call, outcome.value)
        if found:
            numbers = misconceptions.context(call)
            text = misconceptions.explain(found, func=call.func, **numbers)
            inner = verdict.finding
            if inner is None or inner.detail is None:
                finding = Finding(Kind.WRONG, text, verdict.message, numbers)
            else:
                finding = Finding(Kind.WRONG, text, inner.detail, numbers, inner.comparison)
            return Verdict(False, f"{text}\n{verdict.message}", found, verdict.heatmap, finding)
    return verdict


def failed(detail: str = "", mistake: str | None = None, *, func: str = "", numbers: dict | None = None,
           comparison: Comparison | None = None, heatmap=None) -> Fail:
    """A failed check, in parts: the explanation of ``mistake`` (for ``func``, quoting
    ``numbers``) when one is named, then ``detail``, then ``comparison``."""
    numbers = dict(numbers or {})
    explanation = misconceptions.explain(mistake, func=func, **numbers) if mistake else ""
    return Fail.of(Finding(Kind.WRONG, explanation, detail, numbers if explanation else {}, comparison),
                   mistake, heatmap)


def led(words: str, verdict: Verdict) -> Fail:
    """``verdict``'s failure with ``words`` before its own (after its explanation, if any)."""
    f = verdict.finding
    if f is None or f.detail is None:
        return Fail(f"{words}\n{verdict.message}", verdict.misconception, verdict.heatmap, f)
    return Fail.of(replace(f, detail="\n".join(x for x in (words, f.detail) if x)), verdict.misconception,
                   verdict.heatmap)


# ---------------------------------------------------------------- reading outcomes

def returned(outcome: CallOutcome, func: str):
    """The value a call returned, or a Fail that explains the exception it raised (or that
    what came back for it was not a result at all)."""
    if outcome.ending is Ending.MALFORMED:
        raise Fail(f"{func} {NOT_A_RESULT} ({outcome.message}): it wrote to the grader's channel, "
                   "which only the grader's own code may.", "crashed", finding=Finding(Kind.MALFORMED))
    if outcome.ending is Ending.UNDEFINED:
        raise Fail(f"{func} is not defined in your submission: keep the function's name and "
                   "signature exactly as given.", finding=Finding(Kind.UNDEFINED))
    if outcome.ending is Ending.RAISED:
        where = f" ({outcome.where})" if outcome.where else ""
        if outcome.error == "NotImplementedError":
            text = misconceptions.explain("not_implemented", func=func)
            raise Fail.of(Finding(Kind.NOT_IMPLEMENTED, text, ""), "not_implemented")
        raise Fail(f"{func} raised {outcome.message}{where}. " + misconceptions.explain("crashed", func=func),
                   "crashed", finding=Finding(Kind.RAISED, error=outcome.message))
    return outcome.value


def raised(outcome: CallOutcome, func: str, exc: str, why: str) -> None:
    """Require that a call raised ``exc`` (by class name)."""
    if outcome.ending is Ending.RAISED and outcome.error == exc:
        return
    if outcome.ending is not Ending.RAISED or outcome.error == "NotImplementedError":
        returned(outcome, func)  # a malformed, missing or unfinished one says so
        raise Fail(f"{func} should raise {exc} {why}, but it returned normally.")
    raise Fail(f"{func} should raise {exc} {why}, but it raised {outcome.message}.")


def describe_value(value) -> str:
    """What came back, in a few words: for a message that names a malformed value."""
    if isinstance(value, Opaque):
        return f"a {value.type_name} (not plain data)"
    if isinstance(value, np.ndarray):
        return f"a numpy {value.dtype} array of shape {value.shape}"
    if value is None:
        return "None"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__} ({value!r:.40})" if isinstance(value, (str, bool, int, float)) else \
        f"a {type(value).__name__}"


def as_array(value, func: str, what: str = "the result") -> np.ndarray:
    """``value`` if it is a numpy float array (CONTRACTS.md: outputs are float arrays)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value
    raise Fail(f"{func} should return {what} as a numpy float array, but it returned {describe_value(value)}.")


def parts(value, n: int, func: str, names: str) -> tuple:
    """Unpack a returned tuple of ``n`` parts (``names`` describes them for the student)."""
    if isinstance(value, (tuple, list)) and len(value) == n:
        return tuple(value)
    got = f"{len(value)} values" if isinstance(value, (tuple, list)) else "a single value"
    raise Fail(f"{func} should return {n} values ({names}), but it returned {got}.")


UNCHANGED = Spec("leaves its inputs unchanged", 1)


def leaves_inputs_unchanged(call: Call, spec: Spec = UNCHANGED) -> Bound:
    """A check that ``call`` does not write into its input arrays, judged here, in the grader.

    It counts only for a right output: a function that does no work (zeros of the right
    shape, its input returned) leaves its inputs alone too, and must not earn a point for it.
    """
    echo = replace(call, echo=True)
    before = [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray)]

    def judge(outcomes, ref):
        value = returned(outcomes[0], call.func)
        after = outcomes[0].inputs_after
        if not isinstance(after, tuple) or len(after) != len(before) or any(
                not isinstance(a, np.ndarray) or a.dtype != b.dtype or a.shape != b.shape
                or not _unchanged(a, b) for a, b in zip(after, before, strict=True)):
            raise Fail(f"{call.func} changed one of its input arrays in place (for example with `-=`, "
                       "`*=` or `out=`). Work on new arrays: callers keep using their inputs after the call.")
        if ref is None:
            raise Fail("this check needs the reference answer: the grader runs it.")
        wrong = output_differs(call, value, ref)
        if wrong:
            raise failed(f"{call.func} leaves its inputs unchanged, but this check counts only once its "
                         f"output on these inputs is right, and it is not: {wrong}", diagnose_any(ref, call, value),
                         func=call.func, numbers=misconceptions.context(call))
        return Verdict(True, f"{call.func} leaves its inputs unchanged.")
    return spec.bind((echo,), judge)


def _unchanged(after: np.ndarray, before: np.ndarray) -> bool:
    """Every entry as it was, a nan where there was one. Plain equality first: it is the common
    case, and it costs a third of equal_nan's, which looks for nans in both."""
    return np.array_equal(after, before) or np.array_equal(after, before, equal_nan=True)


def output_differs(call: Call, value, ref) -> str:
    """'' when ``value`` is the reference's output on ``call`` (every part, shape and dtype
    kind included, within tolerance); otherwise what differs first, in a few words."""
    expected = ref.output(call)
    inputs = [a for a in call.args if isinstance(a, np.ndarray)]
    if isinstance(expected, tuple):
        if not (isinstance(value, (tuple, list)) and len(value) == len(expected)):
            return f"it should return {len(expected)} values, and it returned {describe_value(value)}."
        pairs = list(zip(value, expected, strict=True))
    else:
        pairs = [(value, expected)]
    for i, (got, want) in enumerate(pairs):
        label = f"part {i + 1} of the result" if len(pairs) > 1 else "the result"
        if isinstance(want, (float, np.floating)):  # a measured number (key_bias_effect's, say)
            if not (isinstance(got, (float, np.floating)) and not isinstance(got, bool)):
                return f"{label} is {describe_value(got)}, not a float."
            got, want = np.array([got], dtype=np.float64), np.array([want], dtype=np.float64)
        if not (isinstance(got, np.ndarray) and got.dtype.kind == "f"):
            return f"{label} is {describe_value(got)}, not a float array."
        want = np.asarray(want)
        if got.shape != want.shape:
            return f"{label} has shape {got.shape}, expected {want.shape}."
        if not is_close(got, want, *tolerance(got, *inputs)):
            return f"{label} has the right shape but wrong values."
    return ""


def diagnose_any(ref, call: Call, value) -> str | None:
    """The catalogued mistake that reproduces ``value`` (any part of it, shape included)."""
    expected = ref.output(call)
    inputs = [a for a in call.args if isinstance(a, np.ndarray)]
    if isinstance(expected, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(expected):
            return None
        candidates = [(first_of(i), v, e) for i, (v, e) in enumerate(zip(value, expected, strict=True))]
    else:
        candidates = [(lambda v: v, value, expected)]
    for pick, got, want in candidates:
        # Only a wrong part says which mistake was made: a right one matches every mistake
        # that leaves it alone (the weights of a wrong output, say).
        if (isinstance(got, np.ndarray) and got.dtype.kind == "f"
                and not is_close(got, np.asarray(want), *tolerance(got, *inputs))):
            found = misconceptions.diagnose(ref, call, got, pick, *tolerance(got, *inputs))
            if found:
                return found
    return None


# ---------------------------------------------------------------- comparing arrays

def compare(got: np.ndarray, expected: np.ndarray, what: str, atol: float, rtol: float,
            expected_note: str = "") -> Comparison:
    """pytest-approx style, smaller: shape first, then how many differ, then a few of them.
    ``expected_note``: what the check says of the expected values ("bank on river is 0.500")."""
    if got.shape != expected.shape:
        return Comparison(what, tuple(got.shape), tuple(expected.shape), expected_note=expected_note)
    g, e = got.astype(np.float64), expected.astype(np.float64)
    bad = ~np.isclose(g, e, atol=atol, rtol=rtol)
    with np.errstate(invalid="ignore", over="ignore"):
        diffs = np.where(bad & np.isfinite(g), np.abs(g - e), 0.0)
    # nan differs from everything by no number: count it apart rather than report a 0.
    largest = float(np.nanmax(diffs)) if (bad & np.isfinite(g)).any() else None
    lead: tuple = ()
    if e.ndim >= 2:
        lead = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad.reshape(-1))), e.shape)[:-2])
        g2, e2 = g[lead], e[lead]
    else:
        g2, e2 = g.reshape(1, -1), e.reshape(1, -1)
    return Comparison(what, tuple(got.shape), tuple(expected.shape), int(bad.sum()), int(e.size),
                      int(np.isnan(g).sum()), int((np.isinf(g) & bad).sum()), largest, lead, _shown(g2), _shown(e2),
                      e2.shape[0] > SHOWN, e2.shape[1] > SHOWN, expected_note)


def _shown(m: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in r) for r in m[:SHOWN, :SHOWN])


def side_by_side(got: np.ndarray, expected: np.ndarray, left: str, right: str) -> str:
    """Two small matrices next to each other, cut to SHOWN rows and columns."""
    def cut(m):
        return (m.shape[0] > SHOWN, m.shape[1] > SHOWN)
    return results.side_by_side(_shown(got), _shown(expected), left, right, cut(got), cut(expected))


def expect_close(got, expected: np.ndarray, func: str, what: str, *inputs, atol: float | None = None,
                 expected_note: str = "") -> None:
    """Fail with a readable difference unless ``got`` matches ``expected``.

    ``atol`` overrides the dtype's tolerance, for worked numbers given to 3 decimals;
    ``expected_note`` says what the expected values are ("bank on river is 0.500").
    """
    got = as_array(got, func, what)
    atol, rtol = (atol, 0.0) if atol is not None else tolerance(got, *inputs)
    if not is_close(got, expected, atol, rtol):
        raise failed(comparison=compare(got, expected, f"{func}'s {what}", atol, rtol, expected_note))


def matches_reference(call: Call, pick: Callable[[Any], Any] = lambda v: v, what: str = "output",
                      heatmap: Callable[[Any], Any] | None = None):
    """A judge: the student's output (``pick`` of it) equals the reference's on ``call``.

    On a mismatch it asks misconceptions.diagnose which known mistake, run on the same
    inputs, reproduces the student's output (whatever its shape), and explains that mistake.
    """
    def judge(outcomes, ref):
        value = returned(outcomes[0], call.func)
        reference = ref.output(call)
        if isinstance(reference, tuple) and not (isinstance(value, (tuple, list)) and len(value) == len(reference)):
            # A lone array is not "the n-th part" of a tuple: pick would hand it over whole.
            raise Fail(f"{call.func} should return {len(reference)} values, but it returned {describe_value(value)}.")
        got = as_array(pick(value), call.func, what)
        expected = np.asarray(pick(reference))
        inputs = [a for a in call.args if isinstance(a, np.ndarray)]
        atol, rtol = tolerance(got, *inputs)
        pic = None
        if heatmap is not None and got.shape == expected.shape:
            pic = (heatmap(expected), heatmap(got))
        if is_close(got, expected, atol, rtol):
            return Verdict(True, f"{call.func}'s {what} matches.", heatmap=pic)
        found = misconceptions.diagnose(ref, call, got, pick, atol, rtol)
        if found is None and looks_like_overflow(got, expected):
            found = misconceptions.overflow()
        raise failed(mistake=found, func=call.func, numbers=misconceptions.context(call), heatmap=pic,
                     comparison=compare(got, expected, f"{call.func}'s {what}", atol, rtol))
    return judge


def matches_worked(call: Call, pick: Callable[[Any], Any] = lambda v: v, what: str = "output",
                   heatmap: Callable[[Any], Any] | None = None, loud: bool = False, expected_note: str = ""):
    """A visible judge: the student's output (``pick`` of it) equals the worked example's,
    the answer on these public inputs that the notebook shows (worked_examples.py). No
    reference is needed; a failing output is named from the same table (run_judge).

    ``loud``: the call's scores are past exp()'s range, and the check holds a second call,
    an ordinary example of the same function. Non-finite output here beside finite output
    there is an overflow (a function that is nan everywhere is not named). ``expected_note``:
    what the worked example's answer is, in words ("row 1: about 0.841, 0.540")."""
    from . import worked_examples

    def judge(outcomes, ref):
        if loud:
            value = returned(outcomes[0], call.func)
            ordinary = outcomes[1].value if outcomes[1].ending is Ending.RETURNED else None
            got = pick(value) if isinstance(value, (tuple, list, np.ndarray)) else value
            finite_there = all(isinstance(a, np.ndarray) and a.dtype.kind == "f" and np.isfinite(a).all()
                               for a in (ordinary if isinstance(ordinary, (tuple, list)) else [ordinary]))
            if (isinstance(got, np.ndarray) and got.dtype.kind == "f" and not np.isfinite(got).all()
                    and finite_there):
                raise failed(f"{call.func} returned nan or inf on this example, and finite values on the ordinary "
                             "one.", misconceptions.overflow(), func=call.func)
        value = returned(outcomes[0], call.func)
        answer = worked_examples.answer(call)
        if isinstance(answer, tuple) and not (isinstance(value, (tuple, list)) and len(value) == len(answer)):
            raise Fail(f"{call.func} should return {len(answer)} values, but it returned {describe_value(value)}.")
        got = as_array(pick(value), call.func, what)
        expected = np.asarray(pick(answer))
        atol, rtol = tolerance(got, *[a for a in call.args if isinstance(a, np.ndarray)])
        pic = (heatmap(expected), heatmap(got)) if heatmap is not None and got.shape == expected.shape else None
        if is_close(got, expected, atol, rtol):
            return Verdict(True, f"{call.func}'s {what} on the worked example is right.", heatmap=pic)
        difference = compare(got, expected, f"{call.func}'s {what} on the worked example", atol, rtol, expected_note)
        found = worked_examples.name(call, value)
        if found:  # the table knows this output; the overflow guess below is only a guess
            raise failed(mistake=found, func=call.func, numbers=misconceptions.context(call), comparison=difference,
                         heatmap=pic)
        found = misconceptions.overflow() if looks_like_overflow(got, expected) else None
        raise failed(mistake=found, func=call.func, comparison=difference, heatmap=pic)
    return judge


def looks_like_overflow(got: np.ndarray, expected: np.ndarray) -> bool:
    """nan/inf where the answer is finite, beside finite entries: something overflowed on some
    inputs (the course names the mistake: misconceptions.overflow). An output that is nan or
    inf everywhere is no sign of overflow (exp of the
    smaller scores stays finite), so it names no mistake."""
    return (got.shape == expected.shape and bool(np.isfinite(expected).all())
            and not bool(np.isfinite(got).all()) and bool(np.isfinite(got).any()))


def passed(verdict) -> Verdict:
    """``verdict`` if it passes. A judge fails by raising ``Fail``; one that returns a failing
    verdict (or anything else) inside a combined judge must not let the whole check pass."""
    if not isinstance(verdict, Verdict):
        raise TypeError(f"a judge returned {verdict!r} instead of a Verdict")
    if verdict.passed is not True:
        raise Fail(verdict.message or "this check failed.", verdict.misconception, verdict.heatmap, verdict.finding)
    return verdict


def each(*judges):
    """A judge for a check of several calls: judge i sees call i; all must pass."""
    if not judges:
        raise ValueError("each() needs at least one judge")

    def judge(outcomes, ref):
        if len(outcomes) != len(judges):
            raise ValueError(f"each() has {len(judges)} judges for {len(outcomes)} outcomes")
        return [passed(j(outcomes[i : i + 1], ref)) for i, j in enumerate(judges)][-1]
    return judge


def all_of(*judges):
    """Several judges of the same outcomes; all must pass."""
    if not judges:
        raise ValueError("all_of() needs at least one judge")

    def judge(outcomes, ref):
        return [passed(j(outcomes, ref)) for j in judges][-1]
    return judge


def provided(judge, guard, why: str, last: int = 1):
    """``judge`` on the check's first calls, counting only if ``guard`` passes on its ``last``
    calls (one by default).

    For a check whose own inputs a wrong answer can satisfy (the T = 1 case, where attention
    has one token to look at; a ValueError, which raising always gives): the guard is a call
    where only real work is right, so shape-only work earns nothing.
    """
    if last < 1:
        raise ValueError("provided() guards on one call or more")

    def judged(outcomes, ref):
        verdict = passed(judge(outcomes[:-last], ref))
        try:
            passed(guard(outcomes[-last:], ref))
        except Fail as f:
            raise led(why, f.verdict) from None
        return verdict
    return judged


def first_of(n: int):
    """``pick`` for a returned tuple: its n-th part."""
    return lambda value: value[n] if isinstance(value, (tuple, list)) and len(value) > n else value
