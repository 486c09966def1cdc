"""The class as grade-batch reads it: the same discovery, the same reader, the same rules.

Every submission is found by discovery.discover and read once by intake.snapshot (no link
followed, a regular file of bounded size only); its cells come from submission.parse of
exactly those bytes, so the code compared is the code grade-batch grades (the assignment's
check cells and unchanged demonstration cells already left out). A file that cannot be read
is listed with its one-line reason and compared with nothing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..discovery import ClassFolderError, discover
from ..intake import snapshot
from ..names import one_line
from ..submission import parse


@dataclass(frozen=True)
class Unit:
    """One piece of a student's code: a notebook cell, or a .py file's top-level statement."""
    label: str  # "notebook cell 9", "line 12": where it is in the student's file
    source: str


@dataclass(frozen=True)
class Work:
    """What one student handed in, as compared: their code and the raw notebook (for traces)."""
    student: str
    name: str  # the file's name
    units: tuple[Unit, ...]
    notebook: dict | None  # the parsed notebook, None for a .py


@dataclass(frozen=True)
class Unread:
    """A submission that could not be read or holds no code: listed, compared with nothing."""
    student: str
    reason: str  # one line


def read_class(root: Path, assignment: str) -> tuple[list[Work], list[Unread]]:
    """Every submission under ``root`` (a class folder grade-batch accepts). Raises
    ClassFolderError when the folder is missing or holds no submission."""
    root = Path(root)
    if not root.is_dir():
        raise ClassFolderError(f"not a folder: {root}" if root.exists() else f"no such folder: {root}")
    entries = discover(root, assignment)
    if not entries:
        raise ClassFolderError(f"no submissions for {assignment} in {root} "
                               f"(expected <student>/{assignment}/*.ipynb or <student>.py|.ipynb)")
    works: list[Work] = []
    unread: list[Unread] = []
    for entry in entries:
        item = read_one(entry.student, entry.path, entry.base)
        (works if isinstance(item, Work) else unread).append(item)
    return works, unread


def read_one(student: str, path: Path, base: Path | None) -> Work | Unread:
    snap = snapshot(path, base)
    if snap.data is None:
        return Unread(student, snap.problem or "could not be read")
    sub = parse(Path(snap.name), snap.data)  # discovery finds only .py and .ipynb files
    if not sub.cells:
        return Unread(student, one_line(sub.problems[0] if sub.problems else "no code in it"))
    units = tuple(Unit(label, source) for label, source in zip(sub.labels, sub.cells, strict=True))
    return Work(student, snap.name, units, _notebook(snap.data) if snap.name.endswith(".ipynb") else None)


def _notebook(data: bytes) -> dict | None:
    """The notebook's JSON (parse() has already parsed it once, so it parses)."""
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError, MemoryError):
        return None
    return nb if isinstance(nb, dict) else None
