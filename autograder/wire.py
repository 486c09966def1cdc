"""Plain data across the sandbox boundary: JSON for structure, .npz for arrays.

Both directions use it: the grader encodes the calls' inputs, the sandboxed child encodes
what the student's functions returned. Decoding never unpickles (``allow_pickle=False``)
and never builds anything but numbers, strings, lists, dicts and numpy arrays, so a
submission cannot smuggle an object with a lying ``__eq__`` back to the grader.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np

MAX_DEPTH = 8
MAX_ITEMS = 10_000


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
    """Encode a tree of plain values into one frame: 8-byte JSON length, JSON, npz."""
    arrays: dict[str, np.ndarray] = {}
    doc = _to_json(tree, arrays, 0)
    header = json.dumps(doc, allow_nan=True).encode()
    buf = io.BytesIO()
    if arrays:
        np.savez(buf, **arrays)
    return len(header).to_bytes(8, "big") + header + buf.getvalue()


def decode(blob: bytes):
    n = int.from_bytes(blob[:8], "big")
    doc = json.loads(blob[8 : 8 + n].decode())
    rest = blob[8 + n :]
    arrays = np.load(io.BytesIO(rest), allow_pickle=False) if rest else {}
    return _from_json(doc, arrays, 0)


def _to_json(x, arrays, depth):
    if depth > MAX_DEPTH:
        return {"$opaque": "deeply nested value"}
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float)) and type(x) in (int, float):
        return x
    if isinstance(x, bytes):
        key = f"a{len(arrays)}"
        arrays[key] = np.frombuffer(x, dtype=np.uint8)
        return {"$bytes": key}
    if isinstance(x, Rng):
        return {"$rng": x.seed}
    if isinstance(x, NpInt):
        return {"$npint": x.value}
    if isinstance(x, np.generic) and x.dtype.kind in "biuf":
        return {"$scalar": x.item(), "dtype": x.dtype.str}
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            return {"$opaque": f"numpy array of dtype {x.dtype}"}
        key = f"a{len(arrays)}"
        arrays[key] = np.array(x, copy=True)  # a plain ndarray, never a subclass
        return {"$array": key}
    if isinstance(x, tuple) and type(x) is tuple or isinstance(x, list) and type(x) is list:
        if len(x) > MAX_ITEMS:
            return {"$opaque": f"{type(x).__name__} of {len(x)} items"}
        return {"$" + type(x).__name__: [_to_json(v, arrays, depth + 1) for v in x]}
    if type(x) is dict:
        if len(x) > MAX_ITEMS or not all(type(k) is str for k in x):
            return {"$opaque": "dict with non-string keys or too many items"}
        return {"$dict": {k: _to_json(v, arrays, depth + 1) for k, v in x.items()}}
    return {"$opaque": type(x).__name__}


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
