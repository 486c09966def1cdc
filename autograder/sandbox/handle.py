"""The grader's handle on the sandbox: start the zygote, run one submission's job.

``Sandbox.run`` is the job's state machine. For each attempt it takes a confined child from
the zygote, sends it the plan and the job, and reads its frames against a deadline per
cell and per exercise while draining its output pipe; a cell that hangs is skipped and an
exercise that hangs or crashes loses its own points, and a fresh child runs what remains.
Every frame is validated here: a malformed one ends that child, never the grader.

Deadlines count the child's own time (``_OwnTime``): wall time minus the time its main
thread was runnable but waiting for a CPU, so a busy machine costs no student a point,
while code that sleeps or blocks still runs out of time.

An end that is not the student's doing (``_NotTheStudents``: the child ended or went silent
before any student code ran in it, or a signal nobody in the sandbox could send killed it,
see crashes.whose) is tried again once in a fresh child; a second one, and any failure of
the sandbox itself (the zygote cannot start or dies), raises ``GraderError``: the grader's
failure, never the student's grade. docs/grader-failures.md says the rules.
"""
from __future__ import annotations

import enum
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..crashes import NO_RESULT, REFUSES_SIGNALS, UNTRUSTED, Ended, Whose, clause, whose
from ..errors import GraderError
from . import launch
from .launch import ALLOW_UNISOLATED
from .limits import Limits
from .protocol import READ, Kind, ProtocolError, Reader, Stopped, Timeout, send
from .view import View

if TYPE_CHECKING:
    from ..results import CellProblem
    from . import usage
    from .frames import CallOutcome

# results.py and usage.py (hashlib, ctypes) are imported where a job first needs them, not
# here: a cold `autograder grade` imports this module before it launches the zygote, and every
# millisecond before the launch is one more the student waits (prestart.py).

SETUP_SECONDS = 30.0  # a child confining itself on a loaded machine
HELLO_LIMIT = 1 << 22  # the zygote's first message: its level, layers and View


class Unisolated(GraderError):
    """The kernel allows no isolation and the operator did not allow grading without it."""


# the allow-list's layer: it refuses setsid and setpgid too (a child keeps its session), and prctl
ALLOW_LIST = REFUSES_SIGNALS
RETRIES = 1  # fresh children per job for ends that are not the student's, before it is the grader's failure
# A step may take at most this many times its limit in wall time, whatever its own time: a
# bound on a main thread that waits for a CPU without end (its own processes hogging its one
# core). A single-threaded step reaches it only where it gets under 1/BACKSTOP of a CPU.
BACKSTOP = 20


class Status(str, enum.Enum):
    """How an exercise's run ended. A str, so ``run.status == "ok"`` reads as it did."""
    OK = "ok"  # its RESULT parsed: ``outcomes`` holds one CallOutcome per call
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # no result: ``detail`` and ``ended`` say why
    MALFORMED = "malformed"  # its RESULT frame did not parse (frames.result): ``detail`` says what came back
    EMPTY = "empty"  # grade.py's: nothing in the submission could run


@dataclass
class ExerciseRun:
    """What one exercise's calls produced in the sandbox."""
    status: Status
    outcomes: tuple[CallOutcome, ...] = field(default_factory=tuple)  # OK: one per call, in the job's order (frames.py)
    detail: str = ""  # why it crashed: a clause to follow the exercise's name, ending in its consequence
    ended: Ended | None = None  # how its process ended, when it ended in this exercise

    def __post_init__(self):
        self.status = Status(self.status)  # "crashed" as well as Status.CRASHED; anything else is a bug
        from .frames import CallOutcome  # see _job

        if not (isinstance(self.outcomes, tuple) and all(isinstance(o, CallOutcome) for o in self.outcomes)):
            raise TypeError("an ExerciseRun's outcomes are CallOutcomes (sandbox/frames.py)")


@dataclass
class SandboxResult:
    exercises: dict[str, ExerciseRun]
    cell_problems: list[CellProblem]  # the cells that raised, or hung or crashed and were skipped, in order
    # The submission's own stdout and stderr, one text per child that ran its code, in order:
    # after a cell or exercise hung or crashed, a fresh child runs the cells again from the
    # top. The empty ones left out; together the last ``Limits.output`` characters.
    outputs: tuple[str, ...]
    seconds: float

    def __post_init__(self):
        if not (isinstance(self.outputs, tuple) and all(isinstance(o, str) for o in self.outputs)):
            raise TypeError("a SandboxResult's outputs are a tuple of texts, one per child")

    @property
    def output(self) -> str:
        """All it printed in one text, where each child began left out: for a reader that
        asks only what was printed, never for one that shows it to a student."""
        return "".join(self.outputs)


@dataclass
class _Child:
    id: int
    pid: int  # in the zygote's pid namespace (the grader's, but for a zygote in a user namespace)
    uid: int
    job: int
    results: int
    output: int
    folder: str = ""  # its own folder, as the zygote made it (with namespaces: inside its mount namespace)
    pidfd: int = -1  # from the zygote, where the kernel has pidfds
    schedstat: int = -1  # /proc/<pid>/schedstat of its main thread, opened through the pidfd's pid
    sent: list[str] = field(default_factory=list)  # every signal the grader had sent it, and why


class _NotTheStudents(Exception):
    """A child's end that nothing of the submission caused; the message says what it was."""


class _OwnTime:
    """A child's own clock: wall time minus the time its main thread spent runnable but
    waiting for a CPU (the second field of /proc/<pid>/schedstat, the scheduler's run_delay,
    in ns). Running and sleeping or blocking both count; waiting for a core another process
    holds does not. Without a schedstat (no pidfd, no CONFIG_SCHED_INFO) it is wall time."""

    def __init__(self, fd: int):
        self.fd, self.waited = fd, 0.0

    def _waited(self) -> float:
        if self.fd >= 0:
            try:
                self.waited = int(os.pread(self.fd, 128, 0).split()[1]) / 1e9
            except (OSError, ValueError, IndexError):  # reaped: its last figure stands
                pass
        return self.waited

    def now(self) -> float:
        return time.monotonic() - self._waited()


class _Clock:
    """One attempt's deadlines, in the child's own time: each step's ``timeout`` and what is
    left of the submission's whole budget; and each step's wall-clock backstop."""

    def __init__(self, own: _OwnTime, timeout: float, budget_left: float):
        self.own, self.timeout = own, timeout
        self.began = own.now()
        self.budget_end = self.began + budget_left
        self.step()

    def step(self) -> None:
        """A new step (a cell, an exercise, the wait between them) starts now."""
        self.step_end = self.own.now() + self.timeout
        self.backstop = time.monotonic() + BACKSTOP * self.timeout

    def wall_deadline(self) -> float:
        """When to wake: the soonest the child's own time could reach a deadline (it reaches
        it later by the time it waits for a CPU meanwhile), or the backstop."""
        left = min(self.step_end, self.budget_end) - self.own.now()
        return min(time.monotonic() + max(left, 0.0), self.backstop)

    def expired(self) -> str:
        """"budget", "step" or "backstop" once one is reached, else ""."""
        now = self.own.now()
        if now >= self.budget_end:
            return "budget"
        if now >= self.step_end:
            return "step"
        return "backstop" if time.monotonic() >= self.backstop else ""

    def spent(self) -> float:
        return self.own.now() - self.began


class _Output:
    """The tail of a child's stdout and stderr, read as it comes so the child never blocks."""

    def __init__(self, limit: int):
        self.limit, self.data = limit, bytearray()

    def _keep(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 4 * self.limit:
            del self.data[: -4 * self.limit]  # utf-8 is at most 4 bytes a character

    def drain(self, fd: int) -> bool:
        """Read what one read gives; False at the end of the pipe (or when it fails)."""
        try:
            chunk = os.read(fd, READ)
        except OSError:
            chunk = b""
        self._keep(chunk)
        return bool(chunk)

    def drain_rest(self, fd: int, most: int = 16 << 20) -> None:
        """Read what is already in the pipe, without waiting and at most ``most`` bytes: a
        process the submission left behind may still be writing."""
        try:
            os.set_blocking(fd, False)
            while most > 0:
                chunk = os.read(fd, READ)
                if not chunk:
                    return
                most -= len(chunk)
                self._keep(chunk)
        except OSError:  # BlockingIOError: nothing more for now
            return

    def text(self) -> str:
        return self.data.decode(errors="replace")[-self.limit:]


class Sandbox:
    """The grader's handle on one zygote. Use as a context manager; not thread-safe.

    ``hide``: folders that must stay out of sight even where they lie inside a folder the
    child may read (the checkout, the submissions, the results)."""

    def __init__(self, hide: list[str] | None = None, limits: Limits | None = None,
                 allow_unisolated: bool | None = None, ahead: bool = True, launched: launch.Launched | None = None):
        """``launched``: a zygote started already (``launch.zygote``: prestart.py, Gradescope's
        run), which this handle adopts, with the settings it was started with, as if ``launch()``
        had started it; the other arguments are then its, not given here."""
        if launched is not None:
            hide, ahead, allow_unisolated = launched.hide, launched.ahead, launched.allow_unisolated
            limits = Limits(**launched.limits) if launched.limits else None
        self.hide = launch.normalized(hide)
        # Children forked ahead of their request (a batch's). False for a sandbox that runs one
        # submission: its first child is still forked ahead, its retries when asked for.
        self.ahead = ahead
        self.limits = limits or Limits()
        # Where the kernel allows no isolation, grade only when the operator says so: here,
        # or in the environment (which every face and worker process inherits).
        self.allow_unisolated = launch.allowed_unisolated() if allow_unisolated is None else allow_unisolated
        self._view: View | None = None  # what the children may see, as the zygote declared it
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.peers: list[socket.socket] = []  # the zygote's clients' sockets in this process (launch.Launched)
        self._level = "none"
        self._layers: list[str] = []
        self._hello = False  # launched, its hello (level, layers, view) not read yet
        self.places: usage.Places | None = None  # where memory can be held as files, where the grader watches
        self.live: dict[int, _Child] = {}
        self.not_the_students: list[str] = []  # every end retried because it was not the student's, for the operator
        if launched is not None:
            self._adopt(launched)

    def __enter__(self):
        if not self._hello:  # launched early: the hello is read where it is first needed
            self._start()
        return self

    def launch(self) -> "Sandbox":
        """Start the zygote without waiting for it: it takes a few hundred milliseconds to import
        and confine itself, which the caller spends reading the submission and drawing its
        checks. Whatever needs the zygote (``run``, ``level``, ``layers``, ``view``) waits for
        its hello, and raises there what ``__enter__`` would have (Unisolated, GraderError)."""
        if self.proc is None:
            self._launch()
        return self

    @property
    def level(self) -> str:
        self._ready()
        return self._level

    @property
    def layers(self) -> list[str]:
        self._ready()
        return self._layers

    @layers.setter
    def layers(self, value: list[str]) -> None:  # a test's stand-in for another machine's layers
        self._ready()
        self._layers = value

    @property
    def view(self) -> View | None:
        self._ready()
        return self._view

    def _ready(self) -> None:
        if self._hello:
            self._greet()

    def __exit__(self, *exc):
        self.close()

    # ---------------------------------------------------------------- the zygote

    def _start(self) -> None:
        if self.proc is None:
            self._launch()
        self._greet()

    def _launch(self) -> None:
        self._adopt(launch.zygote(self.hide, self.limits.to_dict(), self.allow_unisolated, self.ahead))

    def _adopt(self, launched: launch.Launched) -> None:
        self.proc, self.sock, self.peers, self._hello = launched.proc, launched.sock, launched.peers, True

    def _greet(self) -> None:
        """Read the zygote's hello: its level, layers and View, or why it refuses."""
        if not self._hello:
            return
        self._hello = False
        mine = self.sock
        mine.settimeout(60)
        try:
            hello = json.loads(mine.recv(HELLO_LIMIT) or b"null")
            self._level, self._layers = hello["level"], list(hello["layers"])
            self._view, refused = View.from_dict(hello["view"]), str(hello["refused"])
        except (OSError, ValueError, TypeError, KeyError) as e:
            self.close()
            raise GraderError("the sandbox process failed to start") from e
        if refused:
            self.close()
            raise Unisolated(f"no isolation on this machine ({refused}): a submission would run as your own user, "
                             f"able to read and change your files; pass --allow-unisolated (or set "
                             f"{ALLOW_UNISOLATED}=1) to grade anyway")
        mine.settimeout(None)
        if self._watched():
            from . import usage

            self.places = usage.Places.find()
        if self.level == "none" and not os.environ.get("AUTOGRADER_QUIET"):
            print("autograder: warning: not root, so submissions run as your own user, confined by "
                  f"{', '.join(self.layers) or 'rlimits only'}; see docs/isolation.md",
                  file=sys.stderr)

    def hand_over(self) -> None:
        """Close this process's end of the zygote's socket, leaving it to a process forked with
        it (a batch's worker), whose end is then the only one: the zygote ends that client's
        children when that one closes, and itself after its last client. This process may still
        ``close()`` the sandbox afterwards, which reaps the zygote; a forked process it was
        handed over to cannot (the zygote is not its child)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def close(self) -> None:
        for c in list(self.live.values()):
            self._release(c)
        proc, sock, self.proc, self.sock = self.proc, self.sock, None, None
        launch.end(proc, sock, self.peers)

    def _zygote_failed(self, why: str) -> GraderError:
        """The zygote died or stopped answering: end what it left, then report it as ours."""
        for c in list(self.live.values()):
            self._close_fds(c)
            _kill_everything_of(c)
        self.live.clear()
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        return GraderError(f"the sandbox failed ({why})")

    def _spawn(self) -> _Child:
        try:
            self.sock.send(b'{"op": "spawn"}')
            self.sock.settimeout(SETUP_SECONDS)
            msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 4)
            self.sock.settimeout(None)
            info = json.loads(msg)
            if len(fds) not in (3, 4):
                raise ValueError("no pipes")
        except (OSError, ValueError, TypeError) as e:
            raise self._zygote_failed(f"no child from the zygote: {e}") from e
        c = _Child(int(info["id"]), int(info["pid"]), int(info["uid"]), *fds[:3], folder=str(info.get("folder") or ""))
        if len(fds) == 4:
            c.pidfd = fds[3]
            c.schedstat = _schedstat_of(c.pidfd)
        self.live[c.id] = c
        return c

    def _release(self, c: _Child) -> None:
        c.sent.append("SIGKILL: released (its step was decided, or the job is done)")
        self._close_fds(c)
        self.live.pop(c.id, None)
        try:
            self.sock.send(json.dumps({"op": "kill", "id": c.id}).encode())
        except (OSError, AttributeError):
            _kill_everything_of(c)

    @staticmethod
    def _close_fds(c: _Child) -> None:
        for fd in (c.job, c.results, c.output, c.pidfd, c.schedstat):
            if fd < 0:
                continue
            try:
                os.close(fd)
            except OSError:
                pass

    # ---------------------------------------------------------------- one job

    def run(self, cells: list, exercises: list[tuple[str, list]], timeout: float,
            memory: int | None = None) -> SandboxResult:
        """Execute ``cells`` then, per exercise, its calls ``(func, args, kwargs[, echo])``.
        ``memory``: bytes per process (RLIMIT_AS) and, at the uid level, per submission
        (default: this sandbox's ``Limits``, as its cgroups have). ``timeout``: seconds of
        the child's own time per cell and per exercise. Raises GraderError when the sandbox
        failed, or when ends that were not the student's happened more than RETRIES times."""
        if self.proc is None or self._hello:
            self._start()
        memory = self.limits.memory if memory is None else memory
        names = [n for n, _ in exercises]
        calls_of = [(n, [(*c, False)[:4] for c in calls]) for n, calls in exercises]  # echo defaults to off
        payload = _job({"cells": list(cells), "exercises": calls_of})
        started = time.monotonic()
        allowed = timeout * (len(names) + 3)  # the whole submission's: bounds a notebook of many hung cells
        cpu_seconds = int(allowed) + 1
        job = _Job(names, payload, timeout, memory, cpu_seconds, allowed)
        outputs: list[str] = []
        not_theirs: list[str] = []
        while job.next_ex < len(names):
            if job.spent >= allowed:
                for k in range(job.next_ex, len(names)):
                    job.results[k] = ExerciseRun("timeout", detail="the submission as a whole ran past its time budget")
                break
            c = self._spawn()
            out = _Output(self.limits.output)
            theirs, spent = True, job.spent
            try:
                self._attempt(c, out, job)
            except _NotTheStudents as e:
                theirs = False  # what it printed, it prints again in the fresh child
                job.spent = spent  # nor is its time the student's
                not_theirs.append(str(e))
                self.not_the_students.append(str(e))
                if len(not_theirs) > RETRIES:
                    raise GraderError("the sandbox's process ended without the submission's doing, "
                                      f"{len(not_theirs)} times: " + "; then ".join(not_theirs)) from None
            finally:
                out.drain_rest(c.output)  # what it printed just before its last frame
                self._release(c)
            if theirs:
                outputs.append(out.text())
        return SandboxResult(
            {names[k]: job.results[k] if k in job.results else ExerciseRun("crashed", detail=NOT_REACHED)
             for k in range(len(names))},  # not .get(k, default), which would build a default for each
            [job.problems[i] for i in sorted(job.problems)], last_characters(outputs, self.limits.output),
            time.monotonic() - started)

    def _attempt(self, c: _Child, out: _Output, job: "_Job") -> None:
        """One child's run from ``job.next_ex``, recording into ``job`` as frames come. Raises
        _NotTheStudents for an end no student code caused (see the module's docstring)."""
        from ..results import CellEnd, CellProblem
        from . import frames  # once an attempt, not once a frame: an import statement costs a call

        names, timeout = job.names, job.timeout
        reader = Reader(c.results, self.limits.result)
        drain = {c.output: out.drain}
        try:  # wall time: confining itself is the grader's work, and no student code has run
            first = reader.next(time.monotonic() + SETUP_SECONDS, also=drain)
        except (Timeout, ProtocolError) as e:
            raise _NotTheStudents(f"a sandbox child did not start ({type(e).__name__})") from e
        if first is None:
            raise _NotTheStudents(f"a sandbox child ended before it was ready ({_said(self._how_ended(c))})")
        if first[0] is not Kind.SETUP_OK:
            why = first[1].decode(errors="replace")[:300] if first[0] is Kind.SETUP_FAILED else "no answer"
            raise _NotTheStudents(f"a sandbox child could not confine itself: {why}")
        plan = {"start": job.next_ex, "skip": sorted(job.skip), "memory": job.memory, "cpu_seconds": job.cpu_seconds}
        try:
            send(c.job, Kind.PLAN, _job(plan))
            send(c.job, Kind.JOB, job.payload)
        except OSError:
            pass  # the child is gone: its silence below says so
        os.close(c.job)
        c.job = -1
        step: tuple[str, int] | None = None
        students = False  # whether student code has started in this child: its first CELL or EXERCISE frame
        clock = _Clock(_OwnTime(c.schedstat), timeout, job.allowed - job.spent)
        watch = self._watch(c, job.memory)
        stopped = ""
        try:
            while True:
                try:
                    # a frame here already needs no deadline, nor a look at the child's clock
                    frame = reader.whole() or reader.next(clock.wall_deadline(), also=drain, watch=watch)
                    how = "crashed" if frame is None else None  # no frame: its results pipe ended
                except Timeout:
                    late = clock.expired()
                    if not late:
                        continue  # it waited for a CPU meanwhile: its own time is not up yet
                    frame, how = None, "budget" if late == "budget" else "timeout"
                except ProtocolError:
                    frame, how = None, "malformed"
                except Stopped as e:
                    frame, how, stopped = None, "stopped", str(e)
                if frame is not None:
                    kind, data = frame
                    try:
                        if kind is Kind.CELL:
                            step, students = ("cell", frames.index(data, 1 << 30)), True
                            clock.step()
                            continue
                        if kind is Kind.PROBLEM and step and step[0] == "cell":
                            raised = frames.problem(data)
                            if raised.cell == step[1]:
                                job.problems[step[1]] = CellProblem(step[1], CellEnd.RAISED, raised.error,
                                                                    raised.message)
                                continue
                        elif kind is Kind.EXERCISE:
                            k = frames.index(data, len(names))
                            if k >= job.next_ex:
                                step, students = ("exercise", k), True
                                clock.step()
                                continue
                        elif kind is Kind.RESULT and step and step[0] == "exercise":
                            job.results[step[1]] = _outcomes(data)
                            job.next_ex, step = step[1] + 1, None
                            clock.step()  # the wait for the next exercise has a limit of its own
                            continue
                        elif kind is Kind.DONE:
                            job.next_ex = len(names)
                            return
                    except ValueError:
                        pass
                    how = "malformed"  # a frame out of the protocol's order, or one that does not parse
                ended = self._how_ended(c) if how == "crashed" else None
                if ended is not None:
                    ended = ended.at_cpu_limit(job.cpu_seconds)
                if not students:
                    # Nothing of the submission has run in this child: whatever ended it, or kept
                    # it from its first cell, was the machine's or the grader's.
                    what = {"crashed": f"ended ({_said(ended)})", "timeout": f"sent nothing for {timeout:g} s",
                            "budget": "sent nothing within the submission's budget",
                            "malformed": "sent a malformed frame", "stopped": f"was stopped: {stopped}"}[how]
                    raise _NotTheStudents(f"a sandbox child {what} before any student code ran")
                if ended is not None and whose(ended, signals_refused=self._outsiders_only()) is Whose.GRADER:
                    where = f"in {step[0]} {step[1]}" if step else "between steps"
                    raise _NotTheStudents(f"a sandbox child was killed by {_said(ended)} {where}, a signal nothing "
                                          "in the sandbox sent")
                self._record_end(job, step, how, ended, stopped)
                return
        finally:
            job.spent += clock.spent()

    def _watched(self) -> bool:
        """Whether the grader counts what each child holds (usage.py): wherever no cgroup holds
        it. By its uid where it has one of its own (full, uid); at the none level by its
        session, which only the allow-list keeps it in (setsid is refused)."""
        if "cgroup" in self.layers:
            return False
        return self.level in ("full", "uid") or ALLOW_LIST in self.layers

    def _watch(self, c: _Child, memory: int) -> usage.Watch | None:
        if not self._watched() or self.places is None:
            return None
        pid = _pid_here(c.pidfd)
        if pid < 0:  # no pidfd (before Linux 5.3): the pid namespaces are the grader's only at full and uid
            if self.level == "none":
                return None
            pid = c.pid
        from . import usage

        who = usage.Holder(pid, c.folder, "namespaces" in self.layers, c.uid if self.level != "none" else None,
                           dumpable=ALLOW_LIST in self.layers)
        return usage.Watch(who, memory, self.places, "landlock" in self.layers, self.limits.file_size)

    def _outsiders_only(self) -> bool:
        """Whether only a process outside the sandbox can kill a child with a signal of its
        choosing. With namespaces each child is the init of a pid namespace of its own, and
        the kernel drops every signal sent from inside that namespace whose action is the
        default (a handler's end is an exit, the student's); only faults, a seccomp kill and
        the kernel's kills at a limit (SIGKILL at RLIMIT_CPU, the OOM killer) are forced
        through. Elsewhere (the uid level) the seccomp allow-list must refuse the child every
        way to send one; until then the submission could have sent it itself."""
        return "namespaces" in self.layers or REFUSES_SIGNALS in self.layers

    def _record_end(self, job: "_Job", step: tuple[str, int] | None, how: str, ended: Ended | None,
                    stopped: str) -> None:
        """The student's end of a step: what it costs them."""
        from ..results import CellEnd, CellProblem

        names, timeout = job.names, job.timeout
        if step is None:  # ended between steps: nothing left to try
            why = ("stopped responding between exercises (threads or processes it started kept it busy)"
                   if how in ("timeout", "budget") else
                   f"{stopped} and was stopped" if how == "stopped" else
                   "sent the grader a malformed message (it wrote to the grader's channel)" if how == "malformed" else
                   "ended between exercises")
            for k in range(job.next_ex, len(names)):
                job.results.setdefault(k, ExerciseRun("crashed", detail=f"could not run: the Python process running "
                                                      f"the notebook {why}, so {NO_RESULT}", ended=ended))
            job.next_ex = len(names)
            return
        what, index = step
        why = (f"ran past the {timeout:g} s time limit" if how == "timeout" else
               "ran past the submission's time budget" if how == "budget" else
               "sent the grader a malformed message (it wrote to the grader's channel)" if how == "malformed" else
               f"{stopped} and was stopped" if how == "stopped" else
               clause(ended))
        if what == "cell":
            job.skip.add(index)
            ending = CellEnd.TIMEOUT if how in ("timeout", "budget") else CellEnd.ENDED
            job.problems[index] = CellProblem(index, ending, message=why)
            return
        consequence = UNTRUSTED if how == "malformed" else NO_RESULT
        job.results[index] = ExerciseRun("timeout" if how in ("timeout", "budget") else "crashed",
                                         detail=f"{why}, so {consequence}", ended=ended)
        job.next_ex = index + 1

    def _how_ended(self, c: _Child) -> Ended:
        """Ask the zygote how the child ended (it reaps it; see crashes.py). A zygote that
        does not answer is the grader's failure, as everywhere else."""
        try:
            self.sock.send(json.dumps({"op": "status", "id": c.id}).encode())
            self.sock.settimeout(SETUP_SECONDS)
            while True:  # answers come in order; an answer about another id cannot be ours
                info = json.loads(self.sock.recv(4096) or b"null")
                if not isinstance(info, dict):
                    raise ValueError("no answer")
                if info.get("id") == c.id:
                    break
            self.sock.settimeout(None)
        except (OSError, ValueError, TypeError) as e:
            raise self._zygote_failed(f"no answer about a child: {e}") from e
        return Ended.from_dict(info)


@dataclass
class _Job:
    """One submission's run across its attempts: what to send, and what came back so far."""
    names: list[str]
    payload: bytes
    timeout: float
    memory: int
    cpu_seconds: int
    allowed: float  # seconds of the children's own time for the whole submission
    spent: float = 0.0  # of which its attempts used so far
    next_ex: int = 0
    skip: set[int] = field(default_factory=set)
    problems: dict[int, CellProblem] = field(default_factory=dict)
    results: dict[int, ExerciseRun] = field(default_factory=dict)


def last_characters(texts: list[str], limit: int) -> tuple[str, ...]:
    """The last ``limit`` characters of ``texts`` taken together, still apart: the empty ones
    left out, the first kept cut at its start where the limit falls inside it."""
    kept: list[str] = []
    for text in reversed(texts):
        if limit <= 0:
            break
        if text:
            kept.append(text[-limit:])
            limit -= len(kept[-1])
    return tuple(reversed(kept))


def _said(e: Ended | None) -> str:
    """How a child ended, for the operator's line."""
    if e is None:
        return "no status"
    if e.kind == "exit":
        return f"exit code {e.code}"
    if e.kind == "unknown":
        return "no status"
    name = signal.Signals(e.code).name if e.code in signal.valid_signals() else f"signal {e.code}"
    return f"{name} ({e.kind})" if e.kind != "signal" else name


def _pid_here(pidfd: int) -> int:
    """A pidfd's process's pid as this process's /proc sees it (the pidfd's fdinfo gives it,
    whatever pid namespace the zygote forked it in); -1 if it cannot tell."""
    if pidfd < 0:
        return -1
    try:  # os.open and one read, not open(): a text file's layers cost more than the read, every child
        fd = os.open(f"/proc/self/fdinfo/{pidfd}", os.O_RDONLY | os.O_CLOEXEC)
        try:
            info = os.read(fd, 1 << 12)
        finally:
            os.close(fd)
        pid = next(int(line.split()[1]) for line in info.splitlines() if line.startswith(b"Pid:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return -1
    return pid if pid > 0 else -1


def _schedstat_of(pidfd: int) -> int:
    """Open the schedstat of a pidfd's process (``_pid_here``); -1 if it cannot."""
    pid = _pid_here(pidfd)
    if pid < 0:
        return -1
    try:
        fd = os.open(f"/proc/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return -1
    try:  # opened after the pid was read: make sure it is still the same process
        signal.pidfd_send_signal(pidfd, 0)
    except OSError:
        os.close(fd)
        return -1
    return fd


NOT_REACHED = "was never reached: the run stopped before it (an earlier exercise ran out of time or ended the process)"


# job.py, frames.py and wire.py import numpy: looked up when a job runs, not when this module is
# imported, since the grader launches its sandbox before it imports numpy (Sandbox.launch).

def _job(value) -> bytes:
    from . import job

    return job.dumps(value)


def _outcomes(blob: bytes) -> ExerciseRun:
    """A RESULT frame's exercise: its outcomes, or its malformed run (the student's loss)."""
    from . import frames

    try:
        return ExerciseRun(Status.OK, frames.result(blob))
    except frames.Malformed as e:
        return ExerciseRun(Status.MALFORMED, detail=f"{frames.NOT_A_RESULT} ({e}), so {UNTRUSTED}")


def _kill_everything_of(c: _Child) -> None:
    """Without the zygote: kill the child and, as root, every process of its uid."""
    try:
        os.kill(c.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if os.geteuid() == 0:
        pid = os.fork()
        if pid == 0:
            try:
                from .confine import sweep_uid
                sweep_uid(c.uid)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
