"""Issue 20.4: whatever bytes a child writes to the grader, grading is the student's loss at
worst, never the grader's failure and never a point.

The space: every frame a child can send (any kind byte, any length, any payload), in any
order and number, cut at any byte; a RESULT's wire frame with wrong types in every field,
values huge, deeply nested, NaN/inf, odd unicode, arrays of wrong shapes, dtypes and byte
lengths, forged tags. Hypothesis draws from it; each draw goes through the grader's own
path: ``protocol.Reader`` on a real pipe, ``Sandbox``'s state machine (``run`` and
``_attempt``), ``frames`` parsing, ``grade.grade_loaded``'s judging with the reference, and
the results' JSON. Only the child is replaced (``ScriptedSandbox``): a thread that speaks
the child's side of the pipes, so thousands of frames cost seconds, not a fork each.

A forged stream always follows a real CELL or EXERCISE frame (``prefix``): before the
child's first one, no student code has run, and whatever comes then is not the student's
to answer for.
"""
from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder import grade, wire
from autograder.crashes import Ended
from autograder import results as results_model
from autograder.sandbox import Sandbox, frames
from autograder.sandbox import job as job_bytes
from autograder.sandbox.handle import _Child
from autograder.sandbox.protocol import HEADER, Kind, Reader, send
from autograder.submission import Submission

ASSIGNMENT = "ps1"  # its judges use the reference (hidden checks) and the worked examples (visible ones)
SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.data_too_large])


# ---------------------------------------------------------------- the seam: a scripted child

class ScriptedSandbox(Sandbox):
    """The grader's Sandbox with its zygote replaced: child ``n`` of a run says SETUP_OK,
    reads its PLAN and JOB as a child does, then writes ``scripts[n](plan, job)``'s bytes and
    ends. A child past the scripts answers honestly that nothing is implemented."""

    def __init__(self, scripts):
        super().__init__()
        self.scripts, self.threads, self.spawned = list(scripts), {}, 0

    def _start(self) -> None:
        self.proc = None  # no zygote: the children are threads

    def _spawn(self) -> _Child:
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        out_r, out_w = os.pipe()
        os.close(out_w)  # it prints nothing
        script = self.scripts[self.spawned] if self.spawned < len(self.scripts) else honest_stubs
        self.spawned += 1
        c = _Child(self.spawned, -1, -1, job_w, res_r, out_r)
        thread = threading.Thread(target=_child, args=(job_r, res_w, script), daemon=True)
        thread.start()
        self.threads[c.id] = thread
        self.live[c.id] = c
        return c

    def _release(self, c: _Child) -> None:
        self._close_fds(c)  # the child's writes fail from here on, as when the zygote kills it
        self.live.pop(c.id, None)
        self.threads.pop(c.id).join(10)

    def _how_ended(self, c: _Child) -> Ended:
        return Ended("exit", 0)

    def close(self) -> None:
        for c in list(self.live.values()):
            self._release(c)


def _child(job_r: int, res_w: int, script) -> None:
    try:
        send(res_w, Kind.SETUP_OK)
        reader = Reader(job_r, 1 << 32)
        plan, job = reader.next(), reader.next()
        data = script(job_bytes.loads(plan[1]), job_bytes.loads(job[1]))
        view = memoryview(data)
        while view:
            view = view[os.write(res_w, view):]
    except OSError:  # the grader closed the pipe: it has decided this child's step
        pass
    finally:
        os.close(res_w)
        os.close(job_r)


def frame(kind: Kind | bytes, payload: bytes = b"") -> bytes:
    return HEADER.pack(kind.value if isinstance(kind, Kind) else kind, len(payload)) + payload


def first_step(plan) -> bytes:
    """The real child's first frame: its first cell (the job has one, cell 0), or, once that
    cell was skipped, its first exercise."""
    return frame(Kind.CELL, b"0") if 0 not in plan["skip"] else frame(Kind.EXERCISE, str(plan["start"]).encode())


def honest_stubs(plan, job) -> bytes:
    """A child whose every function raises NotImplementedError, from the plan's start on."""
    out = frame(Kind.CELL, b"0") if 0 not in plan["skip"] else b""
    for k in range(plan["start"], len(job["exercises"])):
        records = [{"error": "NotImplementedError", "message": "NotImplementedError", "where": "line 1"}
                   for _ in job["exercises"][k][1]]
        out += frame(Kind.EXERCISE, str(k).encode()) + frame(Kind.RESULT, wire.encode(records))
    return out + frame(Kind.DONE)


def submission() -> Submission:
    sub = Submission(Path("hostile.py"))
    sub.add("pass", "line 1")
    return sub


def graded(scripts):
    """The Results of grading a one-cell submission whose children write ``scripts``."""
    with ScriptedSandbox(scripts) as sandbox:
        return grade.grade_loaded(submission(), ASSIGNMENT, sandbox=sandbox, timeout=30.0)


# ---------------------------------------------------------------- the space of what a child can write

ODD = ["\ud800", "\udfff", "\u202e", "\u200b", "\x00", "\x1b[2J", "\n", "\r", "\u2028", "\ufeff", "é", "𝕏",
       "<script>", "\\", '"', "NaN"]
text = st.lists(st.sampled_from(ODD) | st.characters(exclude_categories=()), max_size=6).map("".join)
numbers = (st.integers(min_value=-(2**70), max_value=2**70) | st.just(1 << 10_000) | st.just(-(1 << 9_000))
           | st.floats(allow_nan=True, allow_infinity=True) | st.booleans() | st.none())
dtypes = st.sampled_from(["<f8", "<f4", "<f2", ">f8", "<i8", "|u1", "|b1", "<u8", np.dtype(np.longdouble).str])
arrays = dtypes.flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)))
scalars = dtypes.flatmap(lambda dt: hnp.from_dtype(np.dtype(dt)))
leaves = numbers | text | arrays | scalars | st.binary(max_size=8) | st.builds(wire.Opaque, text) \
    | st.builds(wire.Rng, st.integers(0, 2**64)) | st.builds(wire.NpInt, st.integers(-(2**63), 2**63 - 1))
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
                      | st.dictionaries(text, inner, max_size=3), max_leaves=6)
FIELDS = ["value", "seconds", "inputs_after", "error", "message", "where", "undefined"]
records = (st.dictionaries(st.sampled_from(FIELDS) | text, values, max_size=4)
           | st.fixed_dictionaries({"value": values, "seconds": values})
           | st.fixed_dictionaries({"value": values, "seconds": values, "inputs_after": values})
           | st.fixed_dictionaries({"error": values, "message": values}, optional={"where": values})
           | st.fixed_dictionaries({"undefined": values | st.just(True)})
           | values)


def deep(depth: int):
    doc = 0
    for _ in range(depth):
        doc = {"$list": [doc]}
    return doc


# Forged wire frames, written as JSON by hand: tags, tables and bodies encode never writes.
forged_docs = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**80), 2**80) | st.floats() | text
    | st.fixed_dictionaries({"$array": st.sampled_from(["a0", "a1", "zz"]) | st.integers()})
    | st.fixed_dictionaries({"$bytes": st.sampled_from(["a0", "a1"])})
    | st.fixed_dictionaries({"$scalar": st.integers() | st.floats() | st.booleans() | text,
                             "dtype": dtypes | text})
    | st.fixed_dictionaries({"$opaque": text | st.integers()})
    | st.fixed_dictionaries({"$rng": st.integers() | st.floats()})
    | st.dictionaries(text, st.integers(), max_size=2)
    | st.integers(0, 40).map(deep),
    lambda inner: st.fixed_dictionaries({"$list": st.lists(inner, max_size=4)})
    | st.fixed_dictionaries({"$tuple": st.lists(inner, max_size=4)})
    | st.fixed_dictionaries({"$dict": st.dictionaries(st.sampled_from(FIELDS) | text, inner, max_size=4)})
    | st.lists(inner, max_size=3),
    max_leaves=8)
table_entries = st.lists(st.tuples(st.sampled_from(["a0", "a1"]) | st.integers(), dtypes | text | st.integers(),
                                   st.lists(st.integers(-2, 2**64), max_size=4) | st.integers(),
                                   st.integers(-8, 64), st.integers(-8, 64)).map(list), max_size=3)


@st.composite
def forged_wire(draw) -> bytes:
    doc = {"doc": draw(forged_docs), "arrays": draw(table_entries)}
    head = json.dumps(doc, allow_nan=True).encode()
    if draw(st.booleans()):
        head = draw(st.sampled_from([b"[]", b"{}", b"[" * 5000, b'{"doc": 1}', b"\xff\xfe", b"nul"])) or head
    return len(head).to_bytes(8, "big") + head + draw(st.binary(max_size=64))


@st.composite
def result_payloads(draw) -> bytes:
    """A RESULT's payload: honestly encoded records of any types, or a forged wire frame; cut
    at any byte, or not."""
    if draw(st.booleans()):
        blob = wire.encode(draw(st.lists(records, max_size=4) | values))
    else:
        blob = draw(forged_wire())
    if draw(st.integers(0, 3)) == 0:
        blob = blob[: draw(st.integers(0, len(blob)))]
    return blob


problem_records = (st.fixed_dictionaries({"cell": st.integers(-2, 8) | values, "error": values, "message": values})
                   | st.dictionaries(st.sampled_from(["cell", "error", "message"]) | text, values, max_size=4)
                   | values)


@st.composite
def frames_any(draw) -> bytes:
    """One frame a child could write: any kind, its payload of the kind's shape or not, its
    length true or not."""
    kind = draw(st.sampled_from(list(Kind)) | st.binary(min_size=1, max_size=1))
    small = st.integers(0, 6).map(lambda i: str(i).encode())
    payload = draw(st.one_of(
        result_payloads(), small, st.binary(max_size=12), text.map(lambda t: t.encode("utf-8", "surrogatepass")),
        problem_records.map(wire.encode), forged_wire(),
        st.tuples(small, st.binary(max_size=8)).map(lambda p: p[0] + b":" + p[1]),
        st.sampled_from([b"-1", b"+1", b" 1", "\u0663".encode(), b"1_0", b"99999999999", b""])))
    length = len(payload)
    if draw(st.integers(0, 7)) == 0:
        length = draw(st.sampled_from([0, length + 1, max(length - 1, 0), 1 << 40, (1 << 64) - 1]))
    code = kind.value if isinstance(kind, Kind) else kind
    return HEADER.pack(code, length) + payload


@st.composite
def streams(draw):
    """One child's script: its real first step, then forged frames (a RESULT of its exercise
    most often), cut at any byte or not."""
    forged = draw(st.lists(
        frames_any() | result_payloads().map(lambda p: frame(Kind.RESULT, p))
        | st.integers(0, 6).map(lambda k: frame(Kind.EXERCISE, str(k).encode())), min_size=0, max_size=6))
    cut = draw(st.none() | st.integers(0, 1 << 16))

    def script(plan, job) -> bytes:  # the real first step whole: a cut inside it is before any student code
        data = b"".join(forged)
        return first_step(plan) + (data if cut is None else data[:cut])
    return script


# ---------------------------------------------------------------- the properties

def assert_no_point_and_sound(results) -> None:
    assert results.score == 0, [(t.name, t.output[:200]) for t in results.tests if t.score]
    assert all(t.status == "failed" for t in results.tests)
    doc = json.loads(results.to_json())  # allow_nan=False: what batch writes, nan nowhere
    json.dumps(doc).encode("utf-8")


@settings(max_examples=80, **SETTINGS)
@given(st.lists(streams(), min_size=1, max_size=3))
def test_any_frames_from_a_child_grade_as_the_students_loss(scripts):
    """Never raises (a GraderError is the grader's failure: NOT GRADED), never a point."""
    assert_no_point_and_sound(graded(scripts))


@settings(max_examples=30, **SETTINGS)
@given(st.lists(records, min_size=1, max_size=8))
def test_honestly_encoded_records_of_any_types_reach_the_judges_without_raising(drawn):
    """A RESULT for each exercise, well framed, in order: every record of any types and
    values goes to a judge (or is malformed), and no judge raises on it."""
    def script(plan, job) -> bytes:
        out = first_step(plan) if 0 not in plan["skip"] else b""
        for k in range(plan["start"], len(job["exercises"])):
            calls = job["exercises"][k][1]
            mine = (drawn * len(calls))[: len(calls)]
            out += frame(Kind.EXERCISE, str(k).encode()) + frame(Kind.RESULT, wire.encode(mine))
        return out + frame(Kind.DONE)
    assert_no_point_and_sound(graded([script]))


@settings(max_examples=300, **SETTINGS)
@given(result_payloads())
def test_a_result_payload_parses_into_typed_outcomes_or_is_malformed(blob):
    """frames.result alone, many more draws: a tuple of CallOutcomes, each of its ending's
    field types, or Malformed; nothing else escapes."""
    try:
        outcomes = frames.result(blob)
    except frames.Malformed as e:
        assert str(e) and "\n" not in str(e)
        return
    for o in outcomes:
        assert isinstance(o, frames.CallOutcome) and isinstance(o.ending, frames.Ending)
        assert type(o.error) is str and type(o.message) is str and type(o.where) is str
        assert "\n" not in o.message and len(o.message) <= max(frames.MAX_LINE, 200)
        if o.ending is frames.Ending.RETURNED:
            assert type(o.seconds) is float and math.isfinite(o.seconds) and o.seconds >= 0
            assert o.inputs_after is None or all(isinstance(a, (np.ndarray, wire.Opaque)) for a in o.inputs_after)
            assert frames._find_malformed(o.value) is None


@settings(max_examples=150, **SETTINGS)
@given(frames_any())
def test_every_kind_of_small_payload_parses_or_is_malformed(data):
    kind, n = HEADER.unpack_from(data)
    payload = data[HEADER.size:]
    for parse in (lambda p: frames.index(p, 7), frames.problem, frames.line, frames.empty):
        try:
            parse(payload)
        except frames.Malformed:
            pass


# ---------------------------------------------------------------- what the student reads

WRONG_TYPES = {
    "a number where the message belongs": {"error": "ValueError", "message": 5},
    "a number where the error's name belongs": {"error": 7, "message": "x"},
    "a list where the place belongs": {"error": "ValueError", "message": "m", "where": [1]},
    "text where the seconds belong": {"value": 1.0, "seconds": "0.1"},
    "nan seconds": {"value": 1.0, "seconds": math.nan},
    "a number where the echoed inputs belong": {"value": 1.0, "seconds": 0.1, "inputs_after": 3},
    "both a value and an error": {"value": 1.0, "seconds": 0.1, "error": "E", "message": "m"},
    "an unknown field": {"value": 1.0, "seconds": 0.1, "grade": 100},
    "a message of many lines": {"error": "ValueError", "message": "a\nb"},
    "a message past the child's cut": {"error": "ValueError", "message": "x" * (frames.MAX_LINE + 1)},
    "a number where the record belongs": 42,
    "a number where a missing function's mark belongs": {"undefined": 1},
    "a missing function that also raised": {"undefined": True, "error": "NameError", "message": "m"},
}


@pytest.mark.parametrize("record", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
def test_a_record_of_wrong_types_is_that_calls_malformed_outcome_in_one_line(record):
    (outcome,) = frames.result(wire.encode([record]))
    assert outcome.ending is frames.Ending.MALFORMED and outcome.message and "\n" not in outcome.message


@pytest.mark.parametrize("record", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
def test_a_record_of_wrong_types_costs_every_check_that_reads_it_and_says_so(record):
    def script(plan, job) -> bytes:
        out = first_step(plan) if 0 not in plan["skip"] else b""
        for k in range(plan["start"], len(job["exercises"])):
            records = [record] * len(job["exercises"][k][1])
            out += frame(Kind.EXERCISE, str(k).encode()) + frame(Kind.RESULT, wire.encode(records))
        return out + frame(Kind.DONE)
    results = graded([script])
    assert_no_point_and_sound(results)
    assert all(frames.NOT_A_RESULT in t.output for t in results.tests), [t.output for t in results.tests]


@pytest.mark.parametrize("payload", [b"", b"\x00" * 8, wire.encode(5), wire.encode({"a": 1}),
                                     wire.encode([1, 2])[:-3]], ids=["empty", "no header", "a number", "a dict",
                                                                      "cut short"])
def test_a_result_that_is_not_a_list_of_records_is_the_exercises_malformed_outcome(payload):
    def script(plan, job) -> bytes:
        return first_step(plan) + frame(Kind.EXERCISE, str(plan["start"]).encode()) + frame(Kind.RESULT, payload)
    results = graded([script])
    assert_no_point_and_sound(results)
    first = grade.exercises(ASSIGNMENT)[0]
    said = [t.output for t in results.tests if t.exercise == first]
    assert said and all(frames.NOT_A_RESULT in s and "\n" not in s for s in said), said


def test_the_count_of_results_is_held_against_the_job():
    def script(plan, job) -> bytes:
        k = plan["start"]
        return (first_step(plan) + frame(Kind.EXERCISE, str(k).encode())
                + frame(Kind.RESULT, wire.encode([{"value": 1.0, "seconds": 0.0}] * 50)))
    results = graded([script])
    first = grade.exercises(ASSIGNMENT)[0]
    assert all("50 results for" in t.output for t in results.tests if t.exercise == first)


@pytest.mark.parametrize("record", [{"cell": 0, "error": "ValueError", "message": 5},
                                    {"cell": True, "error": "ValueError", "message": "m"},
                                    {"cell": 0, "error": "E", "message": "m", "grade": 100},
                                    {"cell": 0, "error": "E\nF", "message": "m"}, ["0", "E", "m"]],
                         ids=["message", "cell", "a field more", "two lines", "a list"])
def test_a_problem_of_wrong_types_is_malformed(record):
    with pytest.raises(frames.Malformed):
        frames.problem(wire.encode(record))


def test_a_problem_in_the_old_form_is_malformed():
    with pytest.raises(frames.Malformed):
        frames.problem(b"0:ValueError: bad")


def test_a_forged_problem_skips_its_cell_as_the_students_loss():
    def script(plan, job) -> bytes:
        return first_step(plan) + frame(Kind.PROBLEM, wire.encode({"cell": 0, "error": 7, "message": "m"}))
    results = graded([script])
    assert_no_point_and_sound(results)
    (problem,) = results.cell_problems
    assert problem.ending is results_model.CellEnd.ENDED and "malformed" in problem.message


def test_a_forged_missing_function_is_the_students_loss():
    """The mark call_one writes for a function the submission does not define, written by the
    submission itself: every check fails as a missing function would, none errs."""
    def script(plan, job) -> bytes:
        out = first_step(plan) if 0 not in plan["skip"] else b""
        for k in range(plan["start"], len(job["exercises"])):
            records = [{"undefined": True}] * len(job["exercises"][k][1])
            out += frame(Kind.EXERCISE, str(k).encode()) + frame(Kind.RESULT, wire.encode(records))
        return out + frame(Kind.DONE)
    results = graded([script])
    assert_no_point_and_sound(results)
    assert {t.kind for t in results.tests} == {results_model.Kind.UNDEFINED}


def test_a_well_typed_result_still_reaches_the_judges():
    """The other side: the schema refuses nothing call_one writes (honest stubs are judged
    not_implemented, not malformed)."""
    results = graded([honest_stubs])
    assert {t.misconception for t in results.tests} == {"not_implemented"}
