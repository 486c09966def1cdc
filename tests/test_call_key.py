"""worked_examples.call_key finds a visible call's key again by its inputs exactly
(inputs_exactly): that stand-in may equal another's only where their wire frames are the same,
so a key found again is the key the frame gives."""
from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import wire, worked_examples
from autograder.grade import plan
from autograder.assignments import ASSIGNMENTS
from autograder.spec import Call

# Leaves that equal one another in Python or numpy while their frames differ (the zeros and
# nans of each kind, ints that equal bools, arrays apart only in dtype, shape, layout or sign).
LEAVES = [0, 1, True, False, 0.0, -0.0, float("nan"), float("inf"), 1.0, "a", "", None,
          np.float64(0.0), np.float64(-0.0), np.float32(1.0), np.int64(1), np.int32(1), np.bool_(True),
          wire.NpInt(1), wire.NpInt(True), wire.Rng(1), wire.Rng(0),
          np.zeros(2), np.zeros(2, dtype=np.float32), np.zeros((1, 2)), np.zeros((2, 1)), np.zeros(2, dtype=np.int64),
          np.array([0.0, -0.0]), np.array([-0.0, 0.0]), np.array([np.nan, 1.0]), np.arange(4.0).reshape(2, 2),
          np.arange(4.0).reshape(2, 2).T, np.array([True, False]), np.array([1, 0]), np.array(["a"]),
          np.array([None], dtype=object)]
_WRAPS = [lambda v: v, lambda v: [v], lambda v: (v,), lambda v: {"a": v}, lambda v: [(v, 1)]]
_values = st.recursive(st.sampled_from(LEAVES), lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                       | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2), max_leaves=6)


def _frame_key(call: Call) -> str:
    return hashlib.sha256(wire.encode([call.func, list(call.args), call.kwargs])).hexdigest()[:24]


@pytest.mark.parametrize("wrap", range(len(_WRAPS)))
@pytest.mark.parametrize(("i", "j"), list(itertools.combinations(range(len(LEAVES)), 2)))
def test_leaves_whose_frames_differ_never_share_a_stand_in(i, j, wrap):
    a, b = _WRAPS[wrap](LEAVES[i]), _WRAPS[wrap](LEAVES[j])
    ea, eb = worked_examples.inputs_exactly(a), worked_examples.inputs_exactly(b)
    if ea is not None and ea == eb:
        assert wire.encode(a) == wire.encode(b)


@settings(max_examples=400, deadline=None)
@given(st.lists(_values, min_size=2, max_size=6))
def test_equal_stand_ins_mean_equal_frames(values):
    for a, b in itertools.combinations(values, 2):
        ea, eb = worked_examples.inputs_exactly(a), worked_examples.inputs_exactly(b)
        if ea is not None and ea == eb:
            assert wire.encode(a) == wire.encode(b), (a, b)


@settings(max_examples=200, deadline=None)
@given(_values, _values)
def test_a_key_found_again_is_the_frames_key(args, kwarg):
    call = Call("f", (args,), {"x": kwarg})
    assert worked_examples.call_key(call) == worked_examples.call_key(call) == _frame_key(call)


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_every_call_of_a_plan_keys_as_its_frame(assignment):
    calls = [c for checks in plan(assignment, "ada").values() for check in checks for c in check.calls]
    assert [worked_examples.call_key(c) for c in calls * 2] == [_frame_key(c) for c in calls * 2]
