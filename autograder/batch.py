"""A whole class: discover submissions, grade them on a pool of workers, resume after a kill.

Each worker process owns one sandbox. A student's results file and feedback page are
written atomically the moment they are graded, so a batch killed at any point leaves only
whole files; re-running skips every student whose results file is there and reads back
fine. grades.csv and class.html are rebuilt from the results files at the end, so they are
the same whether or not the batch was interrupted.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from .assignments import exercise_points, exercises
from .report.class_report import class_html, summary_text
from .report.feedback import feedback_html
from .report.table import grades_csv
from .results import Results, from_json, write_atomic


@dataclass(frozen=True)
class Entry:
    student: str
    path: Path


def discover(root: Path, assignment: str) -> list[Entry]:
    """Submissions under ``root``: nbgrader's submitted/<student>/<assignment>/*.ipynb
    (``root`` may be the course folder or its submitted/), or a flat folder of
    <student>.py / <student>.ipynb. Sorted by student; a notebook wins over a .py."""
    root = Path(root)
    if (root / "submitted").is_dir():
        root = root / "submitted"
    found: dict[str, Path] = {}
    for child in sorted(root.iterdir()):
        if child.is_dir() and (child / assignment).is_dir():
            notebooks = sorted((child / assignment).glob("*.ipynb"))
            preferred = child / assignment / f"{assignment}.ipynb"
            found[child.name] = preferred if preferred in notebooks else (notebooks or [preferred])[0]
        elif child.is_file() and child.suffix in (".py", ".ipynb") and not child.name.startswith("."):
            if child.stem not in found or child.suffix == ".ipynb":
                found[child.stem] = child
    return [Entry(s, p) for s, p in sorted(found.items())]


# ---------------------------------------------------------------- the workers

_sandbox = None


def _start_worker(hide: list[str]) -> None:
    global _sandbox
    from .sandbox import Sandbox

    PR_SET_PDEATHSIG = 1  # a worker dies with the batch, even when the batch is SIGKILLed
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle
    _sandbox = Sandbox(hide=hide)


def _grade_one(entry: Entry, assignment: str, out: str, timeout: float) -> dict:
    from .grade import grade, ungraded

    try:
        results = grade(entry.path, assignment, sandbox=_sandbox, student=entry.student, timeout=timeout)
    except Exception as e:  # noqa: BLE001 - one submission the grader cannot handle must not stop the class
        results = ungraded(assignment, entry.student, f"the grader failed on this submission "
                                                      f"({type(e).__name__}: {e}); ask your instructor")
    _write_student(Path(out), entry.student, assignment, results)
    return summarize(entry.student, results)


def _write_student(out: Path, student: str, assignment: str, results: Results) -> None:
    # The page first: a results file on disk means this student is done, page included.
    write_atomic(out / "feedback" / f"{student}.html", feedback_html(student, assignment, results))
    write_atomic(out / f"{student}.json", results.to_json() + "\n")


def summarize(student: str, results: Results) -> dict:
    return {"student": student, "score": results.score, "max_score": results.max_score,
            "exercises": results.exercise_scores(),
            "misconceptions": sorted({t.misconception for t in results.tests if t.misconception})}


# ---------------------------------------------------------------- the batch

def _finished(out: Path, student: str) -> Results | None:
    try:
        results = from_json((out / f"{student}.json").read_text())
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not (out / "feedback" / f"{student}.html").is_file():
        return None
    return results


def grade_batch(root: Path, assignment: str, out: Path, *, jobs: int | None = None,
                timeout: float = 10.0, progress: bool | None = None) -> list[dict]:
    """Grade every submission under ``root`` into ``out``; returns one summary per student."""
    from .grade import hidden_paths

    names = exercises(assignment)
    out = Path(out)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob(".*.tmp"), *(out / "feedback").glob(".*.tmp")]:
        stale.unlink()  # a write the last, killed, run did not finish
    entries = discover(root, assignment)
    rows, todo = [], []
    for e in entries:
        done = _finished(out, e.student)
        if done is None:
            todo.append(e)
        else:
            rows.append(summarize(e.student, done))
    bar = Progress(len(entries), len(rows), enabled=sys.stderr.isatty() if progress is None else progress)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    hide = hidden_paths(root, out)
    if todo:
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker, initargs=(hide,))
        try:
            futures = [pool.submit(_grade_one, e, assignment, str(out), timeout) for e in todo]
            for future in as_completed(futures):
                rows.append(future.result())
                bar.step()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: stop now; a re-run resumes
            raise
        pool.shutdown()
    bar.close()
    points = {e: exercise_points(e) for e in names}
    write_atomic(out / "grades.csv", grades_csv(rows, names))
    write_atomic(out / "class.html", class_html(assignment, rows, names, points))
    return sorted(rows, key=lambda r: r["student"])


def class_summary(assignment: str, rows: list[dict]) -> str:
    names = exercises(assignment)
    return summary_text(assignment, rows, names, {e: exercise_points(e) for e in names})


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
