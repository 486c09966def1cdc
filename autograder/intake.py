"""One submission read as the grader grades it, once: no link followed, a regular file only,
and the digest of exactly the bytes read (what a results file's record vouches for)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .names import readable
from .submission import Unreadable, read_submission


@dataclass(frozen=True)
class Snapshot:
    """A submission as the grader read it, once: what is graded and what its record says."""
    name: str  # the file's name (its suffix says how to read it; the feedback quotes it)
    data: bytes | None  # None: it could not be read
    problem: str | None  # why not, in one line, as the student reads it
    digest: str  # "sha256:..." of the bytes, or "unreadable:..." of why not


def snapshot(path: Path, base: Path | None = None) -> Snapshot:
    """Read a submission as the grader does (no link followed, a regular file only)."""
    path = Path(path)
    try:
        data = read_submission(path, base)
    except Unreadable as e:
        why = str(e)
        return Snapshot(path.name, None, why, "unreadable:" + hashlib.sha256(why.encode("utf-8", "surrogateescape"))
                        .hexdigest())
    except OSError as e:  # the class folder itself went away
        why = str(e.strerror or e)
        return Snapshot(path.name, None, f"could not read {readable(path.name)}: {why}",
                        "unreadable:" + hashlib.sha256(why.encode()).hexdigest())
    return Snapshot(path.name, data, None, "sha256:" + hashlib.sha256(data).hexdigest())


def read_graded(path: Path, base: Path | None = None) -> tuple[bytes | None, str]:
    """The submission's bytes as the grader reads them (no link followed, a regular file only)
    and their digest; for a file that cannot be read, None and a digest of why not."""
    snap = snapshot(path, base)
    return snap.data, snap.digest
