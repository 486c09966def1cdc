"""Run untrusted submission code in a child process, never in the grader's own.

A *zygote* (``python -m autograder.sandbox``, a fresh interpreter that has never seen
solutions/ or an expected value) imports numpy and the modules a submission may use,
then, when run as root, moves itself into new mount and network namespaces where empty
tmpfs mounts hide the checkout, the submissions and every temp folder. For each job it
forks a child that starts its own session, takes rlimits (memory, processes, file size),
drops to an unprivileged uid of its own, executes the submission's cells and calls the
functions. Children are forked ahead of their job and cleaned up after the reply, both
while the grader judges. The zygote watches every step against a wall-clock deadline and
kills the child's whole process group (and, as root, every process of its uid) when it is
done, over time or dead; then it starts a fresh child for the steps that remain, so a
cell that hangs or an exercise that crashes costs only itself.

Only plain data crosses back (see wire.py); comparisons happen in the grader.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import wire
from .errors import GraderError

OUTPUT_LIMIT = 8_000  # characters of a submission's stdout/stderr kept for feedback
RESULT_LIMIT = 256 << 20  # bytes one exercise may send back
DEFAULT_MEMORY = 2 << 30
SANDBOX_UID_BASE = 200_000  # far from real users: kill(-1) as this uid hits only its own

# What a submission may import: imported by the zygote before it hides the disk and drops
# privileges, since afterwards the interpreter's own files can be unreadable.
PRELOAD = (
    "resource traceback marshal "  # the sandbox's own, for use after the drop
    "abc array bisect cmath collections collections.abc contextlib copy dataclasses "
    "decimal enum fractions functools heapq inspect itertools json math numbers operator "
    "random re statistics string textwrap time timeit types typing warnings zipfile "
    "numpy numpy.linalg numpy.random numpy.fft numpy.lib.stride_tricks numpy.testing"
).split()


@dataclass
class ExerciseRun:
    """What one exercise's calls produced in the sandbox."""
    status: str  # "ok", "timeout" or "crashed" ("empty" from grade.py: nothing could run)
    outcomes: list = field(default_factory=list)  # one dict per call that finished
    detail: str = ""  # why it timed out or crashed, in a sentence


@dataclass
class SandboxResult:
    exercises: dict[str, ExerciseRun]
    cell_problems: list[tuple[int, str]]  # (cell index, what happened): raised, hung, skipped
    output: str  # the submission's own stdout and stderr, truncated
    seconds: float


# ---------------------------------------------------------------- framing

def _send(fd: int, kind: bytes, payload: bytes = b"") -> None:
    data = kind + struct.pack(">Q", len(payload)) + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class _Reader:
    """Reads (kind, payload) messages from a pipe, with a deadline per read."""

    def __init__(self, fd: int, limit: int = RESULT_LIMIT):
        self.fd, self.buf, self.limit, self.eof = fd, bytearray(), limit, False

    def next(self, deadline: float):
        while True:
            if len(self.buf) >= 9:
                (n,) = struct.unpack(">Q", self.buf[1:9])
                if n > self.limit:
                    raise ValueError("message too large")
                if len(self.buf) >= 9 + n:
                    kind, payload = bytes(self.buf[:1]), bytes(self.buf[9 : 9 + n])
                    del self.buf[: 9 + n]
                    return kind, payload
            if self.eof:
                return None, b""
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout", b""
            ready, _, _ = select.select([self.fd], [], [], None if left == float("inf") else left)
            if ready:
                chunk = os.read(self.fd, 1 << 20)
                if not chunk:
                    self.eof = True
                self.buf += chunk


# ---------------------------------------------------------------- the child

def _child(job_fd, result_fd, workdir, uid):
    """Runs in the forked child: isolates itself, then waits for its job. Never returns."""
    import resource

    try:
        os.setsid()
        lo, hi = sorted((job_fd, result_fd))
        for first, last in ((3, lo), (lo + 1, hi), (hi + 1, 1 << 16)):
            os.closerange(first, last)  # the zygote's pipes, the reaper's: none of the child's business
        os.chdir(workdir)
        out = os.open("output.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a huge print fails, not kills
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if os.geteuid() == 0:
            os.chown("output.txt", uid, uid)
            resource.setrlimit(resource.RLIMIT_NPROC, (64, 64))
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        os.environ.clear()
        os.environ.update({"HOME": workdir, "TMPDIR": workdir, "PATH": "/usr/bin:/bin",
                           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        reader = _Reader(job_fd, limit=1 << 34)
        _, plan = reader.next(float("inf"))
        _, payload = reader.next(float("inf"))
        os.close(job_fd)
        plan, job = wire.decode(plan), wire.decode(payload)
        memory = int(plan["memory"])
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        _run_submission(job["cells"], job["exercises"], int(plan["start"]), set(plan["skip"]), result_fd)
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return
        pass
    os._exit(0)


def _run_submission(cells, exercises, start_exercise, skip, result_fd):
    import marshal
    import types

    me = os.getpid()

    def report(kind: bytes, payload: bytes = b"") -> None:
        # A process the submission forked runs this loop too: it must not speak, only end.
        if os.getpid() != me:
            os._exit(0)
        _send(result_fd, kind, payload)

    module = types.ModuleType("submission")
    module.__dict__["display"] = print  # notebooks call display(); plain print will do
    sys.modules["submission"] = module  # @dataclass looks its module up here
    for i, code in enumerate(cells):
        if i in skip:
            continue
        report(b"C", str(i).encode())
        try:
            exec(marshal.loads(code) if isinstance(code, bytes) else compile(code, f"<cell {i + 1}>", "exec"),
                 module.__dict__)
        except BaseException as e:  # noqa: BLE001 - sys.exit and Ctrl-C in a cell too
            report(b"P", f"{i}:{_one_line(e)}".encode())
    for k in range(start_exercise, len(exercises)):
        name, calls = exercises[k]
        report(b"E", str(k).encode())
        outcomes = [call_one(module.__dict__.get(f), f, args, kwargs, echo) for f, args, kwargs, echo in calls]
        report(b"R", wire.encode(outcomes))
    report(b"D")


def call_one(func, func_name, args, kwargs, echo=False) -> dict:
    """Call one function on private copies of the inputs; report its value or its error.

    With ``echo``, the copies come back too, as the function left them: whether it changed
    its inputs is judged by the grader, not by numpy in here, which a submission can patch.
    Runs on the untrusted side (and in a student's own kernel for self-checks).
    """
    import traceback
    import warnings

    import numpy as np

    if not callable(func):
        return {"error": "NameError", "message": f"no function named {func_name} was defined"}
    copy = lambda v: np.array(v, copy=True) if isinstance(v, np.ndarray) else v  # noqa: E731
    args = tuple(copy(a) for a in wire.materialize(args))
    kwargs = {k: copy(v) for k, v in wire.materialize(kwargs).items()}
    start = time.perf_counter()
    try:
        # Warnings would reach stderr, and nbgrader gives 0 to a cell that writes there.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = func(*args, **kwargs)
    except BaseException as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        # Cells are compiled as "<cell 3>" (a notebook) or "<line 12>" (a .py, at its own line numbers).
        where = next((f"{f.filename.strip('<>')} line {f.lineno}" if f.filename.startswith("<cell")
                      else f"line {f.lineno}" for f in reversed(tb) if f.filename.startswith(("<cell", "<line"))), "")
        return {"error": type(e).__name__, "message": _one_line(e), "where": where}
    outcome = {"value": value, "seconds": time.perf_counter() - start}
    if echo:
        outcome["inputs_after"] = [a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray)]
    return outcome


def _one_line(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return " ".join(text.split())[:300]


# ---------------------------------------------------------------- the zygote

class _Zygote:
    def __init__(self):
        self.uid = SANDBOX_UID_BASE + (os.getpid() % 100_000)
        self.root = os.geteuid() == 0
        self.jobs = 0
        self.reaper = None  # (pid, request fd, reply fd) of the process that kills as self.uid
        self.ready = None  # a child forked ahead of its job: (pid, job fd, result fd, workdir)
        self.finished = []  # children whose results are sent but who are not yet cleaned up

    def spawn(self):
        """Fork a child that isolates itself and waits for a job (off the critical path)."""
        self.jobs += 1
        workdir = f"/tmp/sandbox-{os.getpid()}-{self.jobs}"
        os.mkdir(workdir, 0o700)
        if self.root:
            os.chown(workdir, self.uid, self.uid)
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(job_w)
            os.close(res_r)
            _child(job_r, res_w, workdir, self.uid)
        os.close(job_r)
        os.close(res_w)
        return pid, job_w, res_r, workdir

    def tidy(self) -> None:
        """Between jobs: end the finished children and their descendants, fork the next one."""
        for pid, res_r, workdir in self.finished:
            self._kill(pid)
            os.close(res_r)
            shutil.rmtree(workdir, ignore_errors=True)
        self.finished = []
        if self.ready is None:
            self._reap_orphans()
            self.ready = self.spawn()

    def run(self, header: dict, payload: bytes) -> dict:
        """Run one job: ``header`` has timeout, memory and exercise names; ``payload`` is the
        wire-encoded cells and calls, handed to the child as they came."""
        names = header["exercises"]
        timeout, memory = float(header["timeout"]), int(header["memory"])
        started = time.monotonic()
        budget = started + timeout * (len(names) + 3)  # bounds a notebook of many hung cells
        skip: set[int] = set()
        problems: dict[int, str] = {}
        results: dict[int, dict] = {}
        output = ""
        next_ex = 0
        while next_ex < len(names):
            if time.monotonic() > budget:
                for k in range(next_ex, len(names)):
                    results[k] = {"status": "timeout", "detail": "the submission as a whole ran past its time budget"}
                break
            if self.ready is None:
                self.tidy()
            (pid, job_w, r, workdir), self.ready = self.ready, None
            try:
                _send(job_w, b"J", wire.encode({"start": next_ex, "skip": sorted(skip), "memory": memory}))
                _send(job_w, b"J", payload)
            except OSError:
                pass  # the child is gone: its silence below says so
            os.close(job_w)
            reader = _Reader(r)
            step = None
            deadline = time.monotonic() + timeout
            while True:
                kind, data = reader.next(min(deadline, budget))
                if kind == b"C":
                    step, deadline = ("cell", int(data)), time.monotonic() + timeout
                elif kind == b"P":
                    i, _, msg = data.decode(errors="replace").partition(":")
                    problems[int(i)] = f"raised {msg}"
                elif kind == b"E":
                    step, deadline = ("exercise", int(data)), time.monotonic() + timeout
                elif kind == b"R" and step and step[0] == "exercise":
                    results[step[1]] = {"status": "ok", "blob": data}
                    next_ex = step[1] + 1
                    step = None
                elif kind == b"D":
                    next_ex = len(names)
                    break
                else:  # timeout, end of output, or a message out of protocol
                    how = "timeout" if kind == "timeout" else "crashed"
                    if step and step[0] == "cell":
                        skip.add(step[1])
                        problems[step[1]] = (
                            f"ran past the {timeout:g} s time limit and was skipped" if how == "timeout" else
                            "ended the process (sys.exit, os._exit or a crash) and was skipped")
                    elif step and step[0] == "exercise":
                        results[step[1]] = {"status": how, "detail": (
                            f"ran past the {timeout:g} s time limit" if how == "timeout"
                            else "ended the process (os._exit, a crash, or it was killed for using too much memory)")}
                        next_ex = step[1] + 1
                    else:
                        next_ex = len(names)  # the child died outside any step: nothing left to try
                        for k in range(len(names)):
                            results.setdefault(k, {"status": "crashed", "detail": "the sandbox process died"})
                    break
            if output:  # a restart replays the earlier cells, so their prints come twice
                output += "\n--- restarted after a cell or exercise that hung or crashed ---\n"
            output += self._read_output(workdir)
            self.finished.append((pid, r, workdir))
            if next_ex < len(names):
                self.tidy()  # a restart: the hung or dead child goes before the next one starts
        return {
            "exercises": {names[k]: results.get(k, {"status": "crashed", "detail": "did not run"})
                          for k in range(len(names))},
            "cell_problems": [[i, problems[i]] for i in sorted(problems)],
            "output": output[-OUTPUT_LIMIT:],
            "seconds": time.monotonic() - started,
        }

    def _kill(self, pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.root:
            self._sweep_uid()
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        self._reap_orphans()

    def _reap_orphans(self) -> None:
        """Collect the submission's dead descendants: they are ours, since the zygote is a
        subreaper, and a zombie left behind would count against the next child's process limit."""
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.reaper and pid == self.reaper[0]:
                os.close(self.reaper[1])
                os.close(self.reaper[2])
                self.reaper = None

    def _sweep_uid(self) -> None:
        """Kill every process of the sandbox uid, including any that left the group with setsid.

        A long-lived reaper running as that uid does it with kill(-1), which reaches every
        process the uid owns except the reaper itself. A submission can kill the reaper
        too; then the reply does not come, and a new reaper does the sweep.
        """
        for _ in range(2):
            if self.reaper is None:
                self.reaper = self._start_reaper()
            pid, request, reply = self.reaper
            try:
                os.write(request, b"k")
                ready, _, _ = select.select([reply], [], [], 2.0)
                if ready and os.read(reply, 1) == b"k":
                    return
            except OSError:
                pass
            os.close(request)
            os.close(reply)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.reaper = None

    def _start_reaper(self):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.closerange(0, req_r)
                os.closerange(req_r + 1, rep_w)
                os.setgroups([])
                os.setgid(self.uid)
                os.setuid(self.uid)
                while os.read(req_r, 1):
                    try:
                        os.kill(-1, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    os.write(rep_w, b"k")
            finally:
                os._exit(0)
        os.close(req_r)
        os.close(rep_w)
        return pid, req_w, rep_r

    @staticmethod
    def _read_output(workdir: str) -> str:
        try:
            with open(os.path.join(workdir, "output.txt"), "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - OUTPUT_LIMIT))
                return f.read().decode(errors="replace")
        except OSError:
            return ""


def _isolate(hide: list[str]) -> None:
    """As root: new mount and network namespaces with the given folders emptied."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
    MS_REC, MS_PRIVATE, MS_NOSUID, MS_NODEV = 1 << 14, 1 << 18, 2, 4
    if libc.unshare(CLONE_NEWNS | CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "unshare failed")
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "making mounts private failed")
    for path in hide:
        if os.path.isdir(path):
            opts = b"size=256m,mode=1777" if path == "/tmp" else b"size=1m,mode=755"
            if libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
                raise OSError(ctypes.get_errno(), f"hiding {path} failed")


def serve() -> None:
    """The zygote's main loop: a job frame in on stdin, a result frame out on stdout."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    hide = sys.argv[1:]
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36  # orphans of a submission become the zygote's to reap
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    isolated = False
    if os.geteuid() == 0:
        _isolate(hide)
        isolated = True
    stdin, stdout = sys.stdin.buffer.raw.fileno(), sys.stdout.buffer.raw.fileno()
    _send(stdout, b"H", b"isolated" if isolated else b"plain")  # hello: ready
    zygote = _Zygote()
    zygote.tidy()
    reader = _Reader(stdin, limit=1 << 34)
    while True:
        kind, header = reader.next(float("inf"))
        kind2, payload = reader.next(float("inf"))
        if kind != b"J" or kind2 != b"J":
            return
        _send(stdout, b"R", wire.encode(zygote.run(wire.decode(header), payload)))
        zygote.tidy()  # while the grader judges, clean up and fork the next child


# ---------------------------------------------------------------- the grader's side

class Sandbox:
    """The grader's handle on one zygote. Use as a context manager; not thread-safe."""

    def __init__(self, hide: list[str] | None = None):
        self.hide = sorted({str(Path(p).resolve()) for p in (hide or [])} | {"/tmp", "/var/tmp", "/dev/shm", "/home"})
        self.proc: subprocess.Popen | None = None
        self.isolated = False

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH")}
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   PYTHONDONTWRITEBYTECODE="1")
        src = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "") if env.get("PYTHONPATH") else src
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.sandbox", *self.hide],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None if os.environ.get("AUTOGRADER_DEBUG") else subprocess.DEVNULL,
            env=env, start_new_session=True,  # Ctrl-C in a terminal goes to the grader, not here
        )
        self._reader = _Reader(self.proc.stdout.fileno(), limit=1 << 34)
        kind, payload = self._reader.next(time.monotonic() + 60)
        if kind != b"H":
            self.close()
            raise GraderError("the sandbox process failed to start")
        self.isolated = payload == b"isolated"

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc = None

    def run(self, cells: list[str], exercises: list[tuple[str, list]], timeout: float,
            memory: int = DEFAULT_MEMORY) -> SandboxResult:
        """Execute ``cells`` then, per exercise, its calls ``(func, args, kwargs[, echo])``."""
        if self.proc is None:
            self._start()
        header = {"exercises": [n for n, _ in exercises], "timeout": timeout, "memory": memory}
        calls_of = [(n, [(*c, False)[:4] for c in calls]) for n, calls in exercises]  # echo defaults to off
        job = {"cells": list(cells), "exercises": calls_of}
        try:
            _send(self.proc.stdin.fileno(), b"J", wire.encode(header))
            _send(self.proc.stdin.fileno(), b"J", wire.encode(job))
            horizon = time.monotonic() + timeout * (len(exercises) + 3) * 2 + 30
            kind, payload = self._reader.next(horizon)
            if kind != b"R":
                raise RuntimeError("no answer")
            raw = wire.decode(payload)
        except (OSError, RuntimeError, ValueError) as e:
            self.close()  # the next run starts a fresh zygote
            raise GraderError(f"the sandbox failed ({e})") from e
        runs = {}
        for name, r in raw["exercises"].items():
            if r["status"] == "ok":
                try:
                    outcomes = wire.decode(r["blob"])
                except Exception:  # noqa: BLE001 - untrusted bytes
                    runs[name] = ExerciseRun("crashed", detail="sent back data the grader could not read")
                    continue
                runs[name] = ExerciseRun("ok", outcomes if isinstance(outcomes, list) else [])
            else:
                runs[name] = ExerciseRun(r["status"], detail=r.get("detail", ""))
        problems = [(int(i), str(text)) for i, text in raw["cell_problems"]]
        return SandboxResult(runs, problems, raw["output"], raw["seconds"])


if __name__ == "__main__":
    serve()
