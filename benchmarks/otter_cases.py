"""The checks of benchmarks/otter_vs_batch.py's otter assignment: its OK tests call ``agrees``.

Copied into otter's autograder zip beside ``otter_cases.pkl`` (the fixed inputs and the
reference's outcomes on them, which the benchmark computed), it runs in otter's kernel
beside a student's notebook, so it imports nothing of this project: a case passes when each
of its calls on the student's functions ends as the reference's did (the same values within
the tolerance of their dtypes, or the same exception) and leaves the inputs it must not
change unchanged.
"""
from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np

with open(Path(__file__).with_name("otter_cases.pkl"), "rb") as f:
    CASES = pickle.load(f)  # written by the benchmark, never by a student


def same(got, want, atol: float, rtol: float) -> bool:
    """``got`` is ``want``: arrays of the same shape and kind, close entry by entry (an
    infinity only the same infinity, nan never); containers item by item; the rest equal."""
    if isinstance(want, np.ndarray):
        return (isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype.kind == want.dtype.kind
                and bool(np.allclose(got, want, atol=atol, rtol=rtol)))
    if isinstance(want, (tuple, list)):
        return (isinstance(got, (tuple, list)) and len(got) == len(want)
                and all(same(g, w, atol, rtol) for g, w in zip(got, want, strict=True)))
    if isinstance(want, dict):
        return (isinstance(got, dict) and got.keys() == want.keys()
                and all(same(got[k], want[k], atol, rtol) for k in want))
    return bool(got == want)


def unchanged(before, after) -> bool:
    """The inputs after a call hold what they held before it (nan where it was)."""
    return all(np.array_equal(b, a, equal_nan=True) if isinstance(b, np.ndarray) else b == a
               for b, a in zip(before, after, strict=True))


def _agrees(functions: dict, call: dict) -> bool:
    """Whether the student's function ends ``call`` as the reference did."""
    args, kwargs = copy.deepcopy((call["args"], call["kwargs"]))  # the inputs' own copy, as the engine's child makes
    try:
        got = functions[call["func"]](*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the student's exception is an outcome, compared with the reference's
        if call["raises"] is None or not isinstance(e, call["raises"]):
            return False
    else:
        if call["raises"] is not None or not same(got, call["returns"], *call["tolerance"]):
            return False
    return not call["echo"] or unchanged((*call["args"], *call["kwargs"].values()), (*args, *kwargs.values()))


_MADE: dict[tuple[str, int], bool] = {}  # a call that several cases read is made once, as the engine makes it


def agrees(functions: dict, exercise: str, index: int) -> bool:
    """Whether case ``index`` of ``exercise`` passes with the student's ``functions`` (name -> function):
    every call it reads agrees (each is made, as the engine's checks make every call)."""
    calls = CASES[exercise]["calls"]
    for i in CASES[exercise]["cases"][index]:
        if (exercise, i) not in _MADE:
            _MADE[exercise, i] = _agrees(functions, calls[i])
    return all(_MADE[exercise, i] for i in CASES[exercise]["cases"][index])
