"""The grader reads what a child sends as an adversary's bytes: frames are checked for kind,
size and completeness before anything is allocated, and decoding is bounded."""
from __future__ import annotations

import os
import time

import pytest

from autograder import wire
from autograder.sandbox.protocol import HEADER, Kind, ProtocolError, Reader, Timeout, send

LIMIT = 1 << 20


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def test_a_whole_frame_is_read(pipe):
    r, w = pipe
    send(w, Kind.CELL, b"3")
    assert Reader(r, LIMIT).next(time.monotonic() + 1) == (Kind.CELL, b"3")


def test_an_unknown_kind_is_a_protocol_error(pipe):
    r, w = pipe
    os.write(w, HEADER.pack(b"Z", 1) + b"x")
    with pytest.raises(ProtocolError, match="unknown frame kind"):
        Reader(r, LIMIT).next(time.monotonic() + 1)


def test_a_length_over_the_limit_fails_before_its_payload_arrives(pipe):
    r, w = pipe
    os.write(w, HEADER.pack(Kind.RESULT.value, 1 << 40))  # no payload follows: nothing waits for it
    start = time.monotonic()
    with pytest.raises(ProtocolError, match="over the limit"):
        Reader(r, LIMIT).next(time.monotonic() + 5)
    assert time.monotonic() - start < 1


def test_a_stream_that_ends_inside_a_frame_is_a_protocol_error(pipe):
    r, w = pipe
    os.write(w, HEADER.pack(Kind.RESULT.value, 10) + b"abc")
    os.close(w)
    with pytest.raises(ProtocolError, match="ended inside a frame"):
        Reader(r, LIMIT).next(time.monotonic() + 1)


def test_silence_is_a_timeout(pipe):
    r, _ = pipe
    with pytest.raises(Timeout):
        Reader(r, LIMIT).next(time.monotonic() + 0.05)


def test_the_end_of_the_stream_between_frames_is_none(pipe):
    r, w = pipe
    os.close(w)
    assert Reader(r, LIMIT).next(time.monotonic() + 1) is None


def test_a_watch_stops_the_wait_with_its_reason(pipe):
    from autograder.sandbox.protocol import Stopped

    r, _ = pipe
    with pytest.raises(Stopped, match="too much"):
        Reader(r, LIMIT).next(time.monotonic() + 5, watch=lambda: "too much", every=0.01)


def test_a_forged_json_header_over_its_limit_is_refused_unread():
    blob = (wire.MAX_HEADER + 1).to_bytes(8, "big") + b"{"
    with pytest.raises(ValueError, match="over the limit"):
        wire.decode(blob)


@pytest.mark.parametrize("doc", [b"[" * 100_000, b'{"doc": ' * 50_000, b"\xff\xfe", b"{}"],
                         ids=["deep-list", "deep-dict", "not-utf8", "no-fields"])
def test_a_malformed_header_raises_an_exception_not_a_crash(doc):
    with pytest.raises(Exception):  # noqa: B017 - any exception: the handle turns it into a crashed exercise
        wire.decode(len(doc).to_bytes(8, "big") + doc)


def test_the_handle_turns_unreadable_outcomes_into_a_malformed_exercise():
    from autograder.sandbox.handle import _outcomes

    run = _outcomes(len(b"[[[").to_bytes(8, "big") + b"[[[")
    assert run.status == "malformed" and "not a result" in run.detail


def test_a_child_that_cannot_confine_itself_is_a_grader_failure_not_a_grade():
    from autograder.errors import GraderError
    from autograder.sandbox import Limits, Sandbox

    with Sandbox(limits=Limits(file_size=1 << 70)) as sandbox:  # no rlimit holds 2^70
        with pytest.raises(GraderError, match="could not confine itself"):
            sandbox.run(["x = 1"], [("f", [("f", (), {})])], timeout=5)


@pytest.mark.slow  # 300 children, to catch a race
def test_what_a_child_prints_just_before_it_finishes_is_kept():
    """Its last frame can be read before its last output: the pipe is drained after."""
    from autograder.sandbox import Sandbox

    with Sandbox() as sandbox:
        lost = [i for i in range(300)
                if f"last line {i}" not in sandbox.run([f"print('last line {i}')"], [("f", [("f", (), {})])],
                                                       timeout=5).output]
    assert lost == []


@pytest.mark.parametrize("where", ["os.getcwd()", "os.environ['TMPDIR']", "os.environ['HOME']"])
def test_a_child_can_write_and_read_back_in_its_own_folder(where):
    from autograder.sandbox import Sandbox

    cell = f"import os\nopen(os.path.join({where}, 'note.txt'), 'w').write('kept')\n" \
           f"print(open(os.path.join({where}, 'note.txt')).read())"
    with Sandbox() as sandbox:
        run = sandbox.run([cell], [("f", [("f", (), {})])], timeout=5)
    assert run.cell_problems == [] and "kept" in run.output
