"""The schema of what a child sends the grader, and the typed values it parses into.

Everything that crosses from a child is an adversary's bytes: a submission can write to
the results pipe it inherits, in the middle of the child's own frames. protocol.py cuts
the stream into frames (a kind byte, a length under the limit, the payload); this module
parses each payload into a typed value or says it is malformed, and nothing past it reads
a child's bytes, dicts or lists: the judges (checks.py) get ``CallOutcome``s.

The frames a child sends, in this order (handle.py's ``_attempt`` enforces the order):

    SETUP_OK                      empty payload, once, when it has confined itself
    SETUP_FAILED                  the reason, UTF-8 text, instead of SETUP_OK
    then, after the grader's PLAN and JOB frames:
    ( CELL [PROBLEM] )*           CELL: the cell's index, ASCII digits (``index``);
                                  PROBLEM: what the same cell raised, a wire.py frame
                                  {"cell": <index>, "error": <name>, "message": <line>}
                                  (``problem``)
    ( EXERCISE RESULT )*          EXERCISE: an exercise's index, at least the plan's start
                                  and below the job's count; RESULT: that exercise's outcomes
                                  (``result``)
    DONE                          empty payload

A RESULT payload is one wire.py frame holding a list with one record per call, in the
job's order, each one of the dicts ``child.call_one`` builds and nothing else:

    {"value": <value>, "seconds": <float>}                      it returned
    {"value": <value>, "seconds": <float>, "inputs_after": [..]} it returned, inputs echoed
    {"error": <name>, "message": <line>[, "where": <place>]}    it raised
    {"undefined": true}                                         no function of that name

with every field of its type and size (``_FIELDS``). A RESULT that does not parse as a
list of records is the exercise's malformed outcome (``Malformed``); a record that does
not parse is that call's (``Ending.MALFORMED``); either way the student's loss, with a
line saying what came back, and never a grader error: only a judge's own failure on
well-typed outcomes is the grader's.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import wire

# Sizes of the text a child sends. call_one and one_line make nothing longer: a longer one
# was forged.
MAX_LINE = 300  # a message, a problem, a setup failure: child.one_line's cut
MAX_NAME = 200  # an exception's class name (call_one cuts it here)
MAX_WHERE = 100  # "notebook cell 12 line 3"
MAX_INDEX_DIGITS = 10
# What a student reads, after the function's name, for a RESULT or a call that does not parse.
NOT_A_RESULT = "sent back something that is not a result"


class Malformed(ValueError):
    """A payload that does not parse; the message says what is wrong, in a few words."""


class Ending(enum.Enum):
    RETURNED = "returned"
    RAISED = "raised"
    UNDEFINED = "undefined"  # the submission defines no function of the name asked for
    MALFORMED = "malformed"  # the child's record of the call did not parse


@dataclass(frozen=True)
class CallOutcome:
    """One call, as the grader knows it. RETURNED: ``value`` (wire.py's plain data: None,
    bool, int, float, str, bytes, tuples, lists, dicts, numeric arrays and scalars, Rng,
    NpInt, Opaque; never wire.Malformed), ``seconds``, and ``inputs_after`` when the call
    echoed its inputs (each an array, or an Opaque for one the function turned into
    something else). RAISED: the exception's class name ``error``, its ``message`` and
    ``where`` in the submission. UNDEFINED: no other field. MALFORMED: ``message`` says what
    was wrong."""
    ending: Ending
    value: Any = None
    seconds: float = 0.0
    inputs_after: tuple | None = None
    error: str = ""
    message: str = ""
    where: str = ""

    @classmethod
    def returned(cls, value, seconds: float = 0.0, inputs_after: tuple | None = None) -> "CallOutcome":
        return cls(Ending.RETURNED, value, seconds, inputs_after)

    @classmethod
    def raised(cls, error: str, message: str = "", where: str = "") -> "CallOutcome":
        return cls(Ending.RAISED, error=error, message=message, where=where)

    @classmethod
    def undefined(cls) -> "CallOutcome":
        return cls(Ending.UNDEFINED)

    @classmethod
    def malformed(cls, why: str) -> "CallOutcome":
        return cls(Ending.MALFORMED, message=why)


# ---------------------------------------------------------------- the small frames

def index(payload: bytes, bound: int) -> int:
    """CELL's and EXERCISE's payload: an index below ``bound``, in ASCII digits."""
    if not (0 < len(payload) <= MAX_INDEX_DIGITS and payload.isdigit()):  # bytes.isdigit: ASCII only
        raise Malformed("an index that is not a number")
    i = int(payload)
    if i >= bound:
        raise Malformed("an index out of range")
    return i


@dataclass(frozen=True)
class CellRaised:
    """A PROBLEM frame: the cell that raised, the exception's class name and the exception
    as one line ("ValueError: bad shapes")."""
    cell: int
    error: str
    message: str


def problem(payload: bytes) -> CellRaised:
    """PROBLEM's payload: a wire frame of one record, checked field by field (``_PROBLEM``)."""
    try:
        doc = wire.decode(payload)
    except Exception as e:  # noqa: BLE001 - untrusted bytes: whatever fails, the frame is not one
        raise Malformed(f"a problem that is not a frame of the grader's wire format ({type(e).__name__})") from None
    if type(doc) is not dict or frozenset(doc) != frozenset(_PROBLEM):
        raise Malformed(f"{_what(doc)} where a cell's problem belongs")
    for key, check in _PROBLEM.items():
        why = check(doc[key])
        if why:
            raise Malformed(f"a problem's {key!r} that is {why}")
    return CellRaised(doc["cell"], doc["error"], doc["message"])


def line(payload: bytes) -> str:
    """A line of text (SETUP_FAILED's): UTF-8 of at most MAX_LINE characters."""
    try:
        text = payload.decode()
    except UnicodeDecodeError:
        raise Malformed("text that is not UTF-8") from None
    if len(text) > MAX_LINE or "\n" in text:
        raise Malformed("text longer than one line")
    return text


def empty(payload: bytes) -> None:
    """SETUP_OK's and DONE's payload: nothing."""
    if payload:
        raise Malformed("a payload where none belongs")


# ---------------------------------------------------------------- RESULT

def result(blob: bytes) -> tuple[CallOutcome, ...]:
    """RESULT's payload: one outcome per call. Raises Malformed when it is not a wire frame
    holding a list of records; a record that does not parse is a MALFORMED outcome."""
    try:
        doc, marked = wire.decode_marked(blob)
    except Exception as e:  # noqa: BLE001 - untrusted bytes: whatever fails, the frame is not one
        raise Malformed(f"not a frame of the grader's wire format ({type(e).__name__})") from None
    if type(doc) is not list:
        raise Malformed(f"{_what(doc)} where the list of calls belongs")
    fields = _FIELDS if marked else _UNMARKED_FIELDS
    return tuple([record(r, fields) for r in doc])


def record(doc, fields: dict | None = None) -> CallOutcome:
    """One call's record (a decoded dict), checked field by field with ``fields`` (``_FIELDS``
    unless the record's frame is known to hold no wire.Malformed: ``_UNMARKED_FIELDS``)."""
    fields = _FIELDS if fields is None else fields
    if type(doc) is not dict:
        return CallOutcome.malformed(f"{_what(doc)} where a call's record belongs")
    keys = frozenset(doc)
    shape = _SHAPES.get(keys)
    if shape is None:
        return CallOutcome.malformed(f"a call's record with the fields {sorted(keys)[:6]}"[:120])
    for key in keys:
        why = fields[key](doc[key])
        if why:
            return CallOutcome.malformed(f"a call's {key!r} that is {why}")
    if shape is Ending.RETURNED:  # most records, first: its outcome made directly, with no classmethod between
        after = doc.get("inputs_after")
        return CallOutcome(shape, doc["value"], doc["seconds"], None if after is None else tuple(after))
    if shape is Ending.RAISED:
        return CallOutcome.raised(doc["error"], doc["message"], doc.get("where", ""))
    return CallOutcome.undefined()


def through_wire(records: list[dict]) -> tuple[CallOutcome, ...]:
    """``call_one``'s records as the grader reads them from a child: for the notebook's own
    self-checks and the worked examples, which call in-process and must see what grading sees."""
    return result(wire.encode(records))


def match(outcomes: tuple[CallOutcome, ...], echoes: list[bool]) -> tuple[CallOutcome, ...]:
    """The outcomes held against the job's calls (``echoes``: whether each asked for its
    inputs back): one per call, and inputs echoed exactly where asked. Raises Malformed
    when the count differs; a call that returned without the echo it was asked for, or
    with one it was not, is MALFORMED."""
    if len(outcomes) != len(echoes):
        raise Malformed(f"{len(outcomes)} results for {len(echoes)} calls")
    return tuple(o if o.ending is not Ending.RETURNED or (o.inputs_after is not None) == echo
                 else CallOutcome.malformed("a call's record with its inputs echoed where the grader did not "
                                            "ask, or without them where it did")
                 for o, echo in zip(outcomes, echoes, strict=True))


# ---------------------------------------------------------------- the fields of a record

def _text(limit: int):
    def check(x) -> str:
        if type(x) is not str:
            return f"{_what(x)}, not text"
        if len(x) > limit or "\n" in x:
            return f"text that is not one line of at most {limit} characters"
        return ""
    return check


def _seconds(x) -> str:
    if type(x) is not float or not math.isfinite(x) or x < 0:
        return f"{_what(x)}, not a number of seconds"
    return ""


def _value(x) -> str:
    bad = _find_malformed(x)
    return f"not plain data ({bad.why})" if bad else ""


def _plain(x) -> str:
    """A value from a frame wire.decode_marked found no Malformed in: plain data throughout."""
    return ""


def _true(x) -> str:
    return "" if x is True else f"{_what(x)}, not true"


def _cell(x) -> str:
    if type(x) is not int or not 0 <= x < 1 << 30:
        return f"{_what(x)}, not a cell's index"
    return ""


def _inputs(x) -> str:
    if type(x) is not list or not all(isinstance(a, (np.ndarray, wire.Opaque)) for a in x):
        return f"{_what(x)}, not a list of arrays"
    return ""


_FIELDS = {"value": _value, "seconds": _seconds, "inputs_after": _inputs,
           "error": _text(MAX_NAME), "message": _text(MAX_LINE), "where": _text(MAX_WHERE),
           "undefined": _true}
_UNMARKED_FIELDS = {**_FIELDS, "value": _plain}  # _value's walk would find nothing
_PROBLEM = {"cell": _cell, "error": _text(MAX_NAME), "message": _text(MAX_LINE)}
_SHAPES = {frozenset({"value", "seconds"}): Ending.RETURNED,
           frozenset({"value", "seconds", "inputs_after"}): Ending.RETURNED,
           frozenset({"error", "message"}): Ending.RAISED,
           frozenset({"error", "message", "where"}): Ending.RAISED,
           frozenset({"undefined"}): Ending.UNDEFINED}


def _find_malformed(x) -> wire.Malformed | None:
    """The first wire.Malformed in a decoded value (its depth is bounded by wire's decode)."""
    if isinstance(x, wire.Malformed):
        return x
    items = x.values() if type(x) is dict else x if type(x) in (list, tuple) else ()
    for item in items:
        found = _find_malformed(item)
        if found:
            return found
    return None


def _what(x) -> str:
    """A few words on what a forged field held."""
    if isinstance(x, wire.Malformed):
        return f"something malformed ({x.why})"
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape[:8]}"
    if x is None or type(x) is bool:
        return repr(x)
    return {int: "a number", float: "a number", str: "text", list: "a list", tuple: "a tuple",
            dict: "a dict", bytes: "bytes"}.get(type(x), f"a {type(x).__name__}")
