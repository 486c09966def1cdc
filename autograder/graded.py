"""One submission graded, as every face grades it (``autograder grade``, grade-batch's
workers, the pytest plugin, the Gradescope container): its bytes read once (intake.py), exactly
those bytes graded (parsed as read, never written or read again), the same folders hidden, the
same inputs per student, and a first line in the output when it looks like another problem set."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from . import submission
from .errors import GraderError
from .grade import DEFAULT_TIMEOUT, grade_loaded
from .prestart import Started, start
from .intake import Snapshot, snapshot
from .other_set import looks_like, other_set_line
from .results import Results, TestResult


@dataclass(frozen=True)
class Request:
    submission: Path
    assignment: str
    student: str | None = None  # None: the file's stem, as for `autograder grade`
    timeout: float = DEFAULT_TIMEOUT
    visible_only: bool = False  # the notebook's visible checks, judged without the reference
    base: Path | None = None  # no link is followed below this folder on the way to the file (else: its name only)


def grade_file(request: Request, hide: tuple[str | Path, ...] = ()) -> Results:
    """The results of one submission. ``hide``: more folders the sandbox must not see (where
    the caller writes). Raises GraderError (or a bug's exception) when the grader failed:
    never a student's grade."""
    return grade_file_and_set(request, hide)[0]


def grade_file_and_set(request: Request, hide: tuple[str | Path, ...] = (),
                       started: Started | None = None) -> tuple[Results, str | None]:
    """``grade_file``, and the problem set the file looks like when it is not the one graded.
    ``started``: the sandbox prestart.start launched for this file (with ``hide``), if the
    caller launched it early; else it is launched here, and starts while the file is read and
    its checks are drawn."""
    started = started or start(request.submission, hide)
    try:
        with started.sandbox as sandbox:
            results, _, other = grade_submission(request.submission, request.assignment, sandbox=sandbox,
                                                 student=request.student, timeout=request.timeout,
                                                 base=request.base, visible_only=request.visible_only)
    finally:
        started.close()
    return results, other


def grade_submission(path: Path, assignment: str, *, sandbox, student: str | None, timeout: float,
                     base: Path | None = None, visible_only: bool = False) -> tuple[Results, str, str | None]:
    """Grade one file as grade-batch does: its bytes read once (no link followed), their digest
    taken, and exactly those bytes graded, so what a results file records is what was graded
    even when the file changes meanwhile. Returns the results (a first line in their problems
    when the submission looks like another problem set), the digest, and that problem set."""
    snap = snapshot(path, base)
    results, other = grade_snapshot(snap, assignment, sandbox=sandbox, student=student or Path(path).stem,
                                    timeout=timeout, visible_only=visible_only)
    return results, snap.digest, other


def grade_snapshot(snap: Snapshot, assignment: str, *, sandbox, student: str, timeout: float,
                   visible_only: bool = False) -> tuple[Results, str | None]:
    """Grade the bytes read (on this machine or another) as they are: nothing is written, and
    nothing read again. ``execution_time`` counts from here, their parsing included."""
    started = time.monotonic()
    if snap.data is None:  # the grader says why, in the results, as for any submission
        sub = submission.Submission(Path(snap.name))
        sub.problem(snap.problem or "it could not be read")
    elif snap.name in ("", ".", "..") or "/" in snap.name or "\0" in snap.name:
        raise GraderError(f"not a file name: {snap.name!r}")  # quoted in the results as the file's name: never a path
    else:
        sub = submission.parse(Path(snap.name), snap.data)
    results = grade_loaded(sub, assignment, sandbox=sandbox, student=student, timeout=timeout, started=started,
                           visible_only=visible_only)
    other = None if snap.data is None else looks_like(snap.data, Path(snap.name).suffix, assignment, sub.notebook)
    if other is None:
        return results, None
    results.problems.insert(0, other_set_line(other[0], other[1], assignment))
    return results, other[0]


def by_check(results: Results) -> dict[tuple[str, str], TestResult]:
    """Each test of the results under (exercise, check title)."""
    return {(t.exercise, t.title): t for t in results.tests}
