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
from numpy._core.numeric import _frombuffer

PROTOCOL = pickle.HIGHEST_PROTOCOL
# The order numpy's reduction names: the interpreter's cached one-character string (not a "C"
# literal, another object), so a job mixing arrays numpy reduces pickles it once, as numpy would.
C_ORDER = chr(ord("C"))


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        # Called for arrays and other objects, not for str, int, float, bytes, tuple, list, dict.
        if not isinstance(obj, np.ndarray):
            return NotImplemented
        if type(obj) is not np.ndarray or not obj.flags.c_contiguous:
            obj = np.array(obj, order="C")  # a plain C-ordered copy
        if obj.dtype.kind not in "biufc":
            return obj.__reduce_ex__(PROTOCOL)
        # What ndarray.__reduce_ex__ returns for a plain C-ordered array of numbers, without the
        # two imports numpy makes for each one: half of a job's bytes went to them.
        return _frombuffer, (pickle.PickleBuffer(obj), obj.dtype, obj.shape, C_ORDER)


def dumps(value) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=PROTOCOL).dump(value)
    return out.getvalue()


def loads(blob: bytes):
    return pickle.loads(blob)
