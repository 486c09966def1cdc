"""What a check is, declared and bound: the calls it makes, its title and points, its verdict.
Plain data, depending on the results model alone, so that an exercise's declaration
(exercise.py) and the judges that compare what came back (checks.py) both build on it. A
judge is handed one ``sandbox.frames.CallOutcome`` per call, and the reference (``None`` for
a visible check)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .results import Finding, Kind


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    echo: bool = False  # send the input arrays back after the call, to see if they changed

    def as_job(self):
        return (self.func, self.args, self.kwargs, self.echo)


@dataclass
class Verdict:
    passed: bool
    message: str = ""  # what the student reads, whole
    misconception: str | None = None
    # (expected, got) attention weights of one sequence, for the feedback page's heatmaps
    heatmap: tuple | None = None
    # The message's parts and how the check ended, where the grader knows them (None: only
    # passed or failed is known; a judge that writes its own words gives none).
    finding: Finding | None = None

    @property
    def kind(self) -> Kind:
        if self.finding is not None:
            return self.finding.kind
        return Kind.PASSED if self.passed else Kind.WRONG


@dataclass(frozen=True)
class Spec:
    """A check as declared: what it is called, what it is worth, who may run it. No inputs."""
    title: str  # unique within its exercise; says what is checked, in a student's words
    points: float
    visible: bool = False  # a student runs it in the notebook; hidden ones decide the grade

    def bind(self, calls: tuple[Call, ...], judge: Callable[[list, Any], Verdict]) -> "Bound":
        """This check with one student's inputs: the calls to make and who judges them."""
        return Bound(self, tuple(calls), judge)


@dataclass(frozen=True)
class Bound:
    spec: Spec
    calls: tuple[Call, ...]
    judge: Callable[[list, Any], Verdict]


@dataclass(frozen=True)
class Check:
    """A declared check of one exercise, bound to one student's inputs."""
    exercise: str
    spec: Spec
    calls: tuple[Call, ...]  # a check shares a call with another by holding the same Call
    judge: Callable[[list, Any], Verdict]

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def points(self) -> float:
        return self.spec.points

    @property
    def visible(self) -> bool:
        return self.spec.visible

    @property
    def name(self) -> str:
        return test_name(self.exercise, self.spec)


def test_name(exercise: str, spec: Spec) -> str:
    """A check's test name in a results file: unique within an assignment, its exercise first."""
    return f"{exercise}: {spec.title}"


class Fail(Exception):
    """Raised inside a judge to end it with a failing verdict."""

    def __init__(self, message: str, misconception: str | None = None, heatmap=None, finding: Finding | None = None):
        super().__init__(message)
        self.verdict = Verdict(False, message, misconception, heatmap, finding)

    @classmethod
    def of(cls, finding: Finding, misconception: str | None = None, heatmap=None) -> "Fail":
        """A failure made of ``finding``'s parts: its message is their text."""
        return cls(finding.text(), misconception, heatmap, finding)
