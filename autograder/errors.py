"""The one exception that means the grader, not the student, failed."""
from __future__ import annotations


class GraderError(RuntimeError):
    """The grader itself failed: the sandbox could not start or broke its protocol, or a judge
    has a bug. Never stored as a student's grade: reported to the operator, graded again on a
    re-run."""
