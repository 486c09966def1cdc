"""Where a run's students are graded: the ``Pool`` protocol, and ``LocalPool``, worker
processes on this machine (cluster.py's ``DaskPool`` is the other). Each worker process owns
one sandbox and writes its students' files itself, atomically, the moment they are graded."""
from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Protocol

from . import prestart
from .errors import GraderError, failure_text
from .sandbox.confine import PR_SET_PDEATHSIG
from .tasks import Job, Outcome, RunSettings, grade_task, store, task_for


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


_sandbox = None
_hide: list[str] = []
_launched: list = []  # the batch's own launches (Sandbox), one per worker: set before the fork


def _start_worker(hide: list[str], taken) -> None:
    global _hide, _sandbox
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a worker dies with the batch, even when SIGKILLed
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle
    _hide = hide
    with taken.get_lock():  # each worker its own of the sandboxes launched before the fork
        mine = taken.value
        taken.value += 1
    for i, launched in enumerate(_launched):
        if i == mine:
            _sandbox = launched
        else:
            launched.hand_over()  # another worker's socket: the zygote must see that worker end, not wait for this one
    try:
        _worker_sandbox()
    except GraderError:
        pass  # each student tries again, and a failure is reported as theirs to regrade


def _worker_sandbox():
    global _sandbox
    if _sandbox is None:
        from .sandbox import Sandbox

        _sandbox = Sandbox(hide=_hide).launch()  # it starts while the worker takes its first job
    return _sandbox


def _grade_one(job: Job, settings: RunSettings) -> Outcome:
    try:
        return store(Path(settings.out), grade_task(task_for(job, settings), _worker_sandbox()))
    except Exception as e:  # noqa: BLE001 - the grader's failure: reported, not stored as a grade
        return Outcome(job.entry.student, failure=failure_text(e))


class LocalPool:
    """Worker processes on this machine, forked from the batch (so they die with it), each
    owning one sandbox and writing its students' files itself."""

    def __init__(self, jobs: int | None = None, launched: list | None = None):
        self.requested = jobs
        self.jobs = 0
        self.pool: ProcessPoolExecutor | None = None
        self.futures: dict = {}
        # The sandboxes launched in this process, one per worker (``launched``: already, by
        # the command line, before it imported the grader): this process reaps their zygotes.
        self.zygotes: list = list(launched or [])

    def start(self, todo: list[Job], settings: RunSettings) -> None:
        global _launched
        self.jobs = max(1, min(self.requested or os.cpu_count() or 1, len(todo) or 1))
        if not todo:
            return
        # The zygote first (one, with a socket per worker): it takes a few hundred milliseconds
        # to start, which it now spends while this process compiles the pages' templates and
        # forks the workers, rather than after the fork, in each worker.
        if not self.zygotes:
            self.zygotes = prestart.sandboxes(self.jobs, list(settings.hide))
        for extra in self.zygotes[self.jobs:]:  # launched for more workers than there are students:
            extra.hand_over()  # the zygote drops that client, unused; close() reaps it with the others
        _launched = self.zygotes[:self.jobs]
        from .grade import load_for
        from .report.render import compile_all

        # Before the fork, once: what every worker's first student would load in that worker.
        compile_all()  # every worker's pages, and the batch's dashboard, use them
        try:
            load_for(settings.assignment)
        except Exception:  # noqa: BLE001 - no reference, say: each student's grading meets it and reports it
            pass
        # What is loaded by now lives as long as the run: out of the collector's sight until
        # close(), no full collection walks it again (one did, 20 ms, while the workers were
        # still busy or in the dashboard's time at the end, once the reference was loaded here),
        # nor, in a worker, writes to the pages it shares with this one.
        gc.freeze()
        context = multiprocessing.get_context("fork")  # not 3.14's forkserver
        self.pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=_start_worker,
                                        initargs=(list(settings.hide), context.Value("i", 0)), mp_context=context)
        try:
            # Every worker is forked by the first submit (fork start method).
            self.futures = {self.pool.submit(_grade_one, job, settings): job for job in todo}
        finally:
            _launched = []
            for sandbox in self.zygotes:
                sandbox.hand_over()  # the workers hold their sockets now; this process only reaps

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
        if not cancel:  # the workers are gone, so are the zygote's sockets: it ends, and is reaped here
            for sandbox in self.zygotes:
                sandbox.close()
        self.zygotes = []
        gc.unfreeze()  # a process that goes on (a test, a server) collects as before

    def describe(self) -> dict[str, str]:
        return {"worker processes": str(self.jobs)}
