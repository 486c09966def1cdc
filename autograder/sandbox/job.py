"""The job the grader hands a child (its plan; the cells and every call with its inputs), as bytes.

This direction carries only the grader's own data, on a pipe only the grader writes (no
other child can reach it through /proc: each has a pid namespace of its own, a uid of its
own, or a Landlock domain of its own, which may not look into another's), read by the child
before any of the submission's code runs, so it is pickled: a quarter of what wire.py's
frames cost to make and read, which the grader and every child paid for each submission.
What a child sends back is never unpickled: that is wire.py's, read by frames.py. Arrays go
as wire.py sent them: plain ndarrays in C order, so no subclass or memory layout of the
grader's reaches the submission.
"""
from __future__ import annotations

import io
import pickle

import numpy as np


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        # Called for arrays and other objects, not for str, int, float, bytes, tuple, list, dict.
        if isinstance(obj, np.ndarray) and (type(obj) is not np.ndarray or not obj.flags.c_contiguous):
            return np.array(obj, order="C").__reduce_ex__(pickle.HIGHEST_PROTOCOL)  # a plain C-ordered copy
        return NotImplemented


def dumps(value) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return out.getvalue()


def loads(blob: bytes):
    return pickle.loads(blob)
