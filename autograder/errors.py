"""The one exception that means the grader, not the student, failed, and how such a failure
is told to the operator."""
from __future__ import annotations

from pathlib import Path


class GraderError(RuntimeError):
    """The grader itself failed: the sandbox could not start or broke its protocol, or a judge
    has a bug. Never stored as a student's grade: reported to the operator, graded again on a
    re-run."""


def failure_text(e: BaseException) -> str:
    """One line for the operator: the sandbox's or a judge's GraderError as it is; anything
    else is a bug in the grader, said with where it happened."""
    import traceback

    from .names import one_line

    if isinstance(e, GraderError):
        return one_line(str(e) or type(e).__name__)
    frames = traceback.extract_tb(e.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return one_line(f"grader bug{where}: {type(e).__name__}: {e}")
