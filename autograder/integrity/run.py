"""One run: read the class, remove the release, score the pairs, write the two reports."""
from __future__ import annotations

import json
import time
from pathlib import Path

from .. import course
from ..assignments import ASSIGNMENTS
from ..results import write_atomic
from .intake import read_class
from .page import integrity_csv, integrity_html
from .result import IntegrityResult
from .scoring import Release, prepare, release_of, score_pairs

DEFAULT_THRESHOLD = 0.4  # docs/integrity.md: the scores measured on planted and honest pairs


class IntegrityError(ValueError):
    """Nothing to compare: a bad folder, release or threshold (one line)."""


def load_release(assignment: str) -> Release:
    """The released notebook and every reference solution of the course: what no pair is
    suspected for sharing."""
    released = course.current().folder("assignments") / assignment / f"{assignment}.ipynb"
    try:
        notebook = json.loads(released.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise IntegrityError(f"cannot read the released notebook {released}: {e}") from None
    folder = course.current().solutions
    solutions = [(folder / f"{a}.py").read_text(encoding="utf-8") for a in ASSIGNMENTS
                 if (folder / f"{a}.py").is_file()]
    return release_of(notebook, solutions)


def run_integrity(root: Path, assignment: str, out: Path, *, threshold: float = DEFAULT_THRESHOLD) -> IntegrityResult:
    """Compare the class under ``root`` and write OUT/integrity.csv and OUT/integrity.html."""
    if not 0.0 < threshold <= 1.0:
        raise IntegrityError(f"--threshold {threshold:g} is not in (0, 1]")
    start = time.monotonic()
    release = load_release(assignment)
    works, unread = read_class(root, assignment)
    students = prepare(works, release)
    pairs, _ = score_pairs(students, release)
    flagged = [p for p in pairs if p.score >= threshold]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seconds = time.monotonic() - start
    result = IntegrityResult(pairs, flagged, unread, len(students), threshold, seconds,
                             out / "integrity.csv", out / "integrity.html")
    write_atomic(result.csv, integrity_csv(pairs, threshold))
    write_atomic(result.html, integrity_html(result, assignment))
    return result
