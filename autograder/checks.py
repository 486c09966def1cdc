"""What a check is, and the trusted comparisons every exercise's checks are built from.

A ``Check`` names the calls to make in the sandbox and a ``judge`` that turns what came
back into a ``Verdict``. Judges run in the grader's process on plain data. A visible
check's judge gets ``ref=None`` and must manage without the reference: the same check
runs in a student's notebook (selfcheck.py), where no reference exists.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from . import misconceptions
from .wire import Opaque

# Absolute and relative tolerance by the least precise float dtype among inputs and output.
TOLERANCE = {np.dtype(np.float64): (1e-6, 1e-6), np.dtype(np.float32): (1e-4, 1e-4)}
SHOWN = 4  # rows and columns of an array a student reads in feedback


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    echo: bool = False  # send the input arrays back after the call, to see if they changed

    def as_job(self):
        return (self.func, self.args, self.kwargs, self.echo)


@dataclass
class Verdict:
    passed: bool
    message: str = ""
    misconception: str | None = None
    # (expected, got) attention weights of one sequence, for the feedback page's heatmaps
    heatmap: tuple | None = None


@dataclass(frozen=True)
class Check:
    name: str  # unique within an assignment, starts with the exercise name
    points: float
    calls: tuple[Call, ...]
    judge: Callable[[list[dict], Any], Verdict]
    visible: bool = False


class Fail(Exception):
    """Raised inside a judge to end it with a failing verdict."""

    def __init__(self, message: str, misconception: str | None = None, heatmap=None):
        super().__init__(message)
        self.verdict = Verdict(False, message, misconception, heatmap)


def run_judge(check: Check, outcomes: list[dict], ref) -> Verdict:
    try:
        return check.judge(outcomes, ref)
    except Fail as f:
        return f.verdict
    except Exception as e:  # noqa: BLE001 - an output of a form no judge foresaw fails only this check
        func = check.name.split(":")[0]
        return Verdict(False, f"{func} returned something of an unexpected form, so this check could not "
                              f"read it ({type(e).__name__}: {' '.join(str(e).split())[:200]}).")


# ---------------------------------------------------------------- reading outcomes

def returned(outcome: dict, func: str):
    """The value a call returned, or a Fail that explains the exception it raised."""
    if "error" in outcome:
        kind, msg = outcome["error"], outcome.get("message", "")
        if kind == "NameError" and msg.startswith("no function named"):
            raise Fail(f"{func} is not defined in your submission: keep the function's name and "
                       "signature exactly as given.")
        where = f" ({outcome['where']})" if outcome.get("where") else ""
        if kind == "NotImplementedError":
            raise Fail(misconceptions.explain("not_implemented", func=func), "not_implemented")
        raise Fail(f"{func} raised {msg}{where}. " + misconceptions.explain("crashed", func=func), "crashed")
    return outcome.get("value")


def raised(outcome: dict, func: str, exc: str, why: str) -> None:
    """Require that a call raised ``exc`` (by class name)."""
    if outcome.get("error") == exc:
        return
    if outcome.get("error") == "NotImplementedError":
        raise Fail(misconceptions.explain("not_implemented", func=func), "not_implemented")
    got = f"raised {outcome.get('message')}" if "error" in outcome else "returned normally"
    raise Fail(f"{func} should raise {exc} {why}, but it {got}.")


def as_array(value, func: str, what: str = "the result") -> np.ndarray:
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return value
    if isinstance(value, Opaque):
        kind = value.type_name
    else:
        kind = type(value).__name__
    raise Fail(f"{func} should return {what} as a numpy float array, but it returned a {kind}.")


def parts(value, n: int, func: str, names: str) -> tuple:
    """Unpack a returned tuple of ``n`` parts (``names`` describes them for the student)."""
    if isinstance(value, (tuple, list)) and len(value) == n:
        return tuple(value)
    got = f"{len(value)} values" if isinstance(value, (tuple, list)) else "a single value"
    raise Fail(f"{func} should return {n} values ({names}), but it returned {got}.")


def leaves_inputs_unchanged(call: Call, points: float = 1) -> Check:
    """A check that ``call`` does not write into its input arrays, judged here, in the grader."""
    echo = replace(call, echo=True)
    before = [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray)]

    def judge(outcomes, ref):
        value = returned(outcomes[0], call.func)
        if ref is not None and _shapes(value) != _shapes(ref.output(call)):
            # Leaving inputs alone earns nothing for a function that does not do the work.
            raise Fail(f"{call.func} returned results of the wrong shape, so this check does not count yet.")
        after = outcomes[0].get("inputs_after")
        if not isinstance(after, list) or len(after) != len(before) or any(
                not isinstance(a, np.ndarray) or a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)
                for a, b in zip(after, before)):
            raise Fail(f"{call.func} changed one of its input arrays in place (for example with `-=`, "
                       "`*=` or `out=`). Work on new arrays: callers keep using their inputs after the call.")
        return Verdict(True, f"{call.func} leaves its inputs unchanged.")
    return Check(f"{call.func}: leaves its inputs unchanged", points, (echo,), judge)


def _shapes(value) -> list:
    """The shapes of the arrays in a returned value, in order: its form, without its numbers."""
    if isinstance(value, (tuple, list)):
        return [_shapes(v) for v in value]
    return getattr(value, "shape", type(value).__name__)


# ---------------------------------------------------------------- comparing arrays

def tolerance(*arrays) -> tuple[float, float]:
    """The looser tolerance wherever an input or the output is narrower than float64."""
    narrow = any(a.dtype.kind == "f" and a.dtype.itemsize < 8 for a in arrays if isinstance(a, np.ndarray))
    return TOLERANCE[np.dtype(np.float32 if narrow else np.float64)]


def is_close(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> bool:
    """Same shape and every entry within tolerance; -inf must match -inf exactly."""
    return got.shape == expected.shape and bool(
        np.allclose(got.astype(np.float64), expected.astype(np.float64), atol=atol, rtol=rtol))


def describe_difference(got: np.ndarray, expected: np.ndarray, what: str, atol: float, rtol: float) -> str:
    """pytest-approx style, smaller: shape first, then how many differ, then a few of them."""
    if got.shape != expected.shape:
        return f"{what} has shape {got.shape}, expected {expected.shape}."
    g, e = got.astype(np.float64), expected.astype(np.float64)
    bad = ~np.isclose(g, e, atol=atol, rtol=rtol)
    n_bad = int(bad.sum())
    with np.errstate(invalid="ignore"):
        diffs = np.where(bad, np.abs(g - e), 0.0)
    worst = float(np.nanmax(diffs)) if np.isfinite(diffs).any() else float("nan")
    lines = [f"{what}: {n_bad} of {e.size} entries differ (largest difference {worst:.3g}; "
             f"allowed {atol:g} + {rtol:g}·|expected|)."]
    if e.ndim >= 2:
        lead = np.unravel_index(int(np.argmax(bad.reshape(-1))), e.shape)[:-2]
        g2, e2 = g[lead], e[lead]
        label = f" [{', '.join(map(str, lead))}]" if lead else ""
        lines.append(side_by_side(g2, e2, f"yours{label}", "expected"))
    else:
        lines.append(side_by_side(g.reshape(1, -1), e.reshape(1, -1), "yours", "expected"))
    return "\n".join(lines)


def side_by_side(got: np.ndarray, expected: np.ndarray, left: str, right: str) -> str:
    """Two small matrices next to each other, cut to SHOWN rows and columns."""
    def rows(m):
        m2 = m[:SHOWN, :SHOWN]
        out = [" ".join(f"{v:8.3f}" for v in r) + (" ..." if m.shape[1] > SHOWN else "") for r in m2]
        if m.shape[0] > SHOWN:
            out.append("...")
        return out
    a, b = rows(got), rows(expected)
    width = max(len(x) for x in a + [left])
    out = [f"{left:<{width}}   {right}"]
    for i in range(max(len(a), len(b))):
        out.append(f"{a[i] if i < len(a) else '':<{width}}   {b[i] if i < len(b) else ''}")
    return "\n".join(out)


def expect_close(got, expected: np.ndarray, func: str, what: str, *inputs, atol: float | None = None) -> None:
    """Fail with a readable difference unless ``got`` matches ``expected``.

    ``atol`` overrides the dtype's tolerance, for worked numbers given to 3 decimals.
    """
    got = as_array(got, func, what)
    atol, rtol = (atol, 0.0) if atol is not None else tolerance(got, *inputs)
    if not is_close(got, expected, atol, rtol):
        raise Fail(describe_difference(got, expected, f"{func}'s {what}", atol, rtol))


def matches_reference(call: Call, pick: Callable[[Any], Any] = lambda v: v, what: str = "output",
                      heatmap: Callable[[Any], Any] | None = None):
    """A judge: the student's output (``pick`` of it) equals the reference's on ``call``.

    On a mismatch it asks misconceptions.diagnose which known mistake, run on the same
    inputs, reproduces the student's output, and explains that mistake.
    """
    def judge(outcomes, ref):
        value = pick(returned(outcomes[0], call.func))
        got = as_array(value, call.func, what)
        expected = np.asarray(pick(ref.output(call)))
        inputs = [a for a in call.args if isinstance(a, np.ndarray)]
        atol, rtol = tolerance(got, *inputs)
        pic = None
        if heatmap is not None:
            pic = (heatmap(expected), heatmap(got)) if got.shape == expected.shape else None
        if is_close(got, expected, atol, rtol):
            return Verdict(True, f"{call.func}'s {what} matches.", heatmap=pic)
        found = misconceptions.diagnose(ref, call, got, pick, atol, rtol)
        if found is None and not np.isfinite(got).all() and np.isfinite(expected).all():
            found = "unstable_softmax"
        text = describe_difference(got, expected, f"{call.func}'s {what}", atol, rtol)
        if found:
            text = misconceptions.explain(found, func=call.func, **misconceptions.context(call)) + "\n" + text
        raise Fail(text, found, pic)
    return judge


def each(*judges):
    """A judge for a check of several calls: judge i sees call i; all must pass."""
    def judge(outcomes, ref):
        verdict = Verdict(True)
        for i, j in enumerate(judges):
            verdict = j(outcomes[i : i + 1], ref)
        return verdict
    return judge


def first_of(n: int):
    """``pick`` for a returned tuple: its n-th part."""
    return lambda value: value[n] if isinstance(value, (tuple, list)) and len(value) > n else value
