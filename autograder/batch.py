"""A whole class: discover submissions, grade them on a pool of workers, resume after a kill.

Each worker process owns one sandbox. A student's results file and feedback page are
written atomically the moment they are graded, so a batch killed at any point leaves only
whole files; re-running skips every student whose results file is there and reads back
fine. grades.csv and class.html are rebuilt from the results files at the end, so they are
the same whether or not the batch was interrupted.

Two kinds of trouble are kept apart. Whatever is wrong with a *submission* (a link, a pipe,
a broken notebook, an odd name) is that student's result: score 0 and a one-line reason in
their results file. A failure of the *grader* (the sandbox cannot start or breaks its
protocol, a judge has a bug, a worker dies) is never written as a grade: the student gets
no results file, is listed in ``BatchResult.failures`` for the operator, and a re-run
grades them again.

What the reports read is typed here, where it is made: a ``StudentRow`` per graded student
(grades.csv, class.html) and a ``BatchSummary`` of the class (class.html, the printed summary).
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import stat
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from .assignments import exercise_points, exercises
from .errors import GraderError
from .grade import DEFAULT_TIMEOUT
from .names import file_stem, one_line
from .report.dashboard import write_dashboard
from .report.feedback import feedback_html
from .report.table import grades_csv
from .results import Results, from_json, write_atomic
from .sandbox.confine import PR_SET_PDEATHSIG

SUFFIXES = (".py", ".ipynb")
# What the grader of an earlier version wrote as a student's 0 when it failed itself: such a
# results file is not a grade, so a re-run grades that student again.
_OLD_GRADER_FAILURE = "the grader failed on this submission"


@dataclass(frozen=True)
class Entry:
    student: str  # the name on disk; not UTF-8 bytes are surrogate-escaped (os.fsdecode)
    path: Path  # what to grade; it may turn out to be a link, a pipe or missing: load() says so
    base: Path | None = None  # the class folder: no link below it is followed on the way to path


@dataclass(frozen=True)
class Failure:
    """The grader, not the student, failed: reported to the operator, never stored as a grade."""
    student: str
    reason: str  # one line


@dataclass(frozen=True)
class StudentRow:
    """One graded student, as the reports read it: a row of grades.csv, counted in class.html."""
    student: str
    score: float
    max_score: float
    exercises: dict[str, float]  # exercise -> points earned (an exercise not in it scored 0)
    misconceptions: tuple[str, ...] = ()  # the catalogued mistakes its tests were tagged with, sorted

    def __getitem__(self, key: str):
        """``row["score"]``, as rows were read when they were dicts; new code reads attributes."""
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)


@dataclass(frozen=True)
class ExerciseTally:
    """How many students got an exercise's full points, part of them, none."""
    full: int
    partial: int
    zero: int


@dataclass(frozen=True)
class BatchSummary:
    """The class at a glance: what class.html shows and the command prints."""
    assignment: str
    students: int  # graded ones
    mean: float  # their mean score (0 when there are none)
    max_score: float  # the assignment's points
    exercises: dict[str, ExerciseTally]  # in the assignment's order
    mistakes: dict[str, list[str]]  # catalogued mistake -> the students who made it; most common first


@dataclass(frozen=True)
class Outcome:
    """One student's grading, as a worker hands it back: a summary row, or the grader's failure."""
    student: str
    row: StudentRow | None = None
    failure: str | None = None


@dataclass
class BatchResult:
    rows: list[StudentRow]  # one per graded student, sorted
    failures: list[Failure]  # not graded; a re-run grades them
    summary: BatchSummary  # of ``rows``


class ClassFolderError(ValueError):
    """The class folder is missing, unreadable or holds no submission: nothing to grade."""


class BatchIncomplete(GraderError):
    """Raised by grade_batch after writing everything it could, when the grader failed on some."""

    def __init__(self, failures: list[Failure]):
        self.failures = failures
        super().__init__(f"the grader failed on {len(failures)} submission(s): "
                         + "; ".join(f"{f.student!r}: {f.reason}" for f in failures[:3]))


def class_folder(root: Path, assignment: str) -> Path:
    """The folder that holds the students: ``root``, or its nbgrader ``submitted/``."""
    root = Path(root)
    sub = root / "submitted"
    if not sub.is_dir() or sub.is_symlink():
        return root
    if (root / "nbgrader_config.py").is_file():
        return sub  # nbgrader's course folder
    # A student may be called "submitted": then submitted/<assignment>/ is their work and
    # root is already the class folder (descending would silently drop the class).
    return root if (sub / assignment).is_dir() else sub


def discover(root: Path, assignment: str) -> list[Entry]:
    """Submissions under ``root``: nbgrader's submitted/<student>/<assignment>/*.ipynb
    (``root`` may be the course folder or its submitted/), or a flat folder of
    <student>.py / <student>.ipynb. Sorted by student; a notebook wins over a .py.

    Nothing is followed through a link and nothing is opened here; anything that looks like
    a submission is listed, whatever it is (a link, a pipe, a device, a folder), so that
    grading gives that student a reason instead of leaving them out. Raises
    ClassFolderError when the folder cannot be listed."""
    folder = class_folder(root, assignment)
    try:
        children = sorted(os.scandir(folder), key=lambda d: d.name)
    except OSError as e:
        raise ClassFolderError(f"cannot read the class folder {folder}: {e.strerror}") from None
    nbgrader: dict[str, Entry] = {}
    flat: dict[str, Entry] = {}
    for child in children:
        name, path = child.name, Path(child.path)
        if name.startswith("."):
            continue
        try:
            is_dir, is_link = child.is_dir(follow_symlinks=False), child.is_symlink()
        except OSError:
            continue
        if is_dir and _lexists(path / assignment):
            nbgrader[name] = Entry(name, path / assignment / _notebook_in(path / assignment, assignment), folder)
        elif is_link and not name.endswith(SUFFIXES) and os.path.isdir(path / assignment):
            # A student folder that is a link (to anywhere): listed, so the student is told; the
            # stat above looks at the target but reads nothing; load() refuses to go through it.
            nbgrader[name] = Entry(name, path / assignment / f"{assignment}.ipynb", folder)
        elif name.endswith(SUFFIXES) and (not is_dir or not _lexists(path / assignment)):
            stem, suffix = os.path.splitext(name)
            if stem and (stem not in flat or suffix == ".ipynb"):
                flat[stem] = Entry(stem, path, folder)
    found = {**flat, **nbgrader}
    return [found[s] for s in sorted(found)]


def _lexists(path: Path) -> bool:
    return os.path.lexists(path)


def _notebook_in(folder: Path, assignment: str) -> str:
    """The notebook to grade in submitted/<student>/<assignment>/: <assignment>.ipynb if
    there, else the first notebook; a link or a file that is not a folder is left to load()."""
    preferred = f"{assignment}.ipynb"
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return preferred
        notebooks = sorted(n for n in os.listdir(folder) if n.endswith(".ipynb") and not n.startswith("."))
    except OSError:
        return preferred
    return preferred if preferred in notebooks or not notebooks else notebooks[0]


# ---------------------------------------------------------------- the workers

_sandbox = None
_hide: list[str] = []


def _start_worker(hide: list[str]) -> None:
    global _hide
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a worker dies with the batch, even when SIGKILLed
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle
    _hide = hide
    try:
        _worker_sandbox()
    except GraderError:
        pass  # each student tries again, and a failure is reported as theirs to regrade


def _worker_sandbox():
    global _sandbox
    if _sandbox is None:
        from .sandbox import Sandbox

        _sandbox = Sandbox(hide=_hide)
    return _sandbox


def _grade_one(entry: Entry, assignment: str, out: str, timeout: float) -> Outcome:
    from .grade import grade

    try:
        results = grade(entry.path, assignment, sandbox=_worker_sandbox(), student=entry.student,
                        timeout=timeout, base=entry.base)
        _write_student(Path(out), entry.student, assignment, results)
    except Exception as e:  # noqa: BLE001 - the grader's failure: reported, not stored as a grade
        return Outcome(entry.student, failure=failure_text(e))
    return Outcome(entry.student, row=summarize(entry.student, results))


def failure_text(e: BaseException) -> str:
    """One line for the operator: the sandbox's or a judge's GraderError as it is; anything
    else is a bug in the grader, said with where it happened."""
    if isinstance(e, GraderError):
        return one_line(str(e) or type(e).__name__)
    frames = traceback.extract_tb(e.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return one_line(f"grader bug{where}: {type(e).__name__}: {e}")


def results_path(out: Path, student: str) -> Path:
    return Path(out) / f"{file_stem(student)}.json"


def feedback_path(out: Path, student: str) -> Path:
    return Path(out) / "feedback" / f"{file_stem(student)}.html"


def _write_student(out: Path, student: str, assignment: str, results: Results) -> None:
    # The page first: a results file on disk means this student is done, page included.
    write_atomic(feedback_path(out, student), feedback_html(student, assignment, results))
    write_atomic(results_path(out, student), results.to_json() + "\n")


def summarize(student: str, results: Results) -> StudentRow:
    return StudentRow(student, results.score, results.max_score, results.exercise_scores(),
                      tuple(sorted({t.misconception for t in results.tests if t.misconception})))


def summarize_class(assignment: str, rows: list[StudentRow]) -> BatchSummary:
    """The class in numbers; ``rows`` in the order their students are listed (sorted)."""
    names = exercises(assignment)
    points = {e: exercise_points(e) for e in names}
    tallies = {}
    for e in names:
        got = [r.exercises.get(e, 0) for r in rows]
        tallies[e] = ExerciseTally(sum(g == points[e] for g in got), sum(0 < g < points[e] for g in got),
                                   sum(g == 0 for g in got))
    mistakes: dict[str, list[str]] = {}
    for row in rows:
        for m in row.misconceptions:
            mistakes.setdefault(m, []).append(row.student)
    mistakes = dict(sorted(mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    mean = sum(r.score for r in rows) / len(rows) if rows else 0.0
    return BatchSummary(assignment, len(rows), mean, sum(points.values()), tallies, mistakes)


# ---------------------------------------------------------------- the batch

def _finished(out: Path, student: str) -> Results | None:
    try:
        results = from_json(results_path(out, student).read_text())
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if not feedback_path(out, student).is_file() or _OLD_GRADER_FAILURE in results.output:
        return None
    return results


def run_batch(root: Path, assignment: str, out: Path, *, jobs: int | None = None,
              timeout: float = DEFAULT_TIMEOUT, progress: bool | None = None) -> BatchResult:
    """Grade every submission under ``root`` into ``out``. Raises ClassFolderError (before
    writing anything) when there is nothing to grade; the grader's failures on single
    students are in the result, not raised."""
    from .grade import hidden_paths

    names = exercises(assignment)
    if not Path(root).is_dir():
        raise ClassFolderError(f"no such folder: {root}")
    entries = discover(root, assignment)
    if not entries:
        raise ClassFolderError(f"no submissions for {assignment} in {class_folder(root, assignment)} "
                               f"(expected <student>/{assignment}/*.ipynb or <student>.py|.ipynb)")
    out = Path(out)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob(".*.tmp"), *(out / "feedback").glob(".*.tmp")]:
        stale.unlink()  # a write the last, killed, run did not finish
    rows: list[StudentRow] = []
    failures: list[Failure] = []
    todo: list[Entry] = []
    for e in entries:
        done = _finished(out, e.student)
        if done is None:
            todo.append(e)
        else:
            rows.append(summarize(e.student, done))
    bar = Progress(len(entries), len(rows),
                   enabled=sys.stderr.isatty() if progress is None else progress)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    hide = hidden_paths(root, out)
    if todo:
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker, initargs=(hide,),
                                   mp_context=multiprocessing.get_context("fork"))  # not 3.14's forkserver
        try:
            futures = {pool.submit(_grade_one, e, assignment, str(out), timeout): e for e in todo}
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as e:  # noqa: BLE001 - a worker died (BrokenProcessPool): the grader's failure
                    outcome = Outcome(futures[future].student, failure=f"a grading worker died ({failure_text(e)})")
                if outcome.row is not None:
                    rows.append(outcome.row)
                else:
                    failures.append(Failure(outcome.student, outcome.failure or "unknown failure"))
                bar.step()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: stop now; a re-run resumes
            raise
        pool.shutdown()
    bar.close()
    rows.sort(key=lambda r: r.student)
    failures.sort(key=lambda f: f.student)
    summary = summarize_class(assignment, rows)
    write_atomic(out / "grades.csv", grades_csv(rows, names, [f.student for f in failures]))
    write_dashboard(out, summary, rows, failures, root=Path(root), timeout=timeout, jobs=jobs)  # and index.html
    return BatchResult(rows, failures, summary)


def grade_batch(root: Path, assignment: str, out: Path, *, jobs: int | None = None,
                timeout: float = DEFAULT_TIMEOUT, progress: bool | None = None) -> list[StudentRow]:
    """run_batch for callers that want the rows: one summary per student, sorted. Raises
    BatchIncomplete (after writing every file it could) when the grader failed on anyone."""
    result = run_batch(root, assignment, out, jobs=jobs, timeout=timeout, progress=progress)
    if result.failures:
        raise BatchIncomplete(result.failures)
    return result.rows


class Progress:
    """A one-line progress bar with rate and ETA on a terminal; silent otherwise (CI logs)."""

    def __init__(self, total: int, done: int, enabled: bool):
        self.total, self.done, self.enabled = total, done, enabled
        self.start, self.new = time.monotonic(), 0
        self._draw()

    def step(self) -> None:
        self.done += 1
        self.new += 1
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        elapsed = time.monotonic() - self.start
        rate = self.new / elapsed if elapsed > 0 and self.new else 0.0
        eta = (self.total - self.done) / rate if rate else 0.0
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                         f"{rate:5.1f}/s ETA {eta:4.0f}s ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
