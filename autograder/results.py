"""Results in Gradescope's results.json schema, as dataclasses.

Reference: https://gradescope-autograders.readthedocs.io/en/latest/specs/ (top level
``score``, ``max_score``, ``execution_time``, ``output``, ``tests``; each test ``name``,
``score``, ``max_score``, ``status``, ``output``, ``visibility``, ``tags``,
``extra_data``). Tags carry ``exercise:<name>`` and, for a recognised mistake,
``misconception:<id>``.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path


@dataclass
class TestResult:
    name: str  # unique; starts with the exercise's function name
    score: float  # points earned: max_score when passed, else 0
    max_score: float
    status: str  # "passed" or "failed"
    output: str  # the feedback a student reads
    visibility: str  # "visible" for checks a student can run, else "after_due_date"
    tags: list[str] = field(default_factory=list)
    # Gradescope stores but does not show extra_data: the weights behind feedback heatmaps.
    extra_data: dict = field(default_factory=dict)

    @property
    def exercise(self) -> str:
        return next(t.split(":", 1)[1] for t in self.tags if t.startswith("exercise:"))

    @property
    def title(self) -> str:
        """What the test checks, without its exercise's name in front."""
        prefix = f"{self.exercise}: "
        return self.name[len(prefix):] if self.name.startswith(prefix) else self.name

    @property
    def misconception(self) -> str | None:
        return next((t.split(":", 1)[1] for t in self.tags if t.startswith("misconception:")), None)


@dataclass
class Results:
    score: float  # the sum of the tests' scores
    max_score: float
    execution_time: float  # seconds
    output: str  # problems with the submission as a whole, one per line
    tests: list[TestResult]
    # {"isolation": "full" | "uid" | "none", "isolation_layers": [...]}: how it was confined
    extra_data: dict = field(default_factory=dict)

    def exercise_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for t in self.tests:
            scores[t.exercise] = scores.get(t.exercise, 0) + t.score
        return scores

    def to_json(self) -> str:
        """One test a line: readable, and written by json's C encoder (``indent`` would use its
        slow Python one, and ``asdict`` deep-copies every heatmap: together a third of the
        grader's own time per submission)."""
        head = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "tests"}
        tests = ",\n  ".join(json.dumps(vars(t), allow_nan=False) for t in self.tests)
        return json.dumps(head, allow_nan=False)[:-1] + ',\n "tests": [\n  ' + tests + "\n ]}"


def from_json(text: str) -> Results:
    doc = json.loads(text)
    tests = [TestResult(**t) for t in doc.pop("tests")]
    return Results(tests=tests, **doc)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The temporary name stays short (a name near 255 bytes plus a suffix would not fit), and
    # text that is not valid Unicode is escaped rather than stopping the write.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:64]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
        os.replace(tmp, path)  # atomic: a reader, or a killed run, sees the old file or the new
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
