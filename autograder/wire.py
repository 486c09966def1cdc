"""Plain data across the sandbox boundary: JSON for structure, raw bytes for arrays.

The sandboxed child encodes what the student's functions returned, and the grader decodes
it (the job going the other way is the grader's own data: sandbox/job.py; the worked
examples' table is stored in it too). Decoding never unpickles and never builds anything
but None, bools, numbers, strings, bytes, tuples, lists, dicts with string keys, numpy
arrays and scalars of a bool, int, uint or float dtype (a plain ndarray, never a subclass),
and the placeholders below (``Rng``, ``NpInt``, ``Opaque``, ``Malformed``), so a submission
cannot smuggle an object with a lying ``__eq__`` back to the grader.

A frame (``encode``) is an 8-byte big-endian length, that many bytes of UTF-8 JSON
``{"doc": ..., "arrays": [[key, dtype, shape, offset, size], ...]}``, then the arrays' raw
C-order bytes back to back (``offset`` and ``size`` in bytes, counted from the end of the
JSON). Not ``.npz``, not a pickle. In ``doc``, JSON's own null, booleans, numbers and
strings stand for themselves, and every other value is a one-key object: ``$array`` (a key
of the array table), ``$bytes``, ``$scalar`` (with its ``dtype``), ``$tuple``, ``$list``,
``$dict``, ``$rng``, ``$npint`` or ``$opaque`` (a type's name). What encode cannot send as
plain data (an object, a complex or string array, a list of more than MAX_ITEMS items, a
value nested more than MAX_DEPTH deep) travels as ``$opaque`` and decodes as ``Opaque``.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_DEPTH = 8
MAX_ITEMS = 10_000
# An int past this many bits travels as Opaque: json refuses to print or parse one of more
# than 4,300 digits (sys.get_int_max_str_digits), and no exercise returns such a number.
MAX_INT_BITS = 10_000


@dataclass(frozen=True)
class Rng:
    """Stands for ``np.random.default_rng(seed)``: built fresh on the far side."""
    seed: int


@dataclass(frozen=True)
class NpInt:
    """Stands for ``np.int64(value)``: some exercises must accept numpy integers."""
    value: int


@dataclass(frozen=True)
class Opaque:
    """A returned value that is not plain data (a list of objects, a class instance...)."""
    type_name: str


@dataclass(frozen=True)
class Malformed:
    """Where a decoded frame holds something ``encode`` never writes (an unknown tag, an array
    entry that does not fit its bytes, a scalar of the wrong type, a list longer than
    MAX_ITEMS, a doc nested deeper than encode nests): a forged frame. Not a value a student
    returned: sandbox/frames.py makes the call that holds one a malformed outcome."""
    why: str


def encode(tree) -> bytes:
    """One frame: 8-byte JSON length, JSON, then the arrays' raw bytes back to back."""
    arrays: dict[int, tuple[str, np.ndarray]] = {}
    doc = _to_json(tree, arrays, 0)
    table, chunks, offset = [], [], 0
    for key, a in arrays.values():
        data = a.tobytes()
        table.append([key, a.dtype.str, list(a.shape), offset, len(data)])
        chunks.append(data)
        offset += len(data)
    header = json.dumps({"doc": doc, "arrays": table}, allow_nan=True).encode()
    return len(header).to_bytes(8, "big") + header + b"".join(chunks)


MAX_HEADER = 16 << 20  # bytes of JSON: a forged frame costs the grader bounded time to parse


def decode(blob: bytes):
    """The value ``encode`` framed. A frame that is not one raises (ValueError, TypeError,
    KeyError, OverflowError...; the caller treats any exception as unreadable data): cut short,
    a header over MAX_HEADER bytes, JSON that is not ``{"doc", "arrays"}``, an array entry that
    is not five fields. Inside a readable frame, whatever ``encode`` would not have written (an
    unknown tag, an array that is missing, not numeric, or whose dtype, shape, offset or size do
    not fit the bytes, a scalar that does not fit its dtype) decodes as ``Malformed`` where it
    stands, so the rest of the frame still reads."""
    return decode_marked(blob)[0]


def decode_marked(blob: bytes) -> tuple[Any, bool]:
    """``decode``'s value, and whether a ``Malformed`` stands anywhere in it: a reader that must
    find every one (sandbox/frames.py) need not walk a value that holds none."""
    n = int.from_bytes(blob[:8], "big")
    if n > MAX_HEADER:
        raise ValueError(f"a header of {n} bytes is over the limit")
    head = json.loads(blob[8 : 8 + n].decode())
    if type(head) is not dict or set(head) != {"doc", "arrays"} or type(head["arrays"]) is not list:
        raise ValueError("a header that is not {doc, arrays}")
    body = memoryview(blob)[8 + n :]
    arrays = {}
    for key, dtype, shape, offset, size in head["arrays"]:
        if type(key) is not str or key in arrays:
            raise ValueError("an array table whose keys are not distinct names")
        arrays[key] = _array(body, dtype, shape, offset, size)
    doc = _Doc(arrays)
    return doc.value(head["doc"], 0), doc.marked


# The dtypes encode sends: a byte order, a kind of bool, int, uint or float, an item size.
_DTYPE = re.compile(r"[<>|=]?[biuf][0-9]{1,2}")
MAX_NDIM = 64  # numpy's own limit


# What numpy read each text _DTYPE let by as (None for "i3", "f1": no such dtype, or not a
# number type): a child sends a dtype with every array, and those texts are a few hundred.
_READ: dict[str, np.dtype | None] = {}


def _dtype(text) -> np.dtype | None:
    """The numeric dtype ``text`` names, or None: nothing else is even handed to numpy."""
    if not isinstance(text, str):
        return None
    if text in _READ:  # before the pattern: a text read once needs no second match
        return _READ[text]
    if not _DTYPE.fullmatch(text):
        return None
    try:
        dt = np.dtype(text)
    except (TypeError, ValueError):
        dt = None
    _READ[text] = dt if dt is not None and dt.kind in "biuf" else None
    return _READ[text]


def _array(body: memoryview, dtype, shape, offset, size):
    """One entry of the array table: the array, or Malformed saying what does not fit."""
    dt = _dtype(dtype)
    if dt is None:
        return Malformed(f"an array of dtype {str(dtype)[:40]!r}, not a number type")
    if type(shape) is not list or len(shape) > MAX_NDIM or not _sizes(offset, size, *shape):
        return Malformed("an array whose shape, offset or size are not counts")
    if offset + size > len(body) or math.prod(shape) * dt.itemsize != size:
        return Malformed(f"an array whose {_short(size)} bytes do not fit its shape {_short(shape)}")
    try:  # an array over the body's bytes, then its copy: two arrays made, not three
        return np.ndarray(tuple(shape), dt, body, offset).copy()
    except (ValueError, OverflowError, MemoryError):  # a zero-size shape of dimensions past intp
        return Malformed(f"an array of shape {_short(shape)}, which numpy cannot build")


def _short(x) -> str:
    """A forged number or list in a few characters: it goes into a student's message."""
    text = repr(x)
    return text if len(text) <= 40 else text[:39] + "…"


def _sizes(*values) -> bool:
    """Whether an array entry's offset, size and dimensions are counts: ints, none negative."""
    for v in values:  # a loop, not all() over a generator: it runs for every array a child sends
        if type(v) is not int or v < 0:
            return False
    return True


def _to_json(x, arrays, depth):
    if depth > MAX_DEPTH:
        return {"$opaque": "deeply nested value"}
    t = type(x)  # the common exact types first: a job holds thousands of nodes
    if t is str or t is float or t is bool or x is None:
        return x
    if t is int:
        return x if x.bit_length() <= MAX_INT_BITS else {"$opaque": f"int of {x.bit_length()} bits"}
    if t is np.ndarray and x.dtype.kind in "biuf":
        return {"$array": _add(arrays, x)}
    if t is tuple or t is list:
        if len(x) > MAX_ITEMS:
            return {"$opaque": f"{t.__name__} of {len(x)} items"}
        return {"$" + t.__name__: [_to_json(v, arrays, depth + 1) for v in x]}
    if isinstance(x, str):  # a subclass (np.str_): json writes its text, calling none of its methods
        return x
    if isinstance(x, bytes):
        return {"$bytes": _add(arrays, np.frombuffer(x, dtype=np.uint8))}
    if isinstance(x, Rng):
        return {"$rng": x.seed}
    if isinstance(x, NpInt):
        return {"$npint": x.value}
    if isinstance(x, Opaque):
        return {"$opaque": x.type_name}
    if isinstance(x, np.generic) and x.dtype.kind in "biuf":
        # float(): a longdouble's item() is a longdouble, which json cannot write.
        return {"$scalar": float(x) if x.dtype.kind == "f" else x.item(), "dtype": x.dtype.str}
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            return {"$opaque": f"numpy array of dtype {x.dtype}"}
        return {"$array": _add(arrays, x)}
    if type(x) is dict:
        if len(x) > MAX_ITEMS or not all(type(k) is str for k in x):
            return {"$opaque": "dict with non-string keys or too many items"}
        return {"$dict": {k: _to_json(v, arrays, depth + 1) for k, v in x.items()}}
    return {"$opaque": type(x).__name__}


def _add(arrays: dict, a: np.ndarray) -> str:
    """Store an array once however often the tree holds it; a plain ndarray, never a subclass."""
    if id(a) not in arrays:
        a = np.asarray(a)  # a plain ndarray; not ascontiguousarray, which makes 0-d arrays 1-d
        arrays[id(a)] = (f"a{len(arrays)}", a if a.flags.c_contiguous else a.copy(order="C"))
    return arrays[id(a)][0]


_DEEPEST = MAX_DEPTH + 1  # encode stops at MAX_DEPTH with an $opaque
_TOO_DEEP = "a value nested deeper than the grader's wire nests"
# JSON's own null, booleans, floats and strings read back as themselves at any size (_PLAIN);
# so do its ints of at most MAX_INT_BITS bits (_LEAVES, with that check beside it).
_PLAIN = frozenset({type(None), bool, float, str})
_LEAVES = _PLAIN | {int}


class _Doc:
    """A frame's doc read back against its array table: what encode's ``_to_json`` wrote, and
    anything it would not write as Malformed. ``marked``: whether a Malformed was put anywhere."""

    def __init__(self, arrays: dict):
        self.arrays, self.marked = arrays, False

    def malformed(self, why: str) -> Malformed:
        self.marked = True
        return Malformed(why)

    def items(self, container: list | dict, keys, depth: int) -> None:
        """A container's items read back at ``depth``, in place: the parsed list or dict is this
        decode's own, shared with nothing, and making another for each costs more than the
        reading. A leaf that reads back as itself stays as it is, without a call."""
        for key in keys:
            doc = container[key]
            if depth > _DEEPEST or type(doc) not in _LEAVES or type(doc) is int and doc.bit_length() > MAX_INT_BITS:
                container[key] = self.value(doc, depth)

    def value(self, doc, depth: int):
        """``doc`` read back, at ``depth``."""
        if depth > _DEEPEST:
            return self.malformed(_TOO_DEEP)
        t = type(doc)
        if t in _PLAIN:
            return doc
        if t is int:
            return doc if doc.bit_length() <= MAX_INT_BITS else self.malformed("an int of more bits than travel "
                                                                               "as a number")
        size = len(doc) if t is dict else 0
        # unpacked by its size, its keys then their values, not as (tag, val), *rest of its items:
        # this runs for every value a child sends
        if size == 1:
            (tag,) = doc
            val, dtype = doc[tag], None
        elif size == 2:
            tag, key = doc
            val, dtype = doc[tag], doc[key]
            if tag != "$scalar" or key != "dtype":
                return self.malformed("a value of two keys that is not a scalar")
        else:
            return self.malformed("a bare JSON list or object where a tagged value belongs")
        # the tags in the order of how often a child sends them: this runs for every value
        if tag == "$array" or tag == "$bytes":
            a = self.arrays.get(val) if type(val) is str else None
            if type(a) is not np.ndarray:  # the table holds only plain arrays and Malformed
                if type(a) is Malformed:
                    self.marked = True
                    return a
                return self.malformed(f"{tag} naming no array of the frame")
            if tag == "$array":
                return a
            return a.tobytes() if a.dtype == np.uint8 and a.ndim == 1 else self.malformed("$bytes of an array that "
                                                                                           "is not bytes")
        if tag == "$tuple" or tag == "$list":
            if type(val) is not list or len(val) > MAX_ITEMS:
                return self.malformed(f"{tag} of something that is not a list of at most {MAX_ITEMS} items")
            self.items(val, range(len(val)), depth + 1)
            return tuple(val) if tag == "$tuple" else val
        if tag == "$dict":
            if type(val) is not dict or len(val) > MAX_ITEMS:
                return self.malformed(f"$dict of something that is not an object of at most {MAX_ITEMS} keys")
            self.items(val, val.keys(), depth + 1)
            return val
        if tag == "$scalar":
            scalar = _scalar(val, dtype)
            if type(scalar) is Malformed:
                self.marked = True
            return scalar
        if tag == "$rng" or tag == "$npint":
            if type(val) is not int or val.bit_length() > 64:
                return self.malformed(f"{tag} of something that is not a 64-bit int")
            return Rng(val) if tag == "$rng" else NpInt(val)
        if tag == "$opaque":
            return Opaque(val[:200]) if type(val) is str else self.malformed("$opaque of something that is not a name")
        return self.malformed(f"an unknown tag {str(tag)[:40]!r}")


def _scalar(val, dtype):
    """A numpy scalar as encode writes one: a float for a float dtype, an int for an int or
    uint dtype, a bool for bool, within the dtype's range."""
    dt = _dtype(dtype)
    want = {"f": float, "b": bool}.get(dt.kind, int) if dt is not None else None
    if want is None or type(val) is not want:
        return Malformed(f"a scalar of dtype {str(dtype)[:40]!r} holding {type(val).__name__}")
    if want is float:
        with np.errstate(over="ignore"):  # a float16's inf was sent as a float, and fits back
            return dt.type(val)
    if want is int and not (np.iinfo(dt).min <= val <= np.iinfo(dt).max):
        return Malformed(f"a scalar {_short(val)} out of the range of {dt}")
    return dt.type(val)


def materialize(x):
    """On the sandbox side: turn Rng/NpInt placeholders into the real thing for a call."""
    if isinstance(x, Rng):
        return np.random.default_rng(x.seed)
    if isinstance(x, NpInt):
        return np.int64(x.value)
    if isinstance(x, tuple):
        return tuple(materialize(v) for v in x)
    if isinstance(x, list):
        return [materialize(v) for v in x]
    if isinstance(x, dict):
        return {k: materialize(v) for k, v in x.items()}
    return x
