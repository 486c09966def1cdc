"""The gradebook, written as students finish: ``GradebookSink`` takes each student's points
(or their withdrawal) while the class is graded and writes them from a thread of its own."""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .names import one_line


@dataclass(frozen=True)
class GradebookReport:
    """What ``--gradebook`` did: students written, withdrawn (the grader failed on them), left
    out (a name nbgrader cannot store: student -> why), and the first error, if any."""
    written: int
    withdrawn: int
    left_out: dict[str, str]
    error: str | None


class GradebookSink:
    """Writes to the gradebook from a thread of its own while the class is graded: whatever
    arrives while one write is under way goes into the next, so the database sees one
    transaction per handful of students, not statements per student, and no worker waits for
    it. Started only once the pool's workers are forked (no connection is ever copied into a
    worker). The first error stops the writing and is reported; the results files stand."""

    WAIT = 0.2  # seconds to let more students arrive before a write

    def __init__(self, url: str, assignment: str, formgrader: tuple[Path, Path] | None = None):
        """``formgrader``: (the nbgrader course folder, the results folder) when the class is an
        nbgrader course's submitted/: then each student written also gets what formgrader reads
        besides the grades (nbgrader_autograded.AutogradedWriter)."""
        self.url, self.assignment, self.formgrader = url, assignment, formgrader
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

        writer = autograded = None
        try:
            writer = GradebookWriter(self.url, self.assignment)
            if self.formgrader is not None:
                from .nbgrader_autograded import AutogradedWriter

                autograded = AutogradedWriter(self.formgrader[0], self.assignment, self.url, self.formgrader[1])
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
                        if autograded is not None:
                            autograded.write(student) if points is not None else autograded.withdraw(student)
                        (self.written if points is not None else self.withdrawn).add(student)
        except GradebookError as e:
            self.error = str(e)
        except Exception as e:  # noqa: BLE001 - reported in one line; the results files stand
            self.error = one_line(f"the gradebook writer failed: {type(e).__name__}: {e}")
        finally:
            if writer is not None:
                writer.close()
