"""The frames that cross the sandbox's pipes, and a reader that never trusts them.

A frame is one kind byte, an 8-byte big-endian length, and the payload. A child speaks on
its results pipe in this order, and the grader reads nothing else:

    SETUP_OK | SETUP_FAILED(reason)           once, when it has confined itself
    then, after the grader's PLAN and JOB frames:
    ( CELL(i) [PROBLEM(what cell i raised)] )* each notebook cell it runs
    ( EXERCISE(k) RESULT(outcomes) )*         each exercise it calls, from PLAN's start on
    DONE

Anything else (an unknown kind, a frame out of this order, a payload that does not parse,
a length over the reader's limit) is a protocol error: the grader ends that child, and the
step it was in fails (a cell is skipped, an exercise crashed). A frame never makes the
reader buffer more than its limit (plus one read), and a forged one costs the grader no
more than reading it.
"""
from __future__ import annotations

import enum
import os
import select
import struct
import time

HEADER = struct.Struct(">cQ")
WATCH_EVERY = 0.05  # seconds between a reader's calls of its watch
# Bytes a reader asks for at a time: what a pipe holds. A larger read gets no more from a pipe,
# and costs an allocation of its whole size first (a mapping of its own, past malloc's threshold).
READ = 1 << 16


class Kind(bytes, enum.Enum):
    # child -> grader, on the results pipe
    SETUP_OK = b"S"
    SETUP_FAILED = b"F"
    CELL = b"C"
    PROBLEM = b"P"
    EXERCISE = b"E"
    RESULT = b"R"
    DONE = b"D"
    # grader -> child, on the job pipe
    PLAN = b"L"
    JOB = b"J"
    # A batch and its workers (pools.LocalPool) speak the same frames: JOB tells a worker a
    # student to grade, RESULT brings the student's outcome back.


_KINDS = {kind.value: kind for kind in Kind}  # a dict's lookup: Kind(code) costs an enum's call, every frame


class ProtocolError(Exception):
    """The other side sent something that is not a frame of this protocol."""


class Timeout(Exception):
    """No whole frame came before the deadline."""


class Stopped(Exception):
    """A watch called while waiting said the writer must be stopped; the message says why."""


def send(fd: int, kind: Kind, payload: bytes = b"") -> None:
    write_all(fd, HEADER.pack(kind.value, len(payload)) + payload)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``, however many writes a pipe takes."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Reader:
    """Reads frames from a pipe. ``next`` returns ``(Kind, payload)``, or ``None`` at the end
    of the stream; it raises ``Timeout`` at the deadline and ``ProtocolError`` on a frame
    that is not one (the stream is then useless: the caller ends the writer)."""

    def __init__(self, fd: int, limit: int):
        self.fd, self.limit, self.buf, self.eof = fd, limit, bytearray(), False
        self.next_watch = time.monotonic() + WATCH_EVERY  # nothing to watch in a submission's first moments

    def whole(self) -> tuple[Kind, bytes] | None:
        """The next frame if it has been read whole, else None: it neither reads nor waits, so a
        caller need not work out a deadline for a frame already here. Raises ``ProtocolError``
        as ``next`` does, as soon as the frame's header is here."""
        if len(self.buf) < HEADER.size:
            return None
        code, n = HEADER.unpack_from(self.buf)
        kind = _KINDS.get(code)
        if kind is None:
            raise ProtocolError(f"unknown frame kind {code!r}")
        if n > self.limit:
            raise ProtocolError(f"a frame of {n} bytes is over the limit of {self.limit}")
        if len(self.buf) < HEADER.size + n:
            return None
        payload = bytes(self.buf[HEADER.size : HEADER.size + n])
        del self.buf[: HEADER.size + n]
        return kind, payload

    def next(self, deadline: float = float("inf"), also: dict | None = None, watch=None, every: float = WATCH_EVERY):
        """``also``: other descriptors to serve while waiting, each with a callback that reads
        it and returns False at its end (it is then dropped from ``also``). ``watch``: called
        every ``every`` seconds while waiting (not before ``WATCH_EVERY`` seconds after the
        reader was made); a reason it returns raises ``Stopped``."""
        while True:
            frame = self.whole()
            if frame is not None:
                return frame
            if self.eof:
                if self.buf:
                    raise ProtocolError("the stream ended inside a frame")
                return None
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                raise Timeout()
            if watch is not None:
                if now >= self.next_watch:
                    self.next_watch = now + every
                    reason = watch()
                    if reason:
                        raise Stopped(reason)
                left = min(left, max(self.next_watch - now, 0.001))
            ready, _, _ = select.select([self.fd, *(also or ())], [], [], None if left == float("inf") else left)
            for fd in ready:
                if fd != self.fd and not also[fd](fd):
                    del also[fd]
            if self.fd in ready:
                self.fill()

    def fill(self) -> bool:
        """One read of what the pipe holds (when select says it holds something; else it
        waits), kept for ``whole``; False at the end of the stream."""
        chunk = os.read(self.fd, READ)
        if not chunk:
            self.eof = True
        self.buf += chunk
        return bool(chunk)
