"""The grader's handle on the sandbox: start the zygote, run one submission's job.

``Sandbox.run`` is the job's state machine. For each attempt it takes a confined child from
the zygote, sends it the plan and the job, and reads its frames against a deadline per
cell and per exercise while draining its output pipe; a cell that hangs is skipped and an
exercise that hangs or crashes loses its own points, and a fresh child runs what remains.
Every frame is validated here: a malformed one ends that child, never the grader.

A failure of the sandbox itself (the zygote cannot start or dies, a child cannot confine
itself) raises ``GraderError``: it is the grader's failure, not the student's grade.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import wire
from ..crashes import NO_RESULT, UNTRUSTED, Ended, clause
from ..errors import GraderError
from .limits import Limits
from . import confine
from .protocol import Kind, ProtocolError, Reader, Stopped, Timeout, send

SETUP_SECONDS = 30.0  # a child confining itself on a loaded machine


@dataclass
class ExerciseRun:
    """What one exercise's calls produced in the sandbox."""
    status: str  # "ok", "timeout" or "crashed" ("empty" from grade.py: nothing could run)
    outcomes: list = field(default_factory=list)  # "ok": one dict per call, its value or its error
    detail: str = ""  # why it crashed: a clause to follow the exercise's name, ending in its consequence
    ended: Ended | None = None  # how its process ended, when it ended in this exercise


@dataclass
class SandboxResult:
    exercises: dict[str, ExerciseRun]
    cell_problems: list[tuple[int, str]]  # (cell index, what happened): raised, hung, skipped
    output: str  # the submission's own stdout and stderr, truncated
    seconds: float


@dataclass
class _Child:
    id: int
    pid: int
    uid: int
    job: int
    results: int
    output: int


class _Output:
    """The tail of a child's stdout and stderr, read as it comes so the child never blocks."""

    READ = 1 << 16  # bytes per read

    def __init__(self, limit: int):
        self.limit, self.data = limit, bytearray()

    def _keep(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 4 * self.limit:
            del self.data[: -4 * self.limit]  # utf-8 is at most 4 bytes a character

    def drain(self, fd: int) -> bool:
        """Read what one read gives; False at the end of the pipe (or when it fails)."""
        try:
            chunk = os.read(fd, self.READ)
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
                chunk = os.read(fd, self.READ)
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

    def __init__(self, hide: list[str] | None = None, limits: Limits | None = None):
        self.hide = sorted({str(Path(p).resolve()) for p in (hide or [])})
        self.limits = limits or Limits()
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.level = "none"
        self.layers: list[str] = []
        self.live: dict[int, _Child] = {}

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        self.close()

    # ---------------------------------------------------------------- the zygote

    def _start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "AUTOGRADER_DEBUG")}
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   PYTHONDONTWRITEBYTECODE="1")
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = src + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else src
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = json.dumps({"limits": self.limits.to_dict(), "exclude": self.hide})
        try:
            # `-m` puts the current folder first on sys.path: where the grader was started
            # (a student's repository) must not supply `autograder` to this root process.
            # -P (3.11+) leaves it out; before 3.11, the root folder is the current one.
            self.proc = subprocess.Popen(
                [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []), "-m", "autograder.sandbox.zygote",
                 str(theirs.fileno()), config], cwd="/",
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=None if os.environ.get("AUTOGRADER_DEBUG") else subprocess.DEVNULL,
                env=env, start_new_session=True)  # Ctrl-C in a terminal goes to the grader, not here
        except OSError as e:
            raise GraderError(f"the sandbox could not start: {e}") from e
        finally:
            theirs.close()
        self.sock = mine
        mine.settimeout(60)
        try:
            hello = json.loads(mine.recv(4096) or b"null")
            self.level, self.layers = hello["level"], list(hello["layers"])
        except (OSError, ValueError, TypeError, KeyError) as e:
            self.close()
            raise GraderError("the sandbox process failed to start") from e
        mine.settimeout(None)
        if self.level == "none" and not os.environ.get("AUTOGRADER_QUIET"):
            print("autograder: warning: not root, so submissions run as your own user, confined by "
                  f"{', '.join(self.layers) or 'rlimits only'}; see the README's isolation levels",
                  file=sys.stderr)

    def close(self) -> None:
        for c in list(self.live.values()):
            self._release(c)
        if self.sock is not None:
            self.sock.close()  # the zygote ends its children, cleans up and exits
            self.sock = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            self.proc = None

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
            msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 3)
            self.sock.settimeout(None)
            info = json.loads(msg)
            if len(fds) != 3:
                raise ValueError("no pipes")
        except (OSError, ValueError, TypeError) as e:
            raise self._zygote_failed(f"no child from the zygote: {e}") from e
        c = _Child(int(info["id"]), int(info["pid"]), int(info["uid"]), *fds)
        self.live[c.id] = c
        return c

    def _release(self, c: _Child) -> None:
        self._close_fds(c)
        self.live.pop(c.id, None)
        try:
            self.sock.send(json.dumps({"op": "kill", "id": c.id}).encode())
        except (OSError, AttributeError):
            _kill_everything_of(c)

    @staticmethod
    def _close_fds(c: _Child) -> None:
        for fd in (c.job, c.results, c.output):
            try:
                os.close(fd)
            except OSError:
                pass

    # ---------------------------------------------------------------- one job

    def run(self, cells: list, exercises: list[tuple[str, list]], timeout: float,
            memory: int | None = None) -> SandboxResult:
        """Execute ``cells`` then, per exercise, its calls ``(func, args, kwargs[, echo])``.
        ``memory``: bytes per process (RLIMIT_AS) and, at the uid level, per submission
        (default: this sandbox's ``Limits``, as its cgroups have)."""
        if self.proc is None:
            self._start()
        memory = self.limits.memory if memory is None else memory
        names = [n for n, _ in exercises]
        calls_of = [(n, [(*c, False)[:4] for c in calls]) for n, calls in exercises]  # echo defaults to off
        payload = wire.encode({"cells": list(cells), "exercises": calls_of})
        started = time.monotonic()
        allowed = timeout * (len(names) + 3)  # the whole submission's: bounds a notebook of many hung cells
        budget = started + allowed
        cpu_seconds = int(allowed) + 1
        skip: set[int] = set()
        problems: dict[int, str] = {}
        results: dict[int, ExerciseRun] = {}
        outputs: list[str] = []
        next_ex = 0
        while next_ex < len(names):
            if time.monotonic() > budget:
                for k in range(next_ex, len(names)):
                    results[k] = ExerciseRun("timeout", detail="the submission as a whole ran past its time budget")
                break
            c = self._spawn()
            out = _Output(self.limits.output)
            try:
                next_ex = self._attempt(c, out, payload, names, next_ex, skip, problems, results,
                                        timeout, budget, {"start": next_ex, "skip": sorted(skip),
                                                          "memory": memory, "cpu_seconds": cpu_seconds})
            finally:
                out.drain_rest(c.output)  # what it printed just before its last frame
                self._release(c)
            outputs.append(out.text())
        output = "\n--- restarted after a cell or exercise that hung or crashed ---\n".join(o for o in outputs if o)
        return SandboxResult(
            {names[k]: results.get(k, ExerciseRun("crashed", detail=NOT_REACHED)) for k in range(len(names))},
            sorted(problems.items()), output[-self.limits.output:], time.monotonic() - started)

    def _attempt(self, c: _Child, out: _Output, payload: bytes, names: list[str], next_ex: int,
                 skip: set[int], problems: dict[int, str], results: dict[int, ExerciseRun],
                 timeout: float, budget: float, plan: dict) -> int:
        """One child's run from exercise ``next_ex``; returns the next exercise still to run."""
        reader = Reader(c.results, self.limits.result)
        drain = {c.output: out.drain}
        try:
            first = reader.next(time.monotonic() + SETUP_SECONDS, also=drain)
        except (Timeout, ProtocolError) as e:
            raise GraderError(f"a sandbox child did not start ({type(e).__name__})") from e
        if first is None or first[0] is not Kind.SETUP_OK:
            why = first[1].decode(errors="replace")[:300] if first and first[0] is Kind.SETUP_FAILED else "no answer"
            raise GraderError(f"a sandbox child could not confine itself: {why}")
        try:
            send(c.job, Kind.PLAN, wire.encode(plan))
            send(c.job, Kind.JOB, payload)
        except OSError:
            pass  # the child is gone: its silence below says so
        os.close(c.job)
        c.job = -1
        step: tuple[str, int] | None = None
        deadline = time.monotonic() + timeout
        watch = _Watch(c.uid, plan["memory"]) if self.level == "uid" else None
        stopped = ""
        while True:
            try:
                frame = reader.next(min(deadline, budget), also=drain, watch=watch)
                how = "crashed" if frame is None else None  # no frame: its results pipe ended
            except Timeout:
                frame, how = None, "timeout"
            except ProtocolError:
                frame, how = None, "malformed"
            except Stopped as e:
                frame, how, stopped = None, "stopped", str(e)
            if frame is not None:
                kind, data = frame
                try:
                    if kind is Kind.CELL:
                        step, deadline = ("cell", _index(data, 1 << 30)), time.monotonic() + timeout
                        continue
                    if kind is Kind.PROBLEM and step and step[0] == "cell":
                        i, _, msg = data.decode(errors="replace").partition(":")
                        if int(i) == step[1]:
                            problems[step[1]] = f"raised {msg[:300]}"
                            continue
                    elif kind is Kind.EXERCISE:
                        k = _index(data, len(names))
                        if k >= next_ex:
                            step, deadline = ("exercise", k), time.monotonic() + timeout
                            continue
                    elif kind is Kind.RESULT and step and step[0] == "exercise":
                        results[step[1]] = _outcomes(data)
                        next_ex, step = step[1] + 1, None
                        continue
                    elif kind is Kind.DONE:
                        return len(names)
                except ValueError:
                    pass
                how = "malformed"  # a frame out of the protocol's order, or one that does not parse
            ended = self._how_ended(c) if how == "crashed" else None
            if step is None:  # died between steps: nothing left to try
                for k in range(next_ex, len(names)):
                    results.setdefault(k, ExerciseRun("crashed", detail="could not run: the Python process running "
                                                      f"the notebook ended between exercises, so {NO_RESULT}",
                                                      ended=ended))
                return len(names)
            what, index = step
            why = (f"ran past the {timeout:g} s time limit" if how == "timeout" else
                   "sent the grader a malformed message (it wrote to the grader's channel)" if how == "malformed" else
                   f"{stopped} and was stopped" if how == "stopped" else
                   clause(ended))
            if what == "cell":
                skip.add(index)
                problems[index] = f"{why} and was skipped"
                return next_ex
            consequence = UNTRUSTED if how == "malformed" else NO_RESULT
            results[index] = ExerciseRun("timeout" if how == "timeout" else "crashed",
                                         detail=f"{why}, so {consequence}", ended=ended)
            return index + 1

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


class _Watch:
    """Where no cgroup can hold a submission (the uid level): its memory and CPU, summed over
    every process of its uid, checked while the grader waits. Over the memory limit, or more
    than one core on average, it is stopped, as a cgroup would stop it."""

    def __init__(self, uid: int, memory: int):
        self.uid, self.memory, self.started = uid, int(memory), time.monotonic()

    def __call__(self) -> str:
        rss, cpu = confine.uid_usage(self.uid)
        if rss > self.memory:
            return f"used more than {self.memory >> 20} MiB of memory across its processes"
        if cpu > time.monotonic() - self.started + 1.0:
            return "used more than one CPU core across its processes"
        return ""


NOT_REACHED = "was never reached: the run stopped before it (an earlier exercise ran out of time or ended the process)"
UNREADABLE = f"sent back data the grader could not read, so {UNTRUSTED}"


def _index(data: bytes, bound: int) -> int:
    if not data.isdigit() or len(data) > 10:
        raise ValueError("not an index")
    i = int(data)
    if i >= bound:
        raise ValueError("out of range")
    return i


def _outcomes(blob: bytes) -> ExerciseRun:
    try:
        outcomes = wire.decode(blob)
    except Exception:  # noqa: BLE001 - untrusted bytes: whatever fails, the exercise did
        return ExerciseRun("crashed", detail=UNREADABLE)
    if not isinstance(outcomes, list) or not all(isinstance(o, dict) for o in outcomes):
        return ExerciseRun("crashed", detail=UNREADABLE)
    return ExerciseRun("ok", outcomes)


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
