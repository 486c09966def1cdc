"""Plain data across the sandbox boundary: JSON for structure, raw bytes for arrays.

Both directions use it: the grader encodes the calls' inputs, the sandboxed child encodes
what the student's functions returned. Decoding never unpickles and never builds
anything but numbers, strings, lists, dicts and numeric numpy arrays, so a
submission cannot smuggle an object with a lying ``__eq__`` back to the grader.
"""
from __future__ import annotations

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
    n = int.from_bytes(blob[:8], "big")
    if n > MAX_HEADER:
        raise ValueError(f"a header of {n} bytes is over the limit")
    head = json.loads(blob[8 : 8 + n].decode())
    body = memoryview(blob)[8 + n :]
    arrays = {}
    for key, dtype, shape, offset, size in head["arrays"]:
        dt = np.dtype(str(dtype))
        if dt.kind not in "biuf" or offset < 0 or offset + size > len(body):
            continue  # a missing array decodes as Opaque("malformed value")
        count = int(np.prod(shape)) if shape else 1
        if count * dt.itemsize != size:
            continue
        arrays[str(key)] = np.frombuffer(body[offset : offset + size], dtype=dt).reshape(tuple(shape)).copy()
    return _from_json(head["doc"], arrays, 0)


def _to_json(x, arrays, depth):
    if depth > MAX_DEPTH:
        return {"$opaque": "deeply nested value"}
    t = type(x)  # the common exact types first: a job holds thousands of nodes
    if t is str or t is int or t is float or t is bool or x is None:
        return x
    if t is np.ndarray and x.dtype.kind in "biuf":
        return {"$array": _add(arrays, x)}
    if t is tuple or t is list:
        if len(x) > MAX_ITEMS:
            return {"$opaque": f"{t.__name__} of {len(x)} items"}
        return {"$" + t.__name__: [_to_json(v, arrays, depth + 1) for v in x]}
    if isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float)) and type(x) in (int, float):
        return x
    if isinstance(x, bytes):
        return {"$bytes": _add(arrays, np.frombuffer(x, dtype=np.uint8))}
    if isinstance(x, Rng):
        return {"$rng": x.seed}
    if isinstance(x, NpInt):
        return {"$npint": x.value}
    if isinstance(x, np.generic) and x.dtype.kind in "biuf":
        return {"$scalar": x.item(), "dtype": x.dtype.str}
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            return {"$opaque": f"numpy array of dtype {x.dtype}"}
        return {"$array": _add(arrays, x)}
    if isinstance(x, tuple) and type(x) is tuple or isinstance(x, list) and type(x) is list:
        if len(x) > MAX_ITEMS:
            return {"$opaque": f"{type(x).__name__} of {len(x)} items"}
        return {"$" + type(x).__name__: [_to_json(v, arrays, depth + 1) for v in x]}
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
