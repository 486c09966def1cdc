"""One submission's sandbox, started before the grader imports numpy and the course's checks.

The zygote takes a few hundred milliseconds to import what a submission may use and confine
itself; a cold `autograder grade` (or Gradescope's run_autograder) spent them waiting, after
spending as long on its own imports. Started first, on another core, the two overlap. This
module and what it imports stay light (no numpy, no handle.py: sandbox/launch.py starts the
zygote) for that reason; the folders every grade hides from its sandbox are written here, once.
"""
from __future__ import annotations

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
    """The reference's folder (reference.solutions_dir, read from the course without importing
    the reference), when there is one: a course installed without its folder (a student's
    install, which grades the visible checks only) has none to hide."""
    try:
        return [course.current().solutions]
    except course.CourseError:
        return []


class Started:
    """A launched zygote (its hello not read yet). ``sandbox``: the handle on it
    (sandbox.Sandbox), made when first asked for: handle.py and what it imports come after the
    launch."""

    def __init__(self, launched):
        self.launched = launched  # sandbox.launch.Launched
        self._sandbox = None

    @property
    def sandbox(self):
        if self._sandbox is None:
            from .sandbox import Sandbox

            self._sandbox = Sandbox(launched=self.launched)
        return self._sandbox

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
        else:  # never asked for (a line refused before grading): the zygote alone
            self.launched.end()


def start(submission: Path, hide: tuple[str | Path, ...] = ()) -> Started:
    """Launch the sandbox for grading ``submission`` (its folder and ``hide`` out of its
    sight), with the default limits, for one submission."""
    from .sandbox import launch

    return Started(launch.zygote(hidden_paths(Path(submission).parent, *hide), ahead=False))


def sandboxes(n: int, hide: list[str]) -> list:
    """``n`` sandboxes for a batch's workers, launched now (their hello not read): one zygote,
    with a socket for each worker. Where the launch fails, none: each worker then launches its
    own, and its failure, whatever it is, is reported per student as the grader's, never as a
    grade, and never ends the batch."""
    from .sandbox import launch

    try:
        launched = launch.shared(n, hide)
    except Exception:  # noqa: BLE001 - said per student by the worker that tries again
        return []
    try:
        from .sandbox import Sandbox  # after the launch: handle.py's imports would delay it

        return [Sandbox(launched=one) for one in launched]
    except Exception:  # noqa: BLE001 - as above
        for one in launched:
            one.end()
        return []


class Batch:
    """grade-batch's first look (`grade-batch DIR --out OUT [--jobs J]`) and the sandboxes
    launched for its workers: taken only when the full parse agrees on all three."""

    def __init__(self, root: Path, out: Path, jobs: int | None, sandboxes: list):
        self.root, self.out, self.jobs, self.sandboxes = root, out, jobs, sandboxes

    def take(self, root: Path, out: Path, jobs: int | None) -> list:
        if (root, out, jobs) != (self.root, self.out, self.jobs):
            return []
        taken, self.sandboxes = self.sandboxes, []
        return taken

    def close(self) -> None:
        for sandbox in self.sandboxes:  # not taken: a line refused, or one the full parse read otherwise
            sandbox.close()
        self.sandboxes = []


class Request:
    """What the command line's first look saw (`autograder grade SUB [--results FILE]`) and the
    sandbox started for it: used only when the full parse agrees on both paths."""

    def __init__(self, submission: Path, results: Path | None, started: Started):
        self.submission, self.results, self.started = submission, results, started

    def matches(self, submission: Path, results: Path | None) -> bool:
        return self.submission == submission and self.results == results

    def close(self) -> None:
        self.started.close()
