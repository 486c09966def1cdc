"""One submission graded as ``autograder grade`` grades it, for the faces that are not the
command line (the pytest plugin): the same snapshot of the file's
bytes, the same sandbox with the same folders hidden, the same inputs per student."""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .grade import DEFAULT_TIMEOUT, hidden_paths
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


def grade_file_and_set(request: Request, hide: tuple[str | Path, ...] = ()) -> tuple[Results, str | None]:
    """``grade_file``, and the problem set the file looks like when it is not the one graded."""
    from .batch import grade_submission
    from .sandbox import Sandbox

    scratch = Path(tempfile.mkdtemp(prefix="autograder-grade-"))  # the copy graded; hidden from the sandbox
    try:
        with Sandbox(hide=hidden_paths(request.submission.parent, scratch, *hide)) as sandbox:
            results, _, other = grade_submission(request.submission, request.assignment, sandbox=sandbox,
                                                 student=request.student, timeout=request.timeout, scratch=scratch,
                                                 base=request.base, visible_only=request.visible_only)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results, other


def by_check(results: Results) -> dict[tuple[str, str], TestResult]:
    """Each test of the results under (exercise, check title)."""
    return {(t.exercise, t.title): t for t in results.tests}
