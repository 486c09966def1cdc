"""Plain data across the sandbox boundary: JSON for structure, raw bytes for arrays.

Both directions use it: the grader encodes the calls' inputs, the sandboxed child encodes
what the student's functions returned. Decoding never unpickles and never builds anything
but None, bools, numbers, strings, bytes, tuples, lists, dicts with string keys, numpy
arrays and scalars of a bool, int, uint or float dtype (a plain ndarray, never a subclass),
and the placeholders below (``Rng``, ``NpInt``, ``Opaque``), so a submission cannot smuggle
an object with a lying ``__eq__`` back to the grader.

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
from dataclasses import dataclass

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
    is not five fields, a dtype numpy cannot read, a shape numpy cannot build, a scalar that
    does not fit its dtype. A value that is malformed inside a readable frame (an unknown tag,
    an array that is missing, not numeric, or whose shape, offset or size do not fit the
    bytes) decodes as ``Opaque``."""
    n = int.from_bytes(blob[:8], "big")
    if n > MAX_HEADER:
        raise ValueError(f"a header of {n} bytes is over the limit")
    head = json.loads(blob[8 : 8 + n].decode())
    body = memoryview(blob)[8 + n :]
    arrays = {}
    for key, dtype, shape, offset, size in head["arrays"]:
        dt = np.dtype(str(dtype))
        if (dt.kind not in "biuf" or not _sizes(offset, size, *shape) or offset + size > len(body)
                or math.prod(shape) * dt.itemsize != size):
            continue  # a missing array decodes as Opaque("malformed value")
        arrays[str(key)] = np.frombuffer(body[offset : offset + size], dtype=dt).reshape(tuple(shape)).copy()
    return _from_json(head["doc"], arrays, 0)


def _sizes(*values) -> bool:
    """Whether an array entry's offset, size and dimensions are counts: ints, none negative."""
    return all(type(v) is int and v >= 0 for v in values)


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


def _from_json(doc, arrays, depth):
    if depth > MAX_DEPTH + 1:
        return Opaque("deeply nested value")
    if doc is None or isinstance(doc, (bool, int, float, str)):
        return doc
    if not isinstance(doc, dict) or len(doc) not in (1, 2):
        return Opaque("malformed value")
    (tag, val), *rest = doc.items()
    if tag == "$array" and isinstance(val, str) and val in arrays:
        return arrays[val]
    if tag == "$bytes" and isinstance(val, str) and val in arrays:
        return arrays[val].tobytes()
    if tag == "$scalar" and rest and isinstance(val, (int, float)):
        dtype = np.dtype(str(rest[0][1]))
        return dtype.type(val) if dtype.kind in "biuf" else Opaque("malformed value")
    if tag == "$rng" and isinstance(val, int):
        return Rng(val)
    if tag == "$npint" and isinstance(val, int):
        return NpInt(val)
    if tag in ("$tuple", "$list") and isinstance(val, list):
        items = [_from_json(v, arrays, depth + 1) for v in val]
        return tuple(items) if tag == "$tuple" else items
    if tag == "$dict" and isinstance(val, dict):
        return {str(k): _from_json(v, arrays, depth + 1) for k, v in val.items()}
    if tag == "$opaque":
        return Opaque(str(val)[:200])
    return Opaque("malformed value")


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
