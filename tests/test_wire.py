"""wire.py, the only format that crosses the sandbox boundary: what round-trips exactly, what
travels as Opaque, and what a forged frame gets (an exception, or Malformed for the one value).

The protocol-level tests (a header over the limit, deeply nested JSON) are in
test_sandbox_protocol.py; these are the format's own."""
from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autograder import wire
from autograder.wire import MAX_DEPTH, MAX_HEADER, MAX_INT_BITS, MAX_ITEMS, Malformed, NpInt, Opaque, Rng


class _AnyMalformed:
    """Equal to any wire.Malformed, whatever it says."""

    def __eq__(self, other):
        return isinstance(other, Malformed)


MALFORMED = _AnyMalformed()


def round_trip(value):
    return wire.decode(wire.encode(value))


def header(blob: bytes) -> dict:
    n = int.from_bytes(blob[:8], "big")
    return json.loads(blob[8 : 8 + n])


def frame(doc, arrays=(), body: bytes = b"") -> bytes:
    """A frame written by hand, as a forging child would."""
    head = json.dumps({"doc": doc, "arrays": list(arrays)}).encode()
    return len(head).to_bytes(8, "big") + head + body


FOUR = np.arange(4, dtype="<f8").tobytes()  # 32 bytes of body for forged array entries


def assert_same_array(got, expected):
    assert type(got) is np.ndarray
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes()


# ---------------------------------------------------------------- the frame itself

def test_a_frame_is_a_length_then_json_then_raw_array_bytes():
    a = np.arange(3, dtype="<i4")
    blob = wire.encode({"x": a})
    n = int.from_bytes(blob[:8], "big")
    assert json.loads(blob[8 : 8 + n]) == {"doc": {"$dict": {"x": {"$array": "a0"}}},
                                           "arrays": [["a0", "<i4", [3], 0, 12]]}
    assert blob[8 + n :] == a.tobytes()


def test_arrays_lie_back_to_back_at_their_offsets():
    a, b = np.arange(2, dtype="<f8"), np.arange(3, dtype="|u1")
    blob = wire.encode([a, b])
    assert header(blob)["arrays"] == [["a0", "<f8", [2], 0, 16], ["a1", "|u1", [3], 16, 3]]


def test_an_array_held_twice_is_sent_once():
    a = np.arange(5.0)
    assert len(header(wire.encode([a, (a, {"again": a})]))["arrays"]) == 1


def test_an_array_held_twice_decodes_equal_in_both_places():
    a = np.arange(5.0)
    got = round_trip([a, (a,)])
    assert_same_array(got[0], a)
    assert_same_array(got[1][0], a)


# ---------------------------------------------------------------- plain values round-trip

PLAIN = {
    "None": None, "True": True, "False": False, "zero": 0, "negative int": -7,
    "int beyond 64 bits": 2**100, "float": 0.1, "negative zero": -0.0, "inf": math.inf, "-inf": -math.inf,
    "empty string": "", "string": "héllo ∑ \n\t\"quoted\"", "lone surrogate": "jos\udce9",
    "string that looks like a tag": "$array",
}


@pytest.mark.parametrize("value", PLAIN.values(), ids=PLAIN.keys())
def test_a_plain_value_round_trips_with_its_type(value):
    got = round_trip(value)
    assert type(got) is type(value)
    assert got == value


def test_negative_zero_keeps_its_sign():
    assert math.copysign(1.0, round_trip(-0.0)) == -1.0


def test_nan_round_trips_as_nan():
    got = round_trip(math.nan)
    assert type(got) is float and math.isnan(got)


CONTAINERS = {
    "empty tuple": (), "empty list": [], "empty dict": {},
    "tuple": (1, "a", None), "list": [1.5, [2, (3,)]], "dict": {"a": 1, "b": [True, None]},
    "dict with tag-like keys": {"$array": 1, "$opaque": "x", "": 2},
    "tuple of tuples": ((1, 2), (3, (4, ()))),
}


@pytest.mark.parametrize("value", CONTAINERS.values(), ids=CONTAINERS.keys())
def test_a_container_round_trips_with_its_type_and_items(value):
    got = round_trip(value)
    assert got == value
    assert repr(got) == repr(value)  # tuples stay tuples and lists stay lists, at every level


@pytest.mark.parametrize("value", [b"", b"\x00\xff raw", bytes(range(256))], ids=["empty", "short", "all bytes"])
def test_bytes_round_trip(value):
    got = round_trip(value)
    assert type(got) is bytes and got == value


# ---------------------------------------------------------------- numpy arrays and scalars

DTYPES = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", np.longdouble, ">i4", ">f8", "<u2"]
SHAPES = [(), (0,), (3,), (2, 0), (0, 3), (2, 3), (2, 1, 3)]


def sample(dtype, shape) -> np.ndarray:
    dt = np.dtype(dtype)
    values = np.arange(1, 1 + math.prod(shape)) % (2 if dt.kind == "b" else 100)
    return values.astype(dt).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_an_array_round_trips_with_dtype_shape_and_bytes(dtype, shape):
    a = sample(dtype, shape)
    assert_same_array(round_trip(a), a)


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed", "fortran"])
def test_a_non_contiguous_array_round_trips_as_its_values(view):
    base = np.arange(24.0).reshape(4, 6)
    a = {"transposed": base.T, "strided": base[::2, 1::3], "reversed": base[::-1],
         "fortran": np.asfortranarray(base)}[view]
    assert_same_array(round_trip(a), a)


def test_special_floats_in_an_array_round_trip_bit_for_bit():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, np.finfo(np.float64).max])
    assert round_trip(a).tobytes() == a.tobytes()


def test_a_decoded_array_is_writable_and_owns_its_memory():
    got = round_trip(np.arange(3.0))
    assert got.flags.writeable and got.flags.owndata
    got[0] = 9.0  # a judge may work on it in place


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("subclass", ["matrix", "masked", "lying __eq__"])
def test_an_array_subclass_arrives_as_a_plain_ndarray(subclass):
    class Lying(np.ndarray):
        def __eq__(self, other):
            return True

    a = {"matrix": np.matrix([[1.0, 2.0]]), "masked": np.ma.array([1, 2], mask=[0, 1]),
         "lying __eq__": np.arange(3.0).view(Lying)}[subclass]
    got = round_trip(a)
    assert type(got) is np.ndarray
    assert_same_array(got, np.asarray(a))


SCALARS = [np.bool_(True), np.bool_(False), np.int8(-3), np.int16(300), np.int32(-70000), np.int64(-(2**62)),
           np.uint8(255), np.uint16(65535), np.uint32(2**32 - 1), np.uint64(2**64 - 1),
           np.float16(0.5), np.float32(1.25), np.float64(0.1), np.float64(np.inf)]


@pytest.mark.parametrize("value", SCALARS, ids=lambda v: f"{type(v).__name__}({v})")
def test_a_numpy_scalar_round_trips_with_its_dtype(value):
    got = round_trip(value)
    assert type(got) is type(value)
    assert got == value


def test_a_numpy_nan_scalar_round_trips_as_nan():
    got = round_trip(np.float32(np.nan))
    assert type(got) is np.float32 and np.isnan(got)


def test_a_longdouble_scalar_round_trips_with_its_dtype_to_double_precision():
    value = np.longdouble(1) / 3
    got = round_trip(value)
    assert type(got) is np.longdouble
    assert got == np.longdouble(float(value))


# ---------------------------------------------------------------- the placeholders

@pytest.mark.parametrize("value", [Rng(0), Rng(2**63 + 5), NpInt(-4), NpInt(2**40), Opaque("Student"), Opaque("")],
                         ids=repr)
def test_a_placeholder_round_trips(value):
    got = round_trip(value)
    assert type(got) is type(value) and got == value


def test_materialize_builds_a_fresh_generator_for_rng():
    got = wire.materialize(Rng(42))
    assert isinstance(got, np.random.Generator)
    assert got.standard_normal(3).tolist() == np.random.default_rng(42).standard_normal(3).tolist()


def test_materialize_builds_a_numpy_int_for_npint():
    got = wire.materialize(NpInt(7))
    assert type(got) is np.int64 and got == 7


def test_materialize_reaches_into_tuples_lists_and_dicts():
    got = wire.materialize((NpInt(1), [NpInt(2)], {"k": NpInt(3)}))
    assert type(got) is tuple and type(got[1]) is list and type(got[2]) is dict
    assert [type(v) for v in (got[0], got[1][0], got[2]["k"])] == [np.int64] * 3


def test_materialize_leaves_plain_data_alone():
    a = np.arange(3)
    got = wire.materialize((a, "s", 1.5, None))
    assert got[0] is a and got[1:] == ("s", 1.5, None)


# ---------------------------------------------------------------- what encode sends as Opaque

class Student:
    def __eq__(self, other):
        return True


OPAQUE = {
    "an object": (Student(), "Student"),
    "a complex": (1 + 2j, "complex"),
    "a numpy complex scalar": (np.complex64(1), "complex64"),
    "a complex array": (np.array([1j]), "numpy array of dtype complex128"),
    "a string array": (np.array(["a"]), "numpy array of dtype <U1"),
    "an object array": (np.array([None, 1], dtype=object), "numpy array of dtype object"),
    "a datetime array": (np.array(["2020-01-01"], dtype="M8[D]"), "numpy array of dtype datetime64[D]"),
    "a structured array": (np.zeros(2, dtype=[("a", "f8")]), "numpy array of dtype [('a', '<f8')]"),
    "a datetime scalar": (np.datetime64("2020-01-01"), "datetime64"),
    "a bytearray": (bytearray(b"x"), "bytearray"),
    "a set": ({1}, "set"),
    "a function": (len, "builtin_function_or_method"),
    "a list subclass": (type("Rows", (list,), {})([1]), "Rows"),
    "a namedtuple": (__import__("collections").namedtuple("Pair", "a b")(1, 2), "Pair"),
    "an int subclass": (__import__("enum").IntEnum("Heads", "ONE")(1), "Heads"),
    "a float subclass": (type("Score", (float,), {})(1.0), "Score"),
    "a dict with a non-string key": ({1: "a"}, "dict with non-string keys or too many items"),
    "a dict subclass": (__import__("collections").OrderedDict(a=1), "OrderedDict"),
}


@pytest.mark.parametrize("value, name", OPAQUE.values(), ids=OPAQUE.keys())
def test_what_is_not_plain_data_travels_as_opaque_with_its_type_name(value, name):
    assert round_trip(value) == Opaque(name)


def test_an_opaque_value_leaves_its_neighbours_intact():
    assert round_trip([1, Student(), np.arange(2)])[:2] == [1, Opaque("Student")]


@pytest.mark.parametrize("kind", [list, tuple])
def test_a_sequence_of_more_than_max_items_travels_as_opaque(kind):
    assert round_trip(kind(range(MAX_ITEMS + 1))) == Opaque(f"{kind.__name__} of {MAX_ITEMS + 1} items")


@pytest.mark.parametrize("kind", [list, tuple])
def test_a_sequence_of_max_items_is_sent_whole(kind):
    assert round_trip(kind(range(MAX_ITEMS))) == kind(range(MAX_ITEMS))


def test_a_dict_of_more_than_max_items_travels_as_opaque():
    big = {str(i): i for i in range(MAX_ITEMS + 1)}
    assert round_trip(big) == Opaque("dict with non-string keys or too many items")


def nested(levels: int, inner=0):
    value = inner
    for _ in range(levels):
        value = [value]
    return value


def test_a_value_max_depth_down_is_sent_whole():
    assert round_trip(nested(MAX_DEPTH)) == nested(MAX_DEPTH)


@pytest.mark.parametrize("extra", [1, 5])
def test_what_lies_deeper_than_max_depth_travels_as_opaque(extra):
    assert round_trip(nested(MAX_DEPTH + extra)) == nested(MAX_DEPTH + 1, Opaque("deeply nested value"))


def test_a_list_that_holds_itself_ends_in_opaque():
    loop = []
    loop.append(loop)
    assert round_trip(loop) == nested(MAX_DEPTH + 1, Opaque("deeply nested value"))


def test_an_int_past_max_int_bits_travels_as_opaque():
    big = 1 << MAX_INT_BITS
    assert round_trip(big) == Opaque(f"int of {MAX_INT_BITS + 1} bits")


def test_an_int_of_max_int_bits_round_trips():
    big = (1 << MAX_INT_BITS) - 1
    assert round_trip(big) == big


def test_max_int_bits_stays_below_the_interpreters_digit_limit():
    assert len(str(1 << MAX_INT_BITS)) < sys.get_int_max_str_digits()


# ---------------------------------------------------------------- a forged frame: an exception

RAISING = {
    "empty": b"",
    "shorter than the length": b"\x00\x00\x00",
    "zero-length header": bytes(8),
    "header cut short": (50).to_bytes(8, "big") + b'{"doc": 1, "arr',
    "header not utf-8": (2).to_bytes(8, "big") + b"\xff\xfe",
    "header not a json object": (2).to_bytes(8, "big") + b"[]",
    "header without arrays": (10).to_bytes(8, "big") + b'{"doc": 1}',
    "header without doc": (14).to_bytes(8, "big") + b'{"arrays": []}',
    "arrays not a list": frame(1, body=b"").replace(b'"arrays": []', b'"arrays": 5 '),
    "array entry of four fields": frame({"$array": "a0"}, [["a0", "<f8", [4], 0]], FOUR),
    "header with a third field": (30).to_bytes(8, "big") + b'{"doc": 1, "arrays": [], "x": 1}',
    "array keys twice": frame(1, [["a0", "<f8", [0], 0, 0], ["a0", "<f8", [0], 0, 0]]),
    "array key not a string": frame(1, [[0, "<f8", [0], 0, 0]]),
    "int of more digits than json parses": (4410).to_bytes(8, "big") + b'{"doc": ' + b"9" * 4400 + b', "arrays": []}',
}


@pytest.mark.parametrize("blob", RAISING.values(), ids=RAISING.keys())
def test_a_frame_that_is_not_one_raises(blob):
    with pytest.raises((ValueError, TypeError, KeyError, OverflowError)):
        wire.decode(blob)


def test_a_header_over_max_header_raises_before_it_is_parsed():
    with pytest.raises(ValueError, match="over the limit"):
        wire.decode((MAX_HEADER + 1).to_bytes(8, "big"))


# ---------------------------------------------------------------- a forged value: Opaque

def array_entry(dtype="<f8", shape=(4,), offset=0, size=32, key="a0"):
    return [key, dtype, list(shape), offset, size]


BAD_ARRAYS = {
    "object dtype": array_entry("|O"),
    "complex dtype": array_entry("<c16", (2,)),
    "string dtype": array_entry("<U2", (4,)),
    "datetime dtype": array_entry("<M8[s]"),
    "structured dtype": array_entry("(2,)<f8", (2,)),
    "void dtype": array_entry("|V8"),
    "past the end of the body": array_entry(offset=8),
    "size past the end of the body": array_entry(shape=(5,), size=40),
    "negative offset": array_entry(shape=(2,), offset=-8, size=16),
    "negative size and dimension": array_entry(shape=(-1,), size=-8),
    "negative dimensions": array_entry(shape=(-2, -2)),
    "size not the shape's": array_entry(shape=(3,)),
    "float dimension": array_entry(shape=(4.0,)),
    "float offset": array_entry(offset=0.0),
    "boolean size": array_entry(shape=(1,), size=True, dtype="|u1"),
    "string dimension": array_entry(shape=("4",)),
    "another key": array_entry(key="a1"),
    "a dtype numpy cannot read": array_entry("not a dtype"),
    "a dtype string numpy would parse at length": array_entry("f8," * 10),
    "a shape that is not a list": ["a0", "<f8", 4, 0, 32],
    "a shape numpy cannot build": array_entry(shape=(0, 2**70), size=0),
    "more dimensions than numpy has": array_entry(shape=(1,) * 65 + (4,)),
}


@pytest.mark.parametrize("entry", BAD_ARRAYS.values(), ids=BAD_ARRAYS.keys())
def test_an_array_entry_that_does_not_fit_decodes_as_malformed(entry):
    assert wire.decode(frame({"$array": "a0"}, [entry], FOUR)) == MALFORMED


def test_a_well_formed_forged_array_decodes():
    assert_same_array(wire.decode(frame({"$array": "a0"}, [array_entry()], FOUR)), np.arange(4.0))


def test_a_bad_array_spoils_only_its_own_value():
    entries = [array_entry(key="good", shape=(2,), size=16), array_entry("|O", key="bad")]
    got = wire.decode(frame({"$list": [{"$array": "good"}, {"$array": "bad"}]}, entries, FOUR))
    assert_same_array(got[0], np.arange(2.0))
    assert got[1] == MALFORMED


BAD_VALUES = {
    "a bare json list": [1, 2],
    "an untagged object": {"a": 1},
    "an empty object": {},
    "three keys": {"$list": [], "a": 1, "b": 2},
    "an unknown tag": {"$pickle": "gASV"},
    "$array naming no array": {"$array": "a9"},
    "$array not a string": {"$array": 0},
    "$bytes naming no array": {"$bytes": "a9"},
    "$scalar without its dtype": {"$scalar": 1},
    "$scalar of a string": {"$scalar": "1", "dtype": "<f8"},
    "$scalar of object dtype": {"$scalar": 1, "dtype": "|O"},
    "$scalar of complex dtype": {"$scalar": 1, "dtype": "<c16"},
    "$rng of a string": {"$rng": "seed"},
    "$rng of a float": {"$rng": 1.5},
    "$npint of a float": {"$npint": 1.5},
    "$tuple of an object": {"$tuple": {}},
    "$list of a string": {"$list": "abc"},
    "$dict of a list": {"$dict": []},
    "$scalar over its dtype's range": {"$scalar": 1000, "dtype": "|u1"},
    "$scalar nan as an int": {"$scalar": math.nan, "dtype": "<i8"},
    "$scalar of a dtype numpy cannot read": {"$scalar": 1, "dtype": "not a dtype"},
    "$scalar of an int for a float dtype": {"$scalar": 1, "dtype": "<f8"},
    "$scalar of a bool for an int dtype": {"$scalar": True, "dtype": "<i8"},
    "$scalar with another second key": {"$scalar": 1.0, "type": "<f8"},
    "$rng of a bool": {"$rng": True},
    "$opaque of a list": {"$opaque": [1]},
    "an int past MAX_INT_BITS": 1 << (MAX_INT_BITS + 1),
    "$list of more than MAX_ITEMS": {"$list": [0] * (MAX_ITEMS + 1)},
}


@pytest.mark.parametrize("doc", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_a_malformed_value_decodes_as_malformed(doc):
    assert wire.decode(frame(doc)) == MALFORMED


def test_a_forged_opaque_name_is_cut_to_200_characters():
    assert wire.decode(frame({"$opaque": "x" * 1000})) == Opaque("x" * 200)


def depth_of(value) -> int:
    depth = 0
    while isinstance(value, list):
        (value,) = value
        depth += 1
    return depth


def test_a_forged_doc_nested_deeper_than_encode_would_send_stops_in_malformed():
    doc = 0
    for _ in range(5 * MAX_DEPTH):
        doc = {"$list": [doc]}
    got = wire.decode(frame(doc))
    assert depth_of(got) == MAX_DEPTH + 2
    assert nested(MAX_DEPTH + 2, MALFORMED) == got


def test_decoding_builds_no_object_whatever_the_tags_say():
    doc = {"$list": [{"$opaque": "Student"}, {"$pickle": "x"}, {"$dict": {"__class__": {"$opaque": "type"}}}]}
    got = wire.decode(frame(doc))
    assert got == [Opaque("Student"), MALFORMED, {"__class__": Opaque("type")}]


# ---------------------------------------------------------------- what decode reads, checked on generated frames

def numeric_dtype(text: str) -> np.dtype | None:
    """The dtype numpy reads ``text`` as, when it is one decode accepts (built afresh: no cache)."""
    if not wire._DTYPE.fullmatch(text):
        return None
    try:
        dt = np.dtype(text)
    except (TypeError, ValueError):
        return None
    return dt if dt.kind in "biuf" else None


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"[<>|=]?[biufcOSUV][0-9]{1,2}", fullmatch=True) | st.text(max_size=4))
def test_an_array_entrys_dtype_is_what_numpy_reads_each_time_it_is_asked(text):
    assert [wire._dtype(text), wire._dtype(text)] == [numeric_dtype(text)] * 2


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 2**70), st.booleans(), st.floats(), st.none(), st.text(max_size=2)),
                max_size=6))
def test_an_array_entrys_sizes_are_counts_only_when_all_are_non_negative_ints(values):
    assert wire._sizes(*values) is all(type(v) is int and v >= 0 for v in values)


TWO_KEYS = st.sampled_from(["$scalar", "dtype", "$array", "type", "$list"])


@settings(max_examples=300, deadline=None)
@given(TWO_KEYS, TWO_KEYS, st.one_of(st.integers(-300, 300), st.floats(allow_nan=False), st.booleans()),
       st.sampled_from(["<f8", "<f2", "|u1", "<i8", "|b1", "x"]))
def test_a_value_of_two_keys_reads_only_as_a_scalar_then_its_dtype(first, second, value, dtype):
    assume(first != second)
    got = wire.decode(frame({first: value, second: dtype}))
    if (first, second) != ("$scalar", "dtype"):
        assert got == MALFORMED
    else:
        with np.errstate(over="ignore"):
            expected = wire._scalar(value, dtype)
        assert type(got) is type(expected) and got == expected
