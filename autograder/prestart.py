"""One submission's sandbox, started before the grader imports numpy and the course's checks.

The zygote takes a few hundred milliseconds to import what a submission may use and confine
itself; a cold `autograder grade` (or Gradescope's run_autograder) spent them waiting, after
spending as long on its own imports. Started first, on another core, the two overlap. This
module and what it imports stay light (no numpy) for that reason; the folders every grade
hides from its sandbox are written here, once.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import course


def hidden_paths(*paths: str | Path) -> list[str]:
    """What the sandbox must not see: the engine's checkout, the course's folder (wherever it
    lies) and its solutions, and the given folders."""
    here = Path(__file__).resolve().parent.parent
    chosen = course.current()
    folders = {here, chosen.package_dir, *([chosen.root] if chosen.root else []), *_solutions()}
    return [str(p) for p in {*folders, *(Path(p).resolve() for p in paths)}]


def _solutions() -> list[Path]:
    """The reference's folder, when there is one: a course installed without its folder (a
    student's install, which grades the visible checks only) has none to hide."""
    from . import reference

    try:
        return [reference.solutions_dir()]
    except course.CourseError:
        return []


@dataclass
class Started:
    """A launched sandbox (its hello not read yet) and the folder the submission's copy will be
    graded from, which that sandbox cannot see."""
    sandbox: object  # sandbox.Sandbox
    scratch: Path

    def close(self) -> None:
        self.sandbox.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def start(submission: Path, hide: tuple[str | Path, ...] = ()) -> Started:
    """Launch the sandbox for grading ``submission`` (its folder, a new scratch folder and
    ``hide`` out of its sight)."""
    from .sandbox import Sandbox

    scratch = Path(tempfile.mkdtemp(prefix="autograder-grade-"))
    try:
        return Started(Sandbox(hide=hidden_paths(Path(submission).parent, scratch, *hide)).launch(), scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


@dataclass
class Request:
    """What the command line's first look saw (`autograder grade SUB [--results FILE]`) and the
    sandbox started for it: used only when the full parse agrees on both paths."""
    submission: Path
    results: Path | None
    started: Started

    def matches(self, submission: Path, results: Path | None) -> bool:
        return self.submission == submission and self.results == results

    def close(self) -> None:
        self.started.close()
