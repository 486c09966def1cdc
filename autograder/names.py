"""Student names as they come from the disk, and the two safe forms the grader makes of them.

A student is named by a file or folder name, which on Linux is any bytes but ``/`` and NUL:
Latin-1 bytes left by ``unzip``, a newline, 240 characters. Python holds such a name as a
``str`` with surrogate escapes (``os.fsdecode``), and the grader keeps that raw form as the
student's key (it seeds their inputs and names them in the gradebook). Two forms are made
from it, never the other way round:

- ``file_stem``: the stem of the student's results and feedback files. Ordinary names
  (letters, digits, ``._@+-``, up to 100 characters) stay as they are; any other name
  becomes a readable slug plus a hash of its bytes, so the stem has no path separator, no
  control character, a bounded length and is unique (a plain stem never contains ``~``).
- ``readable``: what a person reads in grades.csv and on the pages: every byte that is not
  printable text is written as an escape (``\\n``, ``\\xe9``), so the name stays on one
  line and the exact bytes can still be told apart.
"""
from __future__ import annotations

import argparse
import hashlib
import re

# How the engine names a notebook's cell wherever a person reads it (a problem, a step's label,
# where an error was raised), counted from the top with markdown cells included: "notebook
# cell 4", not "cell 4", which a reader would take for the fourth code cell. The steps'
# compiled filenames carry it too ("<notebook cell 4>"), which is how a child tells where.
NOTEBOOK_CELL = "notebook cell"

PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@+-]{0,99}\Z")
MAX_LINE = 300  # characters of a one-line message taken from untrusted text


def raw_bytes(name: str) -> bytes:
    """The name's bytes on disk (a surrogate-escaped str encodes back to what it was)."""
    return name.encode("utf-8", "surrogateescape")


def file_stem(name: str) -> str:
    if PLAIN.match(name):
        return name
    slug = re.sub(r"[^A-Za-z0-9._@+-]+", "_", name)[:60].strip("._-") or "student"
    return f"{slug}~{hashlib.sha256(raw_bytes(name)).hexdigest()[:16]}"


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def readable(text: str, backslash: bool = True) -> str:
    """``text`` on one line, printable; undecodable bytes and control characters escaped
    (and backslashes doubled, unless ``backslash`` is false, so the escapes are unambiguous)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES and (backslash or ch != "\\"):
            out.append(_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF or not ch.isprintable():
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """Untrusted or multi-line text as one readable line of at most ``limit`` characters."""
    text = readable(" ".join(str(text).split()), backslash=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cap(text: str, limit: int) -> str:
    """At most about ``limit`` characters, saying so when cut (the start is kept)."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters cut by the grader]"


def cap_lines(lines: list[str], limit: int) -> list[str]:
    """Whole lines while they fit in about ``limit`` characters together, the first that does
    not cut short, and a last line counting what was left out."""
    kept: list[str] = []
    room = limit
    for i, line in enumerate(lines):
        if len(line) <= room:
            kept.append(line)
            room -= len(line) + 1
            continue
        if room > 0:
            kept.append(line[:room] + "…")
        left = sum(len(x) for x in lines[i:]) - max(room, 0)
        kept.append(f"[… {left} more characters cut by the grader]")
        break
    return kept


# argparse types shared by the pytest plugin's options and `autograder pytest`'s
def nonempty_name(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value
