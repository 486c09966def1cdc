"""protocol.Reader.whole: the grader takes a frame it has read already without working out a
deadline (handle.py's _attempt), so whole must hand over exactly the frames read whole, in
order, and nothing of a frame still arriving."""
from __future__ import annotations

import os
import time

import pytest

from autograder.sandbox.protocol import HEADER, Kind, Reader, Timeout

LIMIT = 1 << 20


def frame(kind: Kind, payload: bytes) -> bytes:
    return HEADER.pack(kind.value, len(payload)) + payload


def test_whole_hands_over_the_frames_read_whole_and_no_part_of_the_next():
    r, w = os.pipe()
    try:
        reader = Reader(r, LIMIT)
        third = frame(Kind.RESULT, b"payload")
        os.write(w, frame(Kind.CELL, b"1") + frame(Kind.CELL, b"2") + third[:-3])
        assert reader.next(time.monotonic() + 1) == (Kind.CELL, b"1")  # one read: all of it is here now
        assert reader.whole() == (Kind.CELL, b"2")
        assert reader.whole() is None
        with pytest.raises(Timeout):  # what is here of the third is no frame yet
            reader.next(time.monotonic() + 0.05)
        assert reader.whole() is None
        os.write(w, third[-3:])
        assert reader.next(time.monotonic() + 1) == (Kind.RESULT, b"payload")
    finally:
        os.close(r)
        os.close(w)
