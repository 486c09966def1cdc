"""A whole class: who is graded in this run, on which pool, and the books kept of it.

Each student's results file and feedback page are written atomically the moment they are
graded (tasks.py, by the pool's workers), so a batch killed at any point leaves only whole
files. A re-run regrades exactly the students whose record no longer stands (regrade.py:
the submission's bytes, the grader's version, ``--timeout``; everyone with ``force``), reads
the rest back, and reports the score changes of the regraded (``changes.csv``). grades.csv
and class.html are rebuilt from the results files at the end, so they are the same whether
or not the batch was interrupted. Grading one file does not come through here (graded.py).

Two kinds of trouble are kept apart. Whatever is wrong with a *submission* (a link, a pipe,
a broken notebook, an odd name) is that student's result: score 0 and a one-line reason in
their results file. A failure of the *grader* (the sandbox cannot start or breaks its
protocol, a judge has a bug, a worker dies) is never written as a grade: the student gets
no results file (an earlier one stays, out of date, so a re-run grades them again), is listed
in ``BatchResult.failures`` for the operator, has an empty row in grades.csv, and their auto
scores are withdrawn from the gradebook.

What the reports read is typed where it is made (class_results.py): a ``StudentRow`` per
graded student (grades.csv, class.html) and a ``BatchSummary`` of the class (class.html, the
printed summary).
"""
from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import regrade
from .assignments import exercise_points, exercises
from .class_results import BatchSummary, Failure, ScoreChange, StudentRow, summarize_class
from .discovery import ClassFolderError, class_folder, discover, nothing_to_grade
from .errors import GraderError
from .grade import DEFAULT_TIMEOUT
from .gradebook_sink import GradebookReport, GradebookSink
from .names import readable
from .pools import LocalPool, Pool
from .progress import Progress
from .report.dashboard import ClassReader, write_dashboard
from .report.table import changes_csv, grades_csv
from .results import write_atomic
from .tasks import Job, RunSettings


@dataclass
class BatchResult:
    rows: list[StudentRow]  # one per graded student, sorted
    failures: list[Failure]  # not graded; a re-run grades them
    summary: BatchSummary  # of ``rows``
    new: list[str] = field(default_factory=list)  # graded for the first time
    regraded: list[str] = field(default_factory=list)  # had a grade, graded again
    up_to_date: list[str] = field(default_factory=list)  # their results file stands
    not_selected: list[str] = field(default_factory=list)  # left as they were (``students`` named others)
    changes: list[ScoreChange] = field(default_factory=list)  # as summary.changes
    other_sets: dict[str, str] = field(default_factory=dict)  # student -> the problem set it looks like
    gradebook: GradebookReport | None = None


class BatchIncomplete(GraderError):
    """Raised by grade_batch after writing everything it could, when the grader failed on some."""

    def __init__(self, failures: list[Failure]):
        self.failures = failures
        super().__init__(f"the grader failed on {len(failures)} submission(s): "
                         + "; ".join(f"{f.student!r}: {f.reason}" for f in failures[:3]))


def run_batch(root: Path, assignment: str, out: Path, *, jobs: int | None = None,
              timeout: float = DEFAULT_TIMEOUT, progress: bool | None = None, force: bool = False,
              students: list[str] | None = None, gradebook: str | None = None,
              pool: Pool | None = None) -> BatchResult:
    """Grade the submissions under ``root`` into ``out`` that need it: new ones, and those whose
    submission, grader version or ``timeout`` changed since their results file was written (all
    of them with ``force``; only the ``students`` named, when given). ``gradebook``: a
    SQLAlchemy URL the scores also go to, as students finish. ``pool``: where to grade
    (default: ``LocalPool(jobs)``, this machine's processes; ``cluster.DaskPool``: a cluster).

    Raises ClassFolderError (before writing anything) when there is nothing to grade or a named
    student has no submission, and nbgrader_bridge.GradebookError when the gradebook cannot be
    opened; the grader's failures on single students are in the result, not raised."""
    from .grade import hidden_paths

    names = exercises(assignment)
    root, out = Path(root), Path(out)
    if not root.is_dir():
        raise ClassFolderError(f"not a folder: {root}" if root.exists() else f"no such folder: {root}")
    entries = discover(root, assignment)
    if not entries:
        raise ClassFolderError(nothing_to_grade(root, assignment))
    selected = set(students or ())
    unknown = sorted(selected - {e.student for e in entries})
    if unknown:
        raise ClassFolderError(f"no {assignment} submission of {', '.join(repr(readable(s)) for s in unknown)} "
                               f"in {class_folder(root, assignment)}")
    if gradebook:
        from .nbgrader_bridge import check_gradebook

        check_gradebook(gradebook)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob(".*.tmp"), *(out / "feedback").glob(".*.tmp")]:
        stale.unlink()  # a write the last, killed, run did not finish
    run, grader = regrade.run_number(out), regrade.grader_version()
    result = BatchResult([], [], summarize_class(assignment, []))
    rows, failures, changes = result.rows, result.failures, result.changes
    ungraded: list[str] = []  # not selected and without a grade: an empty row
    todo: list[Job] = []
    for e in entries:
        earlier = regrade.earlier(out, e.student, assignment)
        if selected and e.student not in selected:
            if earlier.row is not None:
                rows.append(earlier.row)
                result.not_selected.append(e.student)
            else:
                ungraded.append(e.student)
            continue
        why = regrade.why_regrade(earlier, e, assignment, grader, timeout, force, out)
        if why is None:
            rows.append(earlier.row)
            result.up_to_date.append(e.student)
            carried = regrade.carried(earlier, run)
            if carried is not None:  # regraded by this run before it was killed
                changes.append(regrade.change(e.student, carried, earlier.row, earlier.row.max_score))
        else:
            todo.append(Job(e, why, regrade.previous(earlier, why, run)))
    todo.sort(key=_size, reverse=True)
    bar = Progress(len(entries), len(entries) - len(todo),
                   enabled=sys.stderr.isatty() if progress is None else progress)
    pool = pool if pool is not None else LocalPool(jobs)
    reader = ClassReader(out)
    sink = None
    try:
        pool.start(todo, RunSettings(assignment, str(out), float(timeout), run, tuple(hidden_paths(root, out))))
        # Only from here on may this process hold a database connection, which a forked worker
        # could otherwise copy and close.
        if gradebook:
            sink = GradebookSink(gradebook, assignment, formgrader_files(root, assignment, out))
            for row in rows:
                sink.put(row.student, row.exercises)
        for job, outcome in pool.outcomes():
            if outcome.row is not None:
                rows.append(outcome.row)
                reader.add(outcome.seen)  # for the dashboard, now, while the workers go on
                (result.regraded if job.previous is not None else result.new).append(outcome.student)
                if outcome.other_set:
                    result.other_sets[outcome.student] = outcome.other_set
            else:
                failures.append(Failure(outcome.student, outcome.failure or "unknown failure"))
            if job.previous is not None:
                changes.append(regrade.change(outcome.student, job.previous, outcome.row,
                                              sum(map(exercise_points, names))))
            if sink is not None:
                sink.put(outcome.student, outcome.row.exercises if outcome.row is not None else None)
            bar.step()
    except BaseException:
        pool.close(cancel=True)
        if sink is not None:
            sink.abort()
        raise
    try:
        bar.close()
        result.gradebook = sink.finish() if sink is not None else None
        rows.sort(key=lambda r: r.student)
        failures.sort(key=lambda f: f.student)
        changes.sort(key=lambda c: c.student)
        for names_list in (result.new, result.regraded, result.up_to_date, result.not_selected):
            names_list.sort()
        summary = dataclasses.replace(summarize_class(assignment, rows), changes=tuple(changes))
        result.summary = summary
        write_atomic(out / "grades.csv", grades_csv(rows, names, [f.student for f in failures] + ungraded))
        write_atomic(out / "changes.csv", changes_csv(changes))
        write_dashboard(out, summary, rows, failures, root=Path(root), timeout=timeout,
                        grading=pool.describe(), reader=reader)  # and index.html
        write_atomic(out / regrade.RUN_FILE, f"{run + 1}\n")  # this run is complete: its changes are reported
    finally:
        pool.close()  # the workers and the zygote, let go with the last student, ended meanwhile
    return result


def _size(job: Job) -> int:
    """How long a student is likely to take, as far as can be told before grading: the bytes
    of their file. The largest are handed out first (longest processing time first), so that
    the last to finish is a small one rather than a slow one that leaves the other workers idle
    at the end: a notebook that prints every array took 150 ms where most take 10. Not followed
    if it is a link (grading does not follow it either); an unreadable one counts as empty."""
    try:
        return os.lstat(job.entry.path).st_size
    except OSError:
        return 0


def formgrader_files(root: Path, assignment: str, out: Path) -> tuple[Path, Path] | None:
    """(the nbgrader course, the results folder) when the class is an nbgrader course's
    submitted/, whose formgrader then shows the gradebook's grades; else None."""
    from .nbgrader_autograded import nbgrader_course

    course = nbgrader_course(class_folder(root, assignment))
    return (course, Path(out).absolute()) if course is not None else None


def grade_batch(root: Path, assignment: str, out: Path, *, jobs: int | None = None,
                timeout: float = DEFAULT_TIMEOUT, progress: bool | None = None, **options) -> list[StudentRow]:
    """run_batch for callers that want the rows: one summary per student, sorted. Raises
    BatchIncomplete (after writing every file it could) when the grader failed on anyone."""
    result = run_batch(root, assignment, out, jobs=jobs, timeout=timeout, progress=progress, **options)
    if result.failures:
        raise BatchIncomplete(result.failures)
    return result.rows
