"""What a student uploaded to Gradescope: the one file to grade, or why there is none.

Every student uploads a file of their own choosing (``My Homework (1).ipynb``, a ``.py``, a
zip, two notebooks, nothing at all), and every one gets one line saying what was found. The
folder is walked without following a link; files are only listed and, where there are
several candidates, read as bytes (never run) to count the assignment's exercises they define.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..assignments import exercises
from ..names import readable
from ..submission import Unreadable, read_submission

GRADABLE = (".ipynb", ".py")
SKIPPED = ("__MACOSX", ".ipynb_checkpoints", "__pycache__")  # folders a zip tool or Jupyter adds
MAX_ENTRIES = 1000  # files and folders looked at; a larger upload is not a homework
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.M)


@dataclass(frozen=True)
class Upload:
    path: Path | None  # the file to grade; None when nothing can be graded
    line: str  # what was found (and graded), in one line the student reads


def find(folder: Path, assignment: str) -> Upload:
    folder = Path(folder)
    files, cut = _listing(folder)
    shown = lambda ps: ", ".join(readable(str(p.relative_to(folder))) for p in ps[:5]) + (  # noqa: E731
        f" and {len(ps) - 5} more" if len(ps) > 5 else "")
    gradable = [p for p in files if p.suffix.lower() in GRADABLE]
    others = [p for p in files if p not in gradable]
    hint = f"upload your {assignment} notebook (.ipynb) or a .py file that defines its functions"
    if not gradable:
        zips = [p for p in others if p.suffix.lower() == ".zip"]
        if zips:
            return Upload(None, f"Found a zip archive ({shown(zips)}), which is not graded: {hint}, not a zip.")
        if cut:
            return Upload(None, f"Found no notebook among the first {MAX_ENTRIES} files and folders of the upload: "
                                f"{hint}, not a folder this large.")
        if others:
            return Upload(None, f"Found no notebook, only {shown(others)}: {hint}.")
        return Upload(None, f"Nothing was uploaded: {hint}.")
    ignored = f" (ignored: {shown(others)})" if others else ""
    if len(gradable) == 1:
        return Upload(gradable[0], f"Graded {shown(gradable)}{ignored}.")
    counts = {p: _exercises_defined(p, folder, assignment) for p in gradable}
    best = max(counts.values())
    top = [p for p in gradable if counts[p] == best]
    if best > 0 and len(top) == 1:
        rest = [p for p in gradable if p != top[0]]
        return Upload(top[0], f"Graded {shown(top)}, the file with the most {assignment} exercises "
                              f"(also uploaded: {shown(rest + others)}).")
    if best > 0 and len({_bytes(p, folder) for p in top}) == 1:  # the same file twice
        return Upload(top[0], f"Graded {shown(top[:1])} (the same file was uploaded as {shown(top[1:])}).")
    return Upload(None, f"Found {len(gradable)} files that could be the homework ({shown(gradable)}) and "
                        f"no way to tell which to grade: {hint}, only one.")


def _listing(folder: Path) -> tuple[list[Path], bool]:
    """Every file below ``folder``, links not followed, hidden ones left out, in a stable order,
    and whether the listing stopped at MAX_ENTRIES entries. A loop, not recursion: any depth
    of nested folders is safe."""
    out: list[Path] = []
    stack, seen = [Path(folder)], 0
    while stack and seen <= MAX_ENTRIES:
        here = stack.pop()
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        for e in reversed(entries):  # the stack pops them in name order
            if e.name.startswith(".") or e.name in SKIPPED:
                continue
            if e.is_dir(follow_symlinks=False):
                stack.append(Path(e.path))
        out += [Path(e.path) for e in entries if not e.name.startswith(".") and not e.is_dir(follow_symlinks=False)]
    return out, seen > MAX_ENTRIES


def _bytes(path: Path, folder: Path) -> bytes | None:
    try:
        return read_submission(path, folder)
    except (Unreadable, OSError):
        return None


def _exercises_defined(path: Path, folder: Path, assignment: str) -> int:
    data = _bytes(path, folder)
    if data is None:
        return 0
    text = data.decode("utf-8", "replace")
    if path.suffix.lower() == ".ipynb":
        try:
            cells = json.loads(text).get("cells")
            text = "\n".join(_source(c) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")
        except (ValueError, RecursionError, AttributeError, TypeError):
            return 0
    return len(set(_DEF.findall(text)) & set(exercises(assignment)))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(s for s in src if isinstance(s, str)) if isinstance(src, list) else str(src)
