"""One run: read the class, remove the release, score the pairs, write the two reports."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from ..results import write_atomic
from .intake import Unread, read_class
from .scoring import Pair, Release, prepare, release_of, score_pairs

DEFAULT_THRESHOLD = 0.4  # docs/integrity.md: the scores measured on planted and honest pairs
COURSE = Path(__file__).resolve().parent.parent.parent  # the course folder this package belongs to


class IntegrityError(ValueError):
    """Nothing to compare: a bad folder, course or threshold (one line)."""


@dataclass
class IntegrityResult:
    pairs: list[Pair]  # reported, most suspicious first
    flagged: list[Pair]  # of those, the ones at or above the threshold
    unread: list[Unread]  # could not be read: listed, compared with nothing
    students: int  # compared
    threshold: float
    seconds: float
    csv: Path
    html: Path


def check_course(course: Path | None) -> Path:
    """The course folder: this package's own (the engine/course split is a later issue)."""
    if course is None:
        return COURSE
    if not Path(course).is_dir():
        raise IntegrityError(f"--course {course}: no such folder")
    if Path(course).resolve() != COURSE:
        raise IntegrityError(f"--course {course} is not the course this grader belongs to ({COURSE}); "
                             "grading another course's folder comes with the engine/course split")
    return COURSE


def load_release(assignment: str, course: Path) -> Release:
    released = course / "assignments" / assignment / f"{assignment}.ipynb"
    try:
        notebook = json.loads(released.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise IntegrityError(f"cannot read the released notebook {released}: {e}") from None
    from ..reference import solutions_dir

    solutions = [p.read_text(encoding="utf-8") for p in sorted(solutions_dir().glob("ps*.py"))]
    return release_of(notebook, solutions)


def run_integrity(root: Path, assignment: str, out: Path, *, threshold: float = DEFAULT_THRESHOLD,
                  course: Path | None = None) -> IntegrityResult:
    """Compare the class under ``root`` and write OUT/integrity.csv and OUT/integrity.html."""
    from .page import integrity_csv, integrity_html

    if not 0.0 < threshold <= 1.0:
        raise IntegrityError(f"--threshold {threshold:g} is not in (0, 1]")
    start = time.monotonic()
    release = load_release(assignment, check_course(course))
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
