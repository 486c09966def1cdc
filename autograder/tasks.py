"""One student's grading, as plain data that crosses to a worker and back: the job a pool is
given (``Job``, ``RunSettings``), the task a worker grades (``Task``: the submission's bytes as
read, no path of the machine that read them), what it sends back (``Graded``: the files to
write, or the grader's failure), and the ``Outcome`` a pool hands the batch once the files are
written."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import regrade
from .class_results import StudentRow, feedback_path, results_path, summarize
from .discovery import Entry
from .errors import failure_text
from .graded import grade_snapshot
from .intake import Snapshot, snapshot
from .report.dashboard import Seen
from .report.feedback import feedback_html
from .results import Results, write_atomic


@dataclass(frozen=True)
class Job:
    """A student to grade, and the grade they had (None: none to compare with)."""
    entry: Entry
    why: str
    previous: dict | None  # {"score", "max_score", "exercises", "why"} of the grade being replaced


@dataclass(frozen=True)
class RunSettings:
    """What every student of one run is graded with."""
    assignment: str
    out: str  # the results folder, on the machine running the batch
    timeout: float
    run: int  # the run's number (regrade.RUN_FILE)
    hide: tuple[str, ...] = ()  # folders the local sandboxes must not see


@dataclass(frozen=True)
class Outcome:
    """One student's grading, as a pool hands it back: a summary row, or the grader's failure."""
    student: str
    row: StudentRow | None = None
    failure: str | None = None
    other_set: str | None = None  # the problem set the submission looks like, when not the one graded
    seen: Seen | None = None  # what the class dashboard keeps of the results file written (with ``row``)


@dataclass(frozen=True)
class Task:
    """What grading one student takes, in plain data (no path of the machine that read it), so
    a worker on another machine can grade it: the submission as read, and the run's settings."""
    student: str
    snapshot: Snapshot
    assignment: str
    timeout: float
    run: int
    previous: dict | None  # the grade being replaced (see Job)


@dataclass(frozen=True)
class Graded:
    """A Task's outcome, in plain data: the files to write, or why the grader failed."""
    student: str
    grader: str  # regrade.grader_version() of the grader that graded it
    results: str | None = None  # results file's text (None: the grader failed)
    feedback: str | None = None  # the feedback page's HTML
    row: StudentRow | None = None
    other_set: str | None = None
    isolation: dict | None = None  # how the sandbox confined it: the results' isolation and isolation_layers
    failure: str | None = None  # one line: the grader's failure, never a grade
    seen: Seen | None = None  # what the class dashboard keeps of the results


def task_for(job: Job, settings: RunSettings) -> Task:
    """Read the job's submission now: its bytes travel with the task."""
    return Task(job.entry.student, snapshot(job.entry.path, job.entry.base), settings.assignment,
                settings.timeout, settings.run, job.previous)


def grade_task(task: Task, sandbox) -> Graded:
    """Grade a task where the sandbox is: the results with their record, the feedback page and
    the summary row, made here so the machine that writes them only writes. The grader's
    failure comes back as ``failure``, never as a grade."""
    try:
        results, other = grade_snapshot(task.snapshot, task.assignment, sandbox=sandbox, student=task.student,
                                        timeout=task.timeout)
        return graded(task, results, other)
    except Exception as e:  # noqa: BLE001 - the grader's failure: reported, not stored as a grade
        return Graded(task.student, regrade.grader_version(), failure=failure_text(e))


def graded(task: Task, results: Results, other: str | None = None) -> Graded:
    """What to write for ``results``: its record of what was graded, its feedback page, its row."""
    regrade.record(results, task.student, task.previous, task.assignment, task.snapshot.digest, task.timeout,
                   task.run)
    return Graded(task.student, regrade.grader_version(), results.to_json() + "\n",
                  feedback_html(task.student, task.assignment, results), summarize(task.student, results), other,
                  {k: results.extra_data[k] for k in ("isolation", "isolation_layers") if k in results.extra_data},
                  seen=Seen.of(task.student, results))


def store(out: Path, done: Graded) -> Outcome:
    """Write a graded student's files (the page first: a results file on disk means this
    student is done, page included), atomically; a failure writes nothing."""
    if done.failure is not None or done.results is None or done.feedback is None or done.row is None \
            or done.seen is None:
        return Outcome(done.student, failure=done.failure or "the grader sent back no results")
    write_atomic(feedback_path(out, done.student), done.feedback)
    write_atomic(results_path(out, done.student), done.results)
    return Outcome(done.student, row=done.row, other_set=done.other_set, seen=done.seen)
