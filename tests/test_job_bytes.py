"""sandbox/job.py, the grader's job to a child: what it reads is what wire.py's frame gave it
before the job was pickled (the same values, types, dtypes and shapes; arrays plain and in C
order), so no grade changes with the format."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder import wire
from autograder.sandbox import job
from autograder.wire import NpInt, Rng


def same(a, b) -> bool:
    """Equal, and of the same type all the way down (an array's dtype, shape and bytes too)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes() and b.flags.c_contiguous
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and (a == b or (a != a and b != b))
    return a == b


dtypes = st.sampled_from(["<f8", "<f4", "<f2", ">f8", "<i8", "<i4", "<u1", "|b1"])
arrays = dtypes.flatmap(lambda dt: hnp.arrays(np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=4, max_side=4)))
leaves = (st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=True)
          | st.text(max_size=20) | st.binary(max_size=20) | arrays
          | st.integers(0, 2**32).map(Rng) | st.integers(-2**63, 2**63 - 1).map(NpInt)
          | st.floats(width=32).map(np.float32) | st.integers(-5, 5).map(np.int64))
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(values)
def test_a_job_reads_as_the_wire_frame_read_before(value):
    assert same(wire.decode(wire.encode(value)), job.loads(job.dumps(value)))


@pytest.mark.parametrize("make", [
    lambda a: np.asfortranarray(a),
    lambda a: a.T,
    lambda a: a[:, ::2],
    lambda a: a.view(np.matrix),
    lambda a: np.ma.masked_array(a),
], ids=["fortran", "transposed", "strided", "matrix", "masked"])
def test_an_array_arrives_plain_and_in_c_order(make):
    given_array = make(np.arange(12.0).reshape(3, 4))
    got = job.loads(job.dumps({"x": (given_array,)}))["x"][0]
    assert type(got) is np.ndarray and got.flags.c_contiguous
    assert got.shape == np.asarray(given_array).shape and np.array_equal(got, np.asarray(given_array))


def test_an_array_held_twice_arrives_as_one_object_as_before():
    a = np.ones(3)
    got = job.loads(job.dumps([a, (a,)]))
    assert got[0] is got[1][0]  # the child copies each argument for each call (child.call_one)
