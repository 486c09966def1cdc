"""Where a run's students are graded: the ``Pool`` protocol, and ``LocalPool``, worker
processes on this machine (cluster.py's ``DaskPool`` is the other). Each worker process owns
one sandbox and writes its students' files itself, atomically, the moment they are graded."""
from __future__ import annotations

import ctypes
import gc
import os
import pickle
import select
import signal
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from . import prestart
from .crashes import signal_name
from .errors import failure_text
from .sandbox.confine import PR_SET_PDEATHSIG
from .sandbox.protocol import Kind, Reader, send
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


# The largest frame either side reads: a student's place is 4 bytes, an outcome (its row, its
# dashboard data, a failure's words) some kilobytes; the other side is this program's own.
FRAME_LIMIT = 1 << 32


@dataclass
class _Worker:
    """The batch's end of one worker process: the pipe it is told its students on (a JOB frame
    each, their places in the list it was forked with), the pipe it answers on (a RESULT frame
    each, the place and the Outcome pickled), and whom it has been told and not answered."""
    pid: int
    to: int  # write: the next students' places
    back: Reader  # the outcomes
    told: deque = field(default_factory=deque)

    def close(self) -> None:
        for fd in (self.to, self.back.fd):
            if fd >= 0:
                os.close(fd)
        self.to = self.back.fd = -1


def _serve(todo: list[Job], settings: RunSettings, told: int, back: int) -> None:
    """A worker process: grade each student it is told, answer with their Outcome, end at
    the end of its pipe. Never returns."""
    try:
        reader = Reader(told, FRAME_LIMIT)
        while (frame := reader.next()) is not None:
            k = int.from_bytes(frame[1], "big")
            try:
                outcome = _grade_one(todo[k], settings)
            except BaseException as e:  # noqa: BLE001 - not even a failure could be made: say so, as the grader's
                outcome = Outcome(todo[k].entry.student, failure=f"the grading worker failed ({type(e).__name__})")
            send(back, Kind.RESULT, pickle.dumps((k, outcome), protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        os._exit(0)


def _how(status: int) -> str:
    """A worker's end, in a few words, from its wait status."""
    if os.WIFSIGNALED(status):
        return f"killed by {signal_name(os.WTERMSIG(status))}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


class LocalPool:
    """Worker processes on this machine, forked from the batch with the list of students (so
    they die with it), each owning a socket on the batch's zygote and writing its students'
    files itself. The batch tells each worker its next students and reads their outcomes
    back on a pair of pipes, in this one thread: no executor, no queue, no thread of its own."""

    AHEAD = 2  # students told to a worker at once: the next one waits in its pipe while it grades

    def __init__(self, jobs: int | None = None, launched: list | None = None):
        self.requested = jobs
        self.jobs = 0
        self.todo: list[Job] = []
        self.waiting: deque = deque()  # places of the students no worker has been told yet
        self.workers: list[_Worker] = []
        # The sandboxes launched in this process, one per worker (``launched``: already, by
        # the command line, before it imported the grader): this process reaps their zygote.
        self.zygotes: list = list(launched or [])
        self.frozen = False

    def start(self, todo: list[Job], settings: RunSettings) -> None:
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
        self.frozen = True
        self.todo, self.waiting = todo, deque(range(len(todo)))
        mine = self.zygotes[:self.jobs]
        for i in range(self.jobs):
            self.workers.append(self._fork(i, mine, settings))
        for sandbox in self.zygotes:
            sandbox.hand_over()  # the workers hold their sockets now; this process only reaps
        for worker in self.workers:
            self._tell(worker)

    def _fork(self, i: int, sandboxes: list, settings: RunSettings) -> _Worker:
        told_r, told_w = os.pipe()
        back_r, back_w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            global _sandbox, _hide
            try:
                ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # it dies with the batch, even SIGKILLed
                if os.getppid() != parent:  # the batch died before the line above
                    os._exit(1)
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle
                for other in self.workers:  # another worker's pipes: its ends must be its own and the batch's only
                    other.close()
                os.close(told_w)
                os.close(back_r)
                _hide = list(settings.hide)
                for j, sandbox in enumerate(sandboxes):
                    if j == i:
                        _sandbox = sandbox
                    else:
                        sandbox.hand_over()  # another worker's socket: the zygote must see that worker end
                try:
                    _worker_sandbox()
                except Exception:  # noqa: BLE001 - each student tries again, and a failure is reported as theirs to regrade
                    pass
            except BaseException:  # noqa: BLE001 - a worker must never return into the batch's code
                os._exit(1)
            _serve(self.todo, settings, told_r, back_w)
        os.close(told_r)
        os.close(back_w)
        return _Worker(pid, told_w, Reader(back_r, FRAME_LIMIT))

    def _tell(self, worker: _Worker) -> None:
        """Tell ``worker`` students until it has AHEAD, or none waits."""
        while self.waiting and len(worker.told) < self.AHEAD:
            k = self.waiting.popleft()
            worker.told.append(k)
            try:
                send(worker.to, Kind.JOB, k.to_bytes(4, "big"))
            except OSError:
                pass  # it has ended: its pipe's end says so to outcomes(), which hands them to the others

    def outcomes(self) -> Iterator[tuple[Job, Outcome]]:
        while any(w.told for w in self.workers):
            ready, _, _ = select.select([w.back.fd for w in self.workers if w.told], [], [])
            for worker in [w for w in self.workers if w.back.fd in ready]:
                if not worker.back.fill():
                    yield from self._lost(worker)
                    continue
                while (frame := worker.back.whole()) is not None:
                    k, outcome = pickle.loads(frame[1])
                    worker.told.remove(k)
                    self._tell(worker)
                    yield self.todo[k], outcome
        # Every student is back: the workers may end now (the end of their pipe), and the
        # zygote after them, while the batch writes the class's reports; close() waits for them.
        for worker in self.workers:
            worker.close()

    def _lost(self, worker: _Worker) -> Iterator[tuple[Job, Outcome]]:
        """A worker ended with students it was told: the one it was grading is the grader's
        failure (a re-run grades them); the others go to the workers left, or, with none
        left, are failures too."""
        _, status = os.waitpid(worker.pid, 0)
        worker.close()
        told = list(worker.told)
        self.workers.remove(worker)
        why = f"a grading worker died ({_how(status)})"
        yield self.todo[told[0]], Outcome(self.todo[told[0]].entry.student, failure=why)
        self.waiting.extendleft(reversed(told[1:]))
        for other in self.workers:
            self._tell(other)
        if not self.workers:
            while self.waiting:
                k = self.waiting.popleft()
                yield self.todo[k], Outcome(self.todo[k].entry.student, failure=why)

    def close(self, cancel: bool = False) -> None:
        for worker in self.workers:
            if cancel:  # Ctrl-C: stop now; a re-run resumes
                os.kill(worker.pid, signal.SIGKILL)
            worker.close()  # the end of its pipe: it ends once its student is written
        for worker in self.workers:
            os.waitpid(worker.pid, 0)
        self.workers = []
        if not cancel:  # the workers are gone, so are the zygote's sockets: it ends, and is reaped here
            for sandbox in self.zygotes:
                sandbox.close()
        self.zygotes = []
        if self.frozen:
            gc.unfreeze()  # a process that goes on (a test, a server) collects as before
            self.frozen = False

    def describe(self) -> dict[str, str]:
        return {"worker processes": str(self.jobs)}
