"""One submission graded, as every face grades it (``autograder grade``, grade-batch's
workers, the pytest plugin, the Gradescope container): its bytes read once (intake.py), exactly
those bytes graded from a copy the sandbox cannot see, the same folders hidden, the same
inputs per student, and a first line in the output when it looks like another problem set."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import GraderError
from .grade import DEFAULT_TIMEOUT
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
                                                 scratch=started.scratch, base=request.base,
                                                 visible_only=request.visible_only)
    finally:
        started.close()
    return results, other


def grade_submission(path: Path, assignment: str, *, sandbox, student: str | None, timeout: float,
                     scratch: Path, base: Path | None = None, visible_only: bool = False
                     ) -> tuple[Results, str, str | None]:
    """Grade one file as grade-batch does: its bytes read once (no link followed), their digest
    taken, and exactly those bytes graded (a copy under the same name in ``scratch``, a folder
    the sandbox cannot see), so what a results file records is what was graded even when the
    file changes meanwhile. Returns the results (a first line in their problems when the
    submission looks like another problem set), the digest, and that problem set."""
    snap = snapshot(path, base)
    results, other = grade_snapshot(snap, assignment, sandbox=sandbox, student=student or Path(path).stem,
                                    timeout=timeout, scratch=scratch, visible_only=visible_only)
    return results, snap.digest, other


def grade_snapshot(snap: Snapshot, assignment: str, *, sandbox, student: str, timeout: float,
                   scratch: Path | None, visible_only: bool = False) -> tuple[Results, str | None]:
    """Grade the bytes read (on this machine or another), through a copy in ``scratch`` (none
    is needed for a snapshot that could not be read)."""
    from .grade import grade, grade_loaded  # looked up here: a test may stand in for grade
    from .submission import Submission

    if snap.data is None:  # the grader says why, in the results, as for any submission
        sub = Submission(Path(snap.name))
        sub.problem(snap.problem or "it could not be read")
        return grade_loaded(sub, assignment, sandbox=sandbox, student=student, timeout=timeout,
                            visible_only=visible_only), None
    if snap.name in ("", ".", "..") or "/" in snap.name or "\0" in snap.name or scratch is None:
        raise GraderError(f"not a file name: {snap.name!r}")  # never a path out of scratch
    copy = Path(scratch) / snap.name
    copy.write_bytes(snap.data)
    try:
        results = grade(copy, assignment, sandbox=sandbox, student=student, timeout=timeout,
                        visible_only=visible_only)
    finally:
        copy.unlink(missing_ok=True)
    other = looks_like(snap.data, Path(snap.name).suffix, assignment)
    if other is None:
        return results, None
    results.problems.insert(0, other_set_line(other[0], other[1], assignment))
    return results, other[0]


def by_check(results: Results) -> dict[tuple[str, str], TestResult]:
    """Each test of the results under (exercise, check title)."""
    return {(t.exercise, t.title): t for t in results.tests}
