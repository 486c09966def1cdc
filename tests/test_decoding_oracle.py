"""The faster reading of a child's frames agrees with the base's (decoding_oracle.py) on every
frame, valid or forged: wire.decode builds the same values (types, dtypes, bytes, flags, the
same array object where a frame names one twice) or fails the same way; decode_marked says a
Malformed stands in the value exactly when one does, so frames.result, which walks a value
only when it is marked, parses every RESULT as walking every value did."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_frames_property import dtypes, forged_docs, forged_wire, records, result_payloads, text, values

import decoding_oracle as base
from autograder import wire
from autograder.sandbox import frames

SETTINGS = dict(max_examples=600, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
honest = (st.lists(records, max_size=4) | values).map(wire.encode)


# Values whose one node may be Malformed, the doc's only one: the table's entry, a scalar's range,
# an int's size in a container.
ONE_NODE = st.sampled_from([{"$array": "a0"}, {"$tuple": [{"$array": "a1"}, 1.5]}, {"$bytes": "a2"},
                            {"$scalar": 300, "dtype": "|u1"}, {"$scalar": 3, "dtype": "|u1"},
                            {"$list": [1 << wire.MAX_INT_BITS, "x"]}, {"$tuple": [(1 << wire.MAX_INT_BITS) - 1, None]},
                            {"$dict": {"n": -(1 << wire.MAX_INT_BITS), "m": True}}])


def nested(doc, levels: int):
    for _ in range(levels):
        doc = {"$list": [doc]}
    return doc


# Containers about the deepest level the wire nests, whose items are Malformed for their depth alone.
NESTED = st.builds(nested, st.sampled_from([{"$dict": {"k": 1, "j": "x"}}, {"$tuple": [1, 2.5, None]}, 7]),
                   st.integers(wire.MAX_DEPTH - 3, wire.MAX_DEPTH + 1))


@st.composite
def forged_records(draw) -> bytes:
    """A well-formed RESULT of records of the right fields whose values are forged docs, naming
    entries of a table of distinct names, each of which fits the body or not."""
    body = draw(st.binary(max_size=48))
    table = []
    for key in draw(st.lists(st.sampled_from(["a0", "a1", "a2"]), unique=True)):
        offset = draw(st.integers(0, len(body)))
        size = draw(st.integers(0, len(body) - offset))
        fits = [key, "|u1", [size], offset, size]
        forged = st.tuples(st.just(key), dtypes | text, st.lists(st.integers(-1, 9), max_size=3),
                           st.integers(-1, 60), st.integers(-1, 60)).map(list)
        table.append(draw(st.just(fits) | forged))
    calls = [{"$dict": {"value": doc, "seconds": 0.25}}
             for doc in draw(st.lists(forged_docs | ONE_NODE | NESTED, max_size=4))]
    head = json.dumps({"doc": {"$list": calls}, "arrays": table}).encode()
    return len(head).to_bytes(8, "big") + head + body


blobs = result_payloads() | forged_wire() | honest | forged_records()


def same(a, b) -> bool:
    """Equal and of the same type all the way down; an array's dtype, shape, bytes and flags too."""
    if type(a) is not type(b):
        return False
    if type(a) is np.ndarray:
        return (a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
                and (a.flags.writeable, a.flags.owndata, a.flags.aligned, a.flags.c_contiguous)
                == (b.flags.writeable, b.flags.owndata, b.flags.aligned, b.flags.c_contiguous))
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is float or isinstance(a, np.generic):
        return repr(a) == repr(b) and (type(a) is float or a.dtype == b.dtype)  # nan, -0.0
    if isinstance(a, frames.CallOutcome):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def arrays_in(x) -> list:
    if type(x) is np.ndarray:
        return [x]
    items = x.values() if type(x) is dict else x if type(x) in (list, tuple) else ()
    return [a for item in items for a in arrays_in(item)]


def outcome(read, blob):
    """What ``read(blob)`` returns, or the exception it raises, as (kind, value)."""
    try:
        return "value", read(blob)
    except Exception as e:  # noqa: BLE001 - the oracle's own failures are what is compared
        return "raised", (type(e), str(e))


@settings(**SETTINGS)
@given(blobs)
def test_decode_reads_every_frame_as_the_base_did(blob):
    mine, theirs = outcome(wire.decode, blob), outcome(base.decode, blob)
    assert mine[0] == theirs[0] and same(mine[1], theirs[1])
    if mine[0] == "value":  # a frame that names an array twice gets the one array twice, in both
        a, b = arrays_in(mine[1]), arrays_in(theirs[1])
        assert [[x is y for y in a] for x in a] == [[x is y for y in b] for x in b]


@pytest.mark.parametrize("shape", [[0, 2**62], [0, 2**63], [0, 2**64], [0] * 64, [0] * 65, [2**31, 0, 2**31, 2**31],
                                   [2, 0, -1], [3, 1.0]])
def test_an_empty_array_of_any_dimensions_decodes_as_the_base_did(shape):
    head = json.dumps({"doc": {"$array": "a0"}, "arrays": [["a0", "<f8", shape, 0, 0]]}).encode()
    blob = len(head).to_bytes(8, "big") + head
    mine, theirs = outcome(wire.decode, blob), outcome(base.decode, blob)
    assert mine[0] == theirs[0] and same(mine[1], theirs[1])


@settings(**SETTINGS)
@given(blobs)
def test_a_value_is_marked_exactly_when_a_malformed_stands_in_it(blob):
    try:
        value, marked = wire.decode_marked(blob)
    except Exception:  # noqa: BLE001 - an unreadable frame: test_decode_reads_every_frame_as_the_base_did
        return
    assert marked is (base.find_malformed(value) is not None)


@settings(**SETTINGS)
@given(blobs)
def test_a_result_parses_as_when_every_value_was_walked(blob):
    mine, theirs = outcome(frames.result, blob), outcome(base.result, blob)
    assert mine[0] == theirs[0] and same(mine[1], theirs[1])

