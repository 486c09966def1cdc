"""The worked examples: what the answer, and each catalogued mistake, return on the visible
checks' inputs. With them a visible check can grade a worked example and name the mistake
in a student's notebook, where no reference exists.

The visible examples are public (the notebooks print them), so their answers and mistaken
outputs give away nothing the notebook does not: they are computed once from the reference
and the catalogue (``build``, run by ``autograder notebooks``) and shipped as data in
``worked_examples.json``. tests/test_worked_examples.py fails when the file is stale. The
grader reads the same table for the same checks, so both say the same words.
"""
from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import course, wire
from .closeness import is_close, tolerance
from .errors import GraderError



def call_key(call) -> str:
    """A fingerprint of a call's function and inputs: a digest of their wire frame."""
    exact = inputs_exactly((call.func, call.args, call.kwargs))
    key = _KEYS.get(exact) if exact is not None else None
    if key is None:
        key = hashlib.sha256(wire.encode([call.func, list(call.args), call.kwargs])).hexdigest()[:24]
        if exact is not None and len(_KEYS) < MAX_KEYS:
            _KEYS[exact] = key
    return key


# The visible calls are the same for every student: each one's key is made once per process,
# found again by its inputs exactly (a frame to make and hash cost a fifth of a millisecond a
# submission). Bounded: a course has tens of visible calls.
MAX_KEYS = 4096
_KEYS: dict = {}


def inputs_exactly(x):
    """A hashable stand-in for ``x`` that equals another's only where their wire frames are the
    same (every type and dtype, shape and byte kept), or None for what it does not cover,
    whose key is then made from the frame each time."""
    t = type(x)
    if x is None or t is str or t is int or t is bool:
        return t, x
    if t is float:
        return t, x.hex()  # -0.0 apart from 0.0; every nan as one, as its frame writes it
    if t is np.ndarray and x.dtype.kind in "biuf":  # what a frame carries by its bytes
        return t, x.dtype.str, x.shape, x.tobytes()
    if t is tuple or t is list:
        items = tuple(inputs_exactly(v) for v in x)
        return None if None in items else (t, items)
    if t is dict:
        items = tuple((k, inputs_exactly(v)) for k, v in x.items())
        return None if any(v is None or type(k) is not str for k, v in items) else (t, items)
    if t is wire.Rng or t is wire.NpInt:  # NpInt(True) equals NpInt(1); their frames differ
        inner = inputs_exactly(x.seed if t is wire.Rng else x.value)
        return None if inner is None else (t, inner)
    if isinstance(x, np.generic):
        return t, x.dtype.str, x.tobytes()
    return None


def table_path() -> Path:
    """The current course's table (its package's worked_examples.json)."""
    return course.current().worked_examples


def _table() -> tuple[dict, dict]:
    return _read(course.current())


def load() -> None:
    """Read the table now (once per process): grade.py asks while the sandbox still starts,
    so the first judge does not (decoding it is a few milliseconds a cold grade waits for)."""
    _table()


@lru_cache(maxsize=4)  # a process grades for one course (a test may switch among a few)
def _read(of: course.Course) -> tuple[dict, dict]:
    """Course ``of``'s table: (call key -> the answer's value, call key -> [(misconception id,
    mistaken value)]). Kept by the course, not by its table's path, which every visible check
    would make again: that cost more than looking its answer up."""
    path = of.worked_examples
    doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"answers": {}, "mistakes": []}
    answers = {key: wire.decode(base64.b64decode(v)) for key, v in doc["answers"].items()}
    mistakes: dict[str, list] = {}
    for entry in doc["mistakes"]:
        mistakes.setdefault(entry["call"], []).append((entry["mistake"], wire.decode(base64.b64decode(entry["value"]))))
    return answers, mistakes


def answer(call):
    """The answer on a visible call: the worked example's expected value."""
    answers, _ = _table()
    key = call_key(call)
    if key not in answers:
        raise GraderError(f"no worked answer for a visible call of {call.func}: run `make notebooks`")
    return answers[key]


def name(call, value) -> str | None:
    """The catalogued mistake that returns ``value`` on ``call``, if any."""
    for mistake, stored in _table()[1].get(call_key(call), ()):
        if reproduces(value, stored):
            return mistake
    return None


def reproduces(got, stored) -> bool:
    """``got`` is ``stored``: same structure and shapes, floats within the dtype tolerance,
    nan exactly where the stored value has nan (an overflow reproduced)."""

    if isinstance(stored, np.ndarray):
        if not (isinstance(got, np.ndarray) and got.dtype.kind == "f" and got.shape == stored.shape):
            return False
        nan = np.isnan(stored)
        if not np.array_equal(np.isnan(got), nan):
            return False
        return is_close(np.where(nan, 0.0, got), np.where(nan, 0.0, stored), *tolerance(got, stored))
    if isinstance(stored, (tuple, list)):
        return (isinstance(got, (tuple, list)) and len(got) == len(stored)
                and all(reproduces(g, s) for g, s in zip(got, stored, strict=True)))
    if isinstance(stored, dict):
        return isinstance(got, dict) and set(got) == set(stored) and all(reproduces(got[k], stored[k]) for k in stored)
    if type(stored) is float:  # a measured number (key_bias_effect's): within the float64 tolerance
        return (isinstance(got, (float, np.floating)) and not isinstance(got, bool)
                and is_close(np.array([got], dtype=np.float64), np.array([stored]), *tolerance(np.array([stored]))))
    return type(got) is type(stored) and got == stored


def build(reference, visible_calls) -> dict:
    """The table's content: for each visible call, the answer, and each mistake of its
    function (the catalogue's own, then inherited ones) whose output there differs from it."""
    from .sandbox import call_one

    from .sandbox.frames import Ending, through_wire

    def run(fn, call):  # as the grader sees a value: through the wire
        return through_wire([call_one(fn, call.args, call.kwargs)])[0]

    answers, entries = {}, []
    for call in visible_calls:
        key = call_key(call)
        right = run(reference.solution(call.func), call)
        if right.ending is not Ending.RETURNED:
            continue  # a visible check that wants a ValueError: nothing to store
        answers[key] = base64.b64encode(wire.encode(right.value)).decode()
        found: list[tuple[str, object]] = []
        for mistake, fn in reference.mistakes(call.func):
            outcome = run(fn, call)
            if outcome.ending is not Ending.RETURNED or reproduces(outcome.value, right.value):
                continue  # a crash is named as a crash; a mistake invisible here names nothing
            found.append((mistake, outcome.value))
        for mistake, value in found:
            # An output that two different mistakes give, or that work without any attention
            # gives too (all zeros, one number everywhere), cannot say which mistake was made.
            ambiguous = degenerate(value) or any(other != mistake and reproduces(value, v) for other, v in found)
            repeated = any(e["call"] == key and e["mistake"] == mistake and reproduces(value, e["stored"])
                           for e in entries)  # the same mistake (another label) giving the same output here
            if not (ambiguous or repeated):
                entries.append({"exercise": call.func, "call": key, "mistake": mistake, "stored": value,
                                "value": base64.b64encode(wire.encode(value)).decode()})
    for e in entries:
        del e["stored"]
    return {"about": "made by `autograder notebooks` from solutions/; do not edit", "answers": answers,
            "mistakes": entries}


def degenerate(value) -> bool:
    """Arrays that are one number everywhere (zeros, a uniform row, nan throughout), in any part."""
    parts = value if isinstance(value, (tuple, list)) else [value]
    return any(isinstance(a, np.ndarray) and a.size > 1 and a.dtype.kind == "f"
               and (np.all(a == a.flat[0]) or np.all(np.isnan(a))) for a in parts)


def text(table: dict) -> str:
    return json.dumps(table, indent=1, sort_keys=True, allow_nan=True) + "\n"
