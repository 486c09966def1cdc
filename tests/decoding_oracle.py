"""The grader's reading of a child's frames as it was before it was made faster (commit
76eb9f0): wire.decode's recursion, and every RESULT record's value walked for a Malformed.
Kept as the oracle the faster code must agree with on every frame, valid or forged
(test_decoding_oracle.py); not used by the grader."""
from __future__ import annotations

import json
import math

import numpy as np

from autograder.sandbox import frames
from autograder.wire import MAX_DEPTH, MAX_HEADER, MAX_INT_BITS, MAX_ITEMS, MAX_NDIM, Malformed, NpInt, Opaque, Rng
from autograder.wire import _dtype, _scalar, _short, _sizes


def decode(blob: bytes):
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
    return _from_json(head["doc"], arrays, 0)


def _array(body: memoryview, dtype, shape, offset, size):
    dt = _dtype(dtype)
    if dt is None:
        return Malformed(f"an array of dtype {str(dtype)[:40]!r}, not a number type")
    if type(shape) is not list or len(shape) > MAX_NDIM or not _sizes(offset, size, *shape):
        return Malformed("an array whose shape, offset or size are not counts")
    if offset + size > len(body) or math.prod(shape) * dt.itemsize != size:
        return Malformed(f"an array whose {_short(size)} bytes do not fit its shape {_short(shape)}")
    try:
        return np.frombuffer(body[offset : offset + size], dtype=dt).reshape(tuple(shape)).copy()
    except (ValueError, OverflowError, MemoryError):
        return Malformed(f"an array of shape {_short(shape)}, which numpy cannot build")


def _from_json(doc, arrays, depth):
    if depth > MAX_DEPTH + 1:
        return Malformed("a value nested deeper than the grader's wire nests")
    t = type(doc)
    if doc is None or t is bool or t is float or t is str:
        return doc
    if t is int:
        return doc if doc.bit_length() <= MAX_INT_BITS else Malformed("an int of more bits than travel as a number")
    size = len(doc) if t is dict else 0
    if size == 1:
        [(tag, val)] = doc.items()
        dtype = None
    elif size == 2:
        (tag, val), (key, dtype) = doc.items()
        if tag != "$scalar" or key != "dtype":
            return Malformed("a value of two keys that is not a scalar")
    else:
        return Malformed("a bare JSON list or object where a tagged value belongs")
    if tag in ("$array", "$bytes"):
        a = arrays.get(val) if type(val) is str else None
        if not isinstance(a, np.ndarray):
            return a if isinstance(a, Malformed) else Malformed(f"{tag} naming no array of the frame")
        if tag == "$array":
            return a
        return a.tobytes() if a.dtype == np.uint8 and a.ndim == 1 else Malformed("$bytes of an array that is not bytes")
    if tag == "$scalar":
        return _scalar(val, dtype)
    if tag in ("$rng", "$npint"):
        if type(val) is not int or val.bit_length() > 64:
            return Malformed(f"{tag} of something that is not a 64-bit int")
        return Rng(val) if tag == "$rng" else NpInt(val)
    if tag in ("$tuple", "$list"):
        if type(val) is not list or len(val) > MAX_ITEMS:
            return Malformed(f"{tag} of something that is not a list of at most {MAX_ITEMS} items")
        items = [_from_json(v, arrays, depth + 1) for v in val]
        return tuple(items) if tag == "$tuple" else items
    if tag == "$dict":
        if type(val) is not dict or len(val) > MAX_ITEMS:
            return Malformed(f"$dict of something that is not an object of at most {MAX_ITEMS} keys")
        return {k: _from_json(v, arrays, depth + 1) for k, v in val.items()}
    if tag == "$opaque":
        return Opaque(val[:200]) if type(val) is str else Malformed("$opaque of something that is not a name")
    return Malformed(f"an unknown tag {str(tag)[:40]!r}")


def find_malformed(x) -> Malformed | None:
    """frames._find_malformed: the first Malformed in a decoded value, depth first."""
    if isinstance(x, Malformed):
        return x
    items = x.values() if type(x) is dict else x if type(x) in (list, tuple) else ()
    for item in items:
        found = find_malformed(item)
        if found:
            return found
    return None


def result(blob: bytes) -> tuple[frames.CallOutcome, ...]:
    """frames.result, every record's value walked for a Malformed."""
    try:
        doc = decode(blob)
    except Exception as e:  # noqa: BLE001
        raise frames.Malformed(f"not a frame of the grader's wire format ({type(e).__name__})") from None
    if type(doc) is not list:
        raise frames.Malformed(f"{frames._what(doc)} where the list of calls belongs")
    return tuple(frames.record(r, frames._FIELDS) for r in doc)

