"""A whole class: discover submissions, grade them on a pool of workers, resume after a kill,
regrade exactly what changed.

Each worker process owns one sandbox. A student's results file and feedback page are
written atomically the moment they are graded, so a batch killed at any point leaves only
whole files. Each results file records what was graded (``extra_data.graded``): the digest of
the submission's bytes as the grader read them, the grader's version, ``--timeout``, and a key
over those and the scores. A re-run regrades exactly the students for whom any of these
differs or is missing (and, with ``force``, everyone), reads the rest back, and reports the
score changes of the regraded (``changes.csv``). grades.csv and class.html are rebuilt from the
results files at the end, so they are the same whether or not the batch was interrupted.

Two kinds of trouble are kept apart. Whatever is wrong with a *submission* (a link, a pipe,
a broken notebook, an odd name) is that student's result: score 0 and a one-line reason in
their results file. A failure of the *grader* (the sandbox cannot start or breaks its
protocol, a judge has a bug, a worker dies) is never written as a grade: the student gets
no results file (an earlier one stays, out of date, so a re-run grades them again), is listed
in ``BatchResult.failures`` for the operator, has an empty row in grades.csv, and their auto
scores are withdrawn from the gradebook.

What the reports read is typed here, where it is made: a ``StudentRow`` per graded student
(grades.csv, class.html) and a ``BatchSummary`` of the class (class.html, the printed summary).
"""
from __future__ import annotations

import csv
import ctypes
import dataclasses
import hashlib
import io
import json
import multiprocessing
import os
import queue
import re
import shutil
import signal
import stat
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from .assignments import ASSIGNMENTS, exercise, exercise_points, exercises
from .checks import test_name
from .class_results import (BatchSummary, ExerciseTally, Failure, ScoreChange, StudentRow, results_path,  # noqa: F401
                            summarize, summarize_class)
from .errors import GraderError
from .grade import DEFAULT_TIMEOUT
from .names import file_stem, one_line, readable
from .report.dashboard import write_dashboard
from .report.feedback import feedback_html
from .report.table import grades_csv, neutralise
from .results import Results, from_json, write_atomic
from .sandbox.confine import PR_SET_PDEATHSIG
from .submission import Unreadable, read_submission

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
class Outcome:
    """One student's grading, as a worker hands it back: a summary row, or the grader's failure."""
    student: str
    row: StudentRow | None = None
    failure: str | None = None
    other_set: str | None = None  # the problem set the submission looks like, when not the one graded


@dataclass(frozen=True)
class GradebookReport:
    """What ``--gradebook`` did: students written, withdrawn (the grader failed on them), left
    out (a name nbgrader cannot store: student -> why), and the first error, if any."""
    written: int
    withdrawn: int
    left_out: dict[str, str]
    error: str | None


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
    run: int  # the run's number (RUN_FILE)
    hide: tuple[str, ...] = ()  # folders the local sandboxes must not see


class Pool(Protocol):
    """Where a run's students are graded: ``LocalPool`` (processes on this machine) or
    ``cluster.DaskPool`` (a Dask cluster's workers). run_batch decides who is graded, in which
    run, and keeps the books (changes, gradebook, progress, reports); a pool only grades and
    hands back each student's Outcome, in any order, after their files are written."""

    def start(self, todo: list[Job], settings: RunSettings) -> None:
        """Begin grading ``todo``; after this, this process may open connections a fork would copy."""

    def outcomes(self) -> Iterator[tuple[Job, Outcome]]:
        """Each job with its outcome, as it finishes; a student's files are on disk when it comes."""

    def close(self, cancel: bool = False) -> None:
        """Stop (``cancel``: now, dropping what is not done; a re-run grades it)."""

    def describe(self) -> dict[str, str]:
        """The dashboard's settings lines: where the class was graded."""


class ClassFolderError(ValueError):
    """The class folder is missing, unreadable or holds no submission, or a student named to
    grade has no submission in it: nothing to grade."""


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


# ---------------------------------------------------------------- what was graded: digests and keys

SNAPSHOTS = ".snapshots"  # in OUTDIR: each worker's copy of the bytes it grades (hidden from the sandbox)
RUN_FILE = ".run"  # in OUTDIR: the number of the run under way; it moves on when a run completes


# Subpackages that read grades or submissions but never decide a grade or a feedback page: a
# change there regrades no one.
NEVER_GRADES = ("integrity", "lms")


@lru_cache(maxsize=None)
def grader_version() -> str:
    """A digest of everything that decides a grade or a feedback page: the grader package's code
    and data, the course's declarations (its checks, words and worked examples), the reference
    solutions and the mistake catalogue, and numpy's version. Any change
    to them makes every results file out of date (a grader fix is a regrade)."""
    import numpy

    from . import course, reference

    package = Path(__file__).resolve().parent
    chosen = course.current()
    solutions = reference.solutions_dir()
    files = [(f"autograder/{p.relative_to(package)}", p) for p in package.rglob("*")
             if p.suffix in (".py", ".json") and "__pycache__" not in p.parts
             and p.relative_to(package).parts[0] not in NEVER_GRADES]
    files += [(f"{chosen.name}/{p.relative_to(chosen.package_dir)}", p) for p in chosen.package_dir.rglob("*")
              if p.suffix in (".py", ".json") and "__pycache__" not in p.parts]
    files += [(f"solutions/{p.relative_to(solutions)}", p) for p in solutions.rglob("*.py")
              if "__pycache__" not in p.parts]
    digest = hashlib.sha256(f"numpy {numpy.__version__}\0".encode())
    for name, path in sorted(files):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Snapshot:
    """A submission as the grader read it, once: what is graded and what its record says."""
    name: str  # the file's name (its suffix says how to read it; the feedback quotes it)
    data: bytes | None  # None: it could not be read
    problem: str | None  # why not, in one line, as the student reads it
    digest: str  # "sha256:..." of the bytes, or "unreadable:..." of why not


def snapshot(path: Path, base: Path | None = None) -> Snapshot:
    """Read a submission as the grader does (no link followed, a regular file only)."""
    path = Path(path)
    try:
        data = read_submission(path, base)
    except Unreadable as e:
        why = str(e)
        return Snapshot(path.name, None, why, "unreadable:" + hashlib.sha256(why.encode("utf-8", "surrogateescape"))
                        .hexdigest())
    except OSError as e:  # the class folder itself went away
        why = str(e.strerror or e)
        return Snapshot(path.name, None, f"could not read {readable(path.name)}: {why}",
                        "unreadable:" + hashlib.sha256(why.encode()).hexdigest())
    return Snapshot(path.name, data, None, "sha256:" + hashlib.sha256(data).hexdigest())


def read_graded(path: Path, base: Path | None = None) -> tuple[bytes | None, str]:
    """The submission's bytes as the grader reads them (no link followed, a regular file only)
    and their digest; for a file that cannot be read, None and a digest of why not."""
    snap = snapshot(path, base)
    return snap.data, snap.digest


def record_key(student: str, assignment: str, submission: str, grader: str, timeout: float,
               results: Results) -> str:
    """What a results file's record vouches for: who, which set, which bytes, which grader and
    settings, and the scores. A record whose key does not match is not trusted."""
    doc = [student, assignment, submission, grader, float(timeout), float(results.score), float(results.max_score),
           [[t.name, float(t.score), float(t.max_score), t.status] for t in results.tests]]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


def _record(results: Results, student: str, previous: dict | None, assignment: str, submission: str,
            timeout: float, run: int) -> None:
    graded = {"student": student, "assignment": assignment, "submission": submission,
              "grader": grader_version(), "timeout": float(timeout), "run": run}
    if previous is not None:
        graded["previous"] = previous
    graded["key"] = record_key(student, assignment, submission, graded["grader"], timeout, results)
    results.extra_data["graded"] = graded


# ---------------------------------------------------------------- another problem set's submission

_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def looks_like(data: bytes, suffix: str, assignment: str) -> tuple[str, list[str]] | None:
    """(the problem set, its exercises found) when the submission names more exercises of
    another problem set than of ``assignment`` (a function it defines, or a notebook's graded
    cell), e.g. a ps2 notebook handed in for ps1; None otherwise. Reads, never runs."""
    text = data.decode("utf-8-sig", "replace")
    named: set[str] = set()
    if suffix == ".ipynb":
        try:
            nb = json.loads(text)
        except (ValueError, RecursionError):
            return None
        cells = nb.get("cells") if isinstance(nb, dict) else None
        for cell in cells if isinstance(cells, list) else []:
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            src = cell.get("source", "")
            src = "".join(s for s in src if isinstance(s, str)) if isinstance(src, list) else src
            named.update(_DEF.findall(src) if isinstance(src, str) else ())
            meta = cell.get("metadata")
            meta = meta.get("nbgrader") if isinstance(meta, dict) else None
            if isinstance(meta, dict) and meta.get("grade") and isinstance(meta.get("grade_id"), str):
                named.add(meta["grade_id"])
    else:
        named.update(_DEF.findall(text))
    # Shares, not counts: a file with every problem set's answers names all six of ps4's and
    # all five of ps2's, and is a ps2 submission as much as a ps4 one.
    mine = len(named & set(exercises(assignment))) / len(exercises(assignment))
    share, other = max(((len(named & set(names)) / len(names), name) for name, names in ASSIGNMENTS.items()
                        if name != assignment), default=(0.0, ""))
    if share <= mine:
        return None
    return other, [name for name in ASSIGNMENTS[other] if name in named]


def other_set_line(other: str, found: list[str], assignment: str) -> str:
    return (f"This looks like a {other} submission, not {assignment}: it has {', '.join(found)}. It was graded "
            f"as {assignment}; if you handed in the wrong file, hand in your {assignment} notebook.")


def grade_submission(path: Path, assignment: str, *, sandbox, student: str | None, timeout: float,
                     scratch: Path, base: Path | None = None, visible_only: bool = False
                     ) -> tuple[Results, str, str | None]:
    """Grade one file as grade-batch does: its bytes read once (no link followed), their digest
    taken, and exactly those bytes graded (a copy under the same name in ``scratch``, a folder
    the sandbox cannot see), so what a results file records is what was graded even when the
    file changes meanwhile. Returns the results (a first line in their output when the
    submission looks like another problem set), the digest, and that problem set."""
    snap = snapshot(path, base)
    results, other = grade_snapshot(snap, assignment, sandbox=sandbox, student=student or Path(path).stem,
                                    timeout=timeout, scratch=scratch, visible_only=visible_only)
    return results, snap.digest, other


def grade_snapshot(snap: Snapshot, assignment: str, *, sandbox, student: str, timeout: float,
                   scratch: Path, visible_only: bool = False) -> tuple[Results, str | None]:
    """Grade the bytes read (on this machine or another), through a copy in ``scratch``."""
    from .grade import grade, grade_loaded
    from .submission import Submission

    if snap.data is None:  # the grader says why, in the results, as for any submission
        sub = Submission(Path(snap.name))
        sub.problem(snap.problem or "it could not be read")
        return grade_loaded(sub, assignment, sandbox=sandbox, student=student, timeout=timeout,
                            visible_only=visible_only), None
    if snap.name in ("", ".", "..") or "/" in snap.name or "\0" in snap.name:
        raise GraderError(f"not a file name: {snap.name!r}")  # never a path out of scratch
    copy = Path(scratch) / snap.name
    copy.write_bytes(snap.data)
    try:
        results = grade(copy, assignment, sandbox=sandbox, student=student, timeout=timeout,
                        visible_only=visible_only)
    finally:
        copy.unlink(missing_ok=True)
    other = looks_like(snap.data, Path(snap.name).suffix, assignment)
    if other is None:
        return results, None
    line = other_set_line(other[0], other[1], assignment)
    results.output = line + ("\n" + results.output if results.output else "")
    return results, other[0]


# ---------------------------------------------------------------- one student's grading, as plain data

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
    grader: str  # grader_version() of the grader that graded it
    results: str | None = None  # results file's text (None: the grader failed)
    feedback: str | None = None  # the feedback page's HTML
    row: StudentRow | None = None
    other_set: str | None = None
    isolation: dict | None = None  # how the sandbox confined it: the results' isolation and isolation_layers
    failure: str | None = None  # one line: the grader's failure, never a grade


def task_for(job: Job, settings: RunSettings) -> Task:
    """Read the job's submission now: its bytes travel with the task."""
    return Task(job.entry.student, snapshot(job.entry.path, job.entry.base), settings.assignment,
                settings.timeout, settings.run, job.previous)


def grade_task(task: Task, sandbox, scratch: Path) -> Graded:
    """Grade a task where the sandbox is: the results with their record, the feedback page and
    the summary row, made here so the machine that writes them only writes. The grader's
    failure comes back as ``failure``, never as a grade."""
    try:
        results, other = grade_snapshot(task.snapshot, task.assignment, sandbox=sandbox, student=task.student,
                                        timeout=task.timeout, scratch=scratch)
        return graded(task, results, other)
    except Exception as e:  # noqa: BLE001 - the grader's failure: reported, not stored as a grade
        return Graded(task.student, grader_version(), failure=failure_text(e))


def graded(task: Task, results: Results, other: str | None = None) -> Graded:
    """What to write for ``results``: its record of what was graded, its feedback page, its row."""
    _record(results, task.student, task.previous, task.assignment, task.snapshot.digest, task.timeout, task.run)
    return Graded(task.student, grader_version(), results.to_json() + "\n",
                  feedback_html(task.student, task.assignment, results), summarize(task.student, results), other,
                  {k: results.extra_data[k] for k in ("isolation", "isolation_layers") if k in results.extra_data})


def store(out: Path, done: Graded) -> Outcome:
    """Write a graded student's files (the page first: a results file on disk means this
    student is done, page included), atomically; a failure writes nothing."""
    if done.failure is not None or done.results is None or done.feedback is None or done.row is None:
        return Outcome(done.student, failure=done.failure or "the grader sent back no results")
    write_atomic(feedback_path(out, done.student), done.feedback)
    write_atomic(results_path(out, done.student), done.results)
    return Outcome(done.student, row=done.row, other_set=done.other_set)


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


def _grade_one(job: Job, settings: RunSettings) -> Outcome:
    try:
        scratch = Path(settings.out) / SNAPSHOTS / str(os.getpid())
        scratch.mkdir(parents=True, exist_ok=True)
        return store(Path(settings.out), grade_task(task_for(job, settings), _worker_sandbox(), scratch))
    except Exception as e:  # noqa: BLE001 - the grader's failure: reported, not stored as a grade
        return Outcome(job.entry.student, failure=failure_text(e))


class LocalPool:
    """Worker processes on this machine, forked from the batch (so they die with it), each
    owning one sandbox and writing its students' files itself."""

    def __init__(self, jobs: int | None = None):
        self.requested = jobs
        self.jobs = 0
        self.pool: ProcessPoolExecutor | None = None
        self.futures: dict = {}

    def start(self, todo: list[Job], settings: RunSettings) -> None:
        self.jobs = max(1, min(self.requested or os.cpu_count() or 1, len(todo) or 1))
        if not todo:
            return
        self.pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=_start_worker,
                                        initargs=(list(settings.hide),),
                                        mp_context=multiprocessing.get_context("fork"))  # not 3.14's forkserver
        # Every worker is forked by the first submit (fork start method).
        self.futures = {self.pool.submit(_grade_one, job, settings): job for job in todo}

    def outcomes(self) -> Iterator[tuple[Job, Outcome]]:
        for future in as_completed(self.futures):
            job = self.futures[future]
            try:
                outcome = future.result()
            except Exception as e:  # noqa: BLE001 - a worker died (BrokenProcessPool): the grader's failure
                outcome = Outcome(job.entry.student, failure=f"a grading worker died ({failure_text(e)})")
            yield job, outcome

    def close(self, cancel: bool = False) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=not cancel, cancel_futures=cancel)  # Ctrl-C: stop now; a re-run resumes
            self.pool = None

    def describe(self) -> dict[str, str]:
        return {"worker processes": str(self.jobs)}


def failure_text(e: BaseException) -> str:
    """One line for the operator: the sandbox's or a judge's GraderError as it is; anything
    else is a bug in the grader, said with where it happened."""
    if isinstance(e, GraderError):
        return one_line(str(e) or type(e).__name__)
    frames = traceback.extract_tb(e.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return one_line(f"grader bug{where}: {type(e).__name__}: {e}")


def feedback_path(out: Path, student: str) -> Path:
    return Path(out) / "feedback" / f"{file_stem(student)}.html"


# ---------------------------------------------------------------- what a re-run does with each student

@dataclass(frozen=True)
class Earlier:
    """A student's results file as a re-run finds it."""
    results: Results | None = None  # a whole grade, else None
    row: StudentRow | None = None  # its summary
    problem: str | None = None  # why a file that is there is not a grade


def _earlier(out: Path, student: str, assignment: str) -> Earlier:
    path = results_path(out, student)
    if not path.exists():
        return Earlier()
    try:
        results = from_json(path.read_text(encoding="utf-8"))
        whole = ([t.name for t in results.tests] == [test_name(e, s) for e in exercises(assignment)
                                                     for s in exercise(e).specs]
                 and all(_number(t.score) and _number(t.max_score) for t in results.tests)
                 and results.score == sum(t.score for t in results.tests)
                 and isinstance(results.extra_data, dict) and isinstance(results.output, str))
        row = summarize(student, results) if whole else None
    except Exception:  # noqa: BLE001 - whatever is wrong with the file, it is not a grade
        row = None
    if row is None:
        return Earlier(problem="its results file is not a whole grade of this problem set")
    if _OLD_GRADER_FAILURE in results.output:
        return Earlier(problem="an earlier run recorded the grader's own failure")
    return Earlier(results, row)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x


def _why_regrade(earlier: Earlier, entry: Entry, assignment: str, grader: str, timeout: float,
                 force: bool, out: Path) -> str | None:
    """Why this student must be graded (again); None when their results file stands."""
    if earlier.results is None:
        return earlier.problem or "new"
    if force:
        return "--force"
    graded = earlier.results.extra_data.get("graded")
    if not isinstance(graded, dict):
        return "no record of what was graded"
    if graded.get("student") != entry.student or graded.get("assignment") != assignment:
        return "the results file is another student's or problem set's"
    submission = read_graded(entry.path, entry.base)[1]
    if graded.get("submission") != submission:
        return "submission changed"
    if graded.get("grader") != grader:
        return "grader changed"
    if not isinstance(graded.get("timeout"), float) or graded["timeout"] != float(timeout):
        return "--timeout changed"
    if graded.get("key") != record_key(entry.student, assignment, submission, grader, timeout, earlier.results):
        return "the results file does not match its record"
    if not feedback_path(out, entry.student).is_file():
        return "feedback page missing"
    return None


def _previous(earlier: Earlier, why: str, run: int) -> dict | None:
    """The grade a regrade replaces: the one from before this run (a run killed and resumed
    replaces a student's grade at most once, as far as the changes say)."""
    if earlier.row is None:
        return None
    carried = _carried(earlier, run)
    if carried is not None:
        return carried
    return {"score": earlier.row.score, "max_score": earlier.row.max_score, "exercises": earlier.row.exercises,
            "why": why}


def _carried(earlier: Earlier, run: int) -> dict | None:
    """The grade replaced earlier in this same run (by a run that was killed), if any."""
    graded = earlier.results.extra_data.get("graded") if earlier.results is not None else None
    previous = graded.get("previous") if isinstance(graded, dict) and graded.get("run") == run else None
    try:
        if (isinstance(previous, dict) and _number(previous["score"]) and _number(previous["max_score"])
                and isinstance(previous["why"], str)
                and all(isinstance(k, str) and _number(v) for k, v in previous["exercises"].items())):
            return previous
    except (KeyError, AttributeError, TypeError):
        pass
    return None


def _change(student: str, previous: dict, row: StudentRow | None, max_score: float) -> ScoreChange:
    names = set(previous["exercises"]) | set(row.exercises if row else ())
    moved = {}
    for name in sorted(names):
        old = previous["exercises"].get(name, 0)
        new = row.exercises.get(name, 0) if row else None
        if new != old:
            moved[name] = (old, new)
    return ScoreChange(student, previous["score"], row.score if row else None, max_score, previous["why"], moved)


def _run_number(out: Path) -> int:
    try:
        return max(1, int((out / RUN_FILE).read_text().strip()))
    except (OSError, ValueError):
        return 1


def changes_csv(changes: list[ScoreChange]) -> str:
    """changes.csv: one row per regraded student, sorted: the score before and after, the
    difference, why they were regraded, and each exercise whose points moved."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["student", "old_score", "new_score", "max_score", "change", "why", "exercises"])
    for c in sorted(changes, key=lambda c: c.student):
        moved = "; ".join(f"{name} {old:g} -> {'not graded' if new is None else f'{new:g}'}"
                          for name, (old, new) in c.exercises.items())
        writer.writerow([neutralise(readable(c.student)), f"{c.old_score:g}",
                         "" if c.new_score is None else f"{c.new_score:g}", f"{c.max_score:g}",
                         "" if c.new_score is None else f"{c.new_score - c.old_score:+g}",
                         neutralise(c.why), neutralise(moved)])
    return buf.getvalue()


# ---------------------------------------------------------------- the gradebook, as students finish

class _GradebookSink:
    """Writes to the gradebook from a thread of its own while the class is graded: whatever
    arrives while one write is under way goes into the next, so the database sees one
    transaction per handful of students, not statements per student, and no worker waits for
    it. Started only once the pool's workers are forked (no connection is ever copied into a
    worker). The first error stops the writing and is reported; the results files stand."""

    WAIT = 0.2  # seconds to let more students arrive before a write

    def __init__(self, url: str, assignment: str):
        self.url, self.assignment = url, assignment
        self.queue: queue.Queue = queue.Queue()
        self.written: set[str] = set()
        self.withdrawn: set[str] = set()
        self.left_out: dict[str, str] = {}
        self.error: str | None = None
        self.aborted = threading.Event()
        self.thread = threading.Thread(target=self._run, name="gradebook", daemon=True)
        self.thread.start()

    def put(self, student: str, points: dict[str, float] | None) -> None:
        """Record ``points`` for ``student`` (None: withdraw their auto scores)."""
        from .nbgrader_bridge import unstorable

        why = unstorable(student)
        if why:
            self.left_out[student] = why
        else:
            self.queue.put((student, points))

    def abort(self) -> None:
        self.aborted.set()
        self.queue.put(None)

    def finish(self) -> GradebookReport:
        self.queue.put(None)
        self.thread.join()
        return GradebookReport(len(self.written), len(self.withdrawn), dict(self.left_out), self.error)

    def _run(self) -> None:
        from .nbgrader_bridge import GradebookError, GradebookWriter

        writer = None
        try:
            writer = GradebookWriter(self.url, self.assignment)
            done = False
            while not done and not self.aborted.is_set():
                batch: dict[str, dict | None] = {}
                item = self.queue.get()
                deadline = time.monotonic() + self.WAIT
                while item is not None:
                    batch[item[0]] = item[1]
                    try:
                        item = self.queue.get(timeout=max(deadline - time.monotonic(), 0.001))
                    except queue.Empty:
                        break
                done = item is None
                if batch and not self.aborted.is_set():
                    writer.write(batch)
                    for student, points in batch.items():
                        (self.written if points is not None else self.withdrawn).add(student)
        except GradebookError as e:
            self.error = str(e)
        except Exception as e:  # noqa: BLE001 - reported in one line; the results files stand
            self.error = one_line(f"the gradebook writer failed: {type(e).__name__}: {e}")
        finally:
            if writer is not None:
                writer.close()


# ---------------------------------------------------------------- the batch

def _nothing_to_grade(root: Path, assignment: str) -> str:
    folder = class_folder(root, assignment)
    found: set[str] = set()
    try:
        for child in os.scandir(folder):
            if child.is_dir(follow_symlinks=False):
                try:
                    found.update(n for n in os.listdir(child.path) if n in ASSIGNMENTS)
                except OSError:
                    pass
    except OSError:
        pass
    hint = f"; it holds {', '.join(sorted(found))} submissions: is --assignment right?" if found else ""
    return (f"no submissions for {assignment} in {folder} "
            f"(expected <student>/{assignment}/*.ipynb or <student>.py|.ipynb){hint}")


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
        raise ClassFolderError(_nothing_to_grade(root, assignment))
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
    shutil.rmtree(out / SNAPSHOTS, ignore_errors=True)
    run, grader = _run_number(out), grader_version()
    result = BatchResult([], [], summarize_class(assignment, []))
    rows, failures, changes = result.rows, result.failures, result.changes
    ungraded: list[str] = []  # not selected and without a grade: an empty row
    todo: list[Job] = []
    for e in entries:
        earlier = _earlier(out, e.student, assignment)
        if selected and e.student not in selected:
            if earlier.row is not None:
                rows.append(earlier.row)
                result.not_selected.append(e.student)
            else:
                ungraded.append(e.student)
            continue
        why = _why_regrade(earlier, e, assignment, grader, timeout, force, out)
        if why is None:
            rows.append(earlier.row)
            result.up_to_date.append(e.student)
            carried = _carried(earlier, run)
            if carried is not None:  # regraded by this run before it was killed
                changes.append(_change(e.student, carried, earlier.row, earlier.row.max_score))
        else:
            todo.append(Job(e, why, _previous(earlier, why, run)))
    bar = Progress(len(entries), len(entries) - len(todo),
                   enabled=sys.stderr.isatty() if progress is None else progress)
    pool = pool if pool is not None else LocalPool(jobs)
    sink = None
    try:
        pool.start(todo, RunSettings(assignment, str(out), float(timeout), run, tuple(hidden_paths(root, out))))
        # Only from here on may this process hold a database connection, which a forked worker
        # could otherwise copy and close.
        if gradebook:
            sink = _GradebookSink(gradebook, assignment)
            for row in rows:
                sink.put(row.student, row.exercises)
        for job, outcome in pool.outcomes():
            if outcome.row is not None:
                rows.append(outcome.row)
                (result.regraded if job.previous is not None else result.new).append(outcome.student)
                if outcome.other_set:
                    result.other_sets[outcome.student] = outcome.other_set
            else:
                failures.append(Failure(outcome.student, outcome.failure or "unknown failure"))
            if job.previous is not None:
                changes.append(_change(outcome.student, job.previous, outcome.row, sum(map(exercise_points, names))))
            if sink is not None:
                sink.put(outcome.student, outcome.row.exercises if outcome.row is not None else None)
            bar.step()
    except BaseException:
        pool.close(cancel=True)
        if sink is not None:
            sink.abort()
        raise
    pool.close()
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
                    grading=pool.describe())  # and index.html
    write_atomic(out / RUN_FILE, f"{run + 1}\n")  # this run is complete: its changes are reported
    shutil.rmtree(out / SNAPSHOTS, ignore_errors=True)
    return result


def grade_batch(root: Path, assignment: str, out: Path, *, jobs: int | None = None,
                timeout: float = DEFAULT_TIMEOUT, progress: bool | None = None, **options) -> list[StudentRow]:
    """run_batch for callers that want the rows: one summary per student, sorted. Raises
    BatchIncomplete (after writing every file it could) when the grader failed on anyone."""
    result = run_batch(root, assignment, out, jobs=jobs, timeout=timeout, progress=progress, **options)
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
