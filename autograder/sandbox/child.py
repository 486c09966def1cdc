"""The only code that runs beside student code.

A child is forked by the zygote, confines itself (``confine``), says SETUP_OK or
SETUP_FAILED on its results pipe, and only then receives its job from the grader (job.py):
the plan, the compiled cells and the calls. It runs the cells, calls the functions, sends
back plain data (wire.py) and ends. It never returns into the zygote's code.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass

from .. import wire
from . import confine, syscalls
from . import job as job_bytes
from .limits import Limits
from .protocol import Kind, Reader, send
from ..names import NOTEBOOK_CELL
from .frames import MAX_LINE, MAX_NAME, MAX_WHERE

JOB_LIMIT = 1 << 32  # the grader's own job frame: inputs can be large, and it is trusted


@dataclass(frozen=True)
class Spec:
    """What the zygote hands a child at fork: where and how to confine itself. No job data."""
    level: str  # "full", "uid" or "none"
    namespaces: bool  # its own pid, mount and IPC namespaces (full, or none in a user namespace)
    uid: int  # its own uid (full and uid levels)
    workdir: str  # its folder; with namespaces, where it mounts its own tmpfs
    job_fd: int
    result_fd: int
    output_fd: int
    cgroup_tasks: tuple[int, ...]
    limits: Limits
    landlock_rules: confine.LandlockRules  # the zygote's View, opened and packed: all it may read
    landlock: bool
    seccomp: bool


def main(spec: Spec) -> None:
    """Runs in the forked child. Never returns."""
    try:
        workdir = confine_self(spec)
    except BaseException as e:  # noqa: BLE001 - the grader must hear why, not see silence
        try:
            send(spec.result_fd, Kind.SETUP_FAILED, one_line(e).encode())
        finally:
            os._exit(0)
    try:
        send(spec.result_fd, Kind.SETUP_OK)
        reader = Reader(spec.job_fd, JOB_LIMIT)
        plan, job = reader.next(), reader.next()
        os.close(spec.job_fd)
        if not plan or not job or plan[0] is not Kind.PLAN or job[0] is not Kind.JOB:
            os._exit(0)
        plan, job = job_bytes.loads(plan[1]), job_bytes.loads(job[1])
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (int(plan["memory"]), int(plan["memory"])))
        cpu = int(plan["cpu_seconds"])
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        del workdir
        run(job["cells"], job["exercises"], int(plan["start"]), set(plan["skip"]), spec.result_fd)
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return
        pass
    os._exit(0)


def confine_self(spec: Spec) -> str:
    os.setsid()
    keep = sorted({spec.job_fd, spec.result_fd, spec.output_fd, *spec.cgroup_tasks,
                   *spec.landlock_rules.fds})
    low = 3
    for fd in keep:  # the zygote's socket, the other children's pipes: none of its business
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)
    workdir = spec.workdir
    if spec.namespaces:
        workdir = confine.child_namespaces(spec.uid, spec.limits.disk, spec.workdir)
    confine.Cgroups.join(list(spec.cgroup_tasks))
    os.chdir(workdir)
    os.dup2(spec.output_fd, 1)
    os.dup2(spec.output_fd, 2)
    os.close(spec.output_fd)
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a huge file write fails, not kills
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    confine.set_limits(spec.limits.processes, cpu_seconds=3600, file_size=spec.limits.file_size)
    if spec.level in ("full", "uid"):
        confine.drop_to(spec.uid)
        # Taking a uid made it undumpable: its /proc/<pid>/fd and maps would then take
        # CAP_SYS_PTRACE to read, which Docker withholds, and the grader's watch reads them
        # (usage.py). Dumpable, they open to its own uid only: its own processes.
        confine.prctl(confine.PR_SET_DUMPABLE, 1)
    elif spec.namespaces:
        confine.drop_capabilities()  # root of the user namespace: it must not remount what it sees
    confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid change, which clears it
    if spec.landlock:  # its own ruleset: a rule on the folder below its tmpfs would not cover it
        confine.landlock(spec.landlock_rules, workdir)
    for fd in spec.landlock_rules.fds:  # only for the rules: closed before any job arrives
        os.close(fd)
    if spec.seccomp:  # last: what follows (and the job) runs under the allow-list
        syscalls.apply()
    if os.environ.get("HOME") != workdir:  # a folder of its own, not the one prepare() set
        os.environ.update(HOME=workdir, TMPDIR=workdir)
    sys.stdout, sys.stderr = _STREAMS or _streams()
    return workdir


def environment(folder: str) -> dict[str, str]:
    """All of a child's environment: nothing of the grader's."""
    return {"HOME": folder, "TMPDIR": folder, "PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1"}


def _streams() -> list:
    """Text streams on descriptors 1 and 2, line by line: what a child prints just before it
    hangs or is killed has reached the grader."""
    return [open(1, "w", buffering=1, closefd=False), open(2, "w", buffering=1, closefd=False)]


_STREAMS: list = []


def prepare(folder: str) -> None:
    """In the zygote, once, before its first child: the environment every child has (``folder``
    as HOME and TMPDIR, where every child's folder is the same place: at the namespaced levels)
    and the streams every child prints to, which each child made for itself, a tenth of a
    millisecond and a hundred pages of the zygote's copied for every submission. The zygote
    itself uses neither: its environment was read when it started, and it prints nothing."""
    os.environ.clear()
    os.environ.update(environment(folder))
    _STREAMS[:] = _streams()


def run(cells, exercises, start_exercise, skip, result_fd):
    import marshal
    import types

    me = os.getpid()

    def report(kind: Kind, payload: bytes = b"") -> None:
        # A process the submission forked runs this loop too: it must not speak, only end.
        if os.getpid() != me:
            os._exit(0)
        send(result_fd, kind, payload)

    module = types.ModuleType("submission")
    module.__dict__["display"] = print  # notebooks call display(); plain print will do
    # Pictures are for the student's own kernel: importing matplotlib costs more than grading
    # a whole submission. The notebooks' picture cells fall back to printing on ImportError.
    sys.modules.update({name: None for name in ("matplotlib", "matplotlib.pyplot")})
    sys.modules["submission"] = module  # @dataclass looks its module up here
    for i, code in enumerate(cells):
        if i in skip:
            continue
        report(Kind.CELL, str(i).encode())
        try:
            compiled = (marshal.loads(code) if isinstance(code, bytes) else
                        compile(code, f"<{NOTEBOOK_CELL} {i + 1}>", "exec"))
            exec(compiled, module.__dict__)
        except BaseException as e:  # noqa: BLE001 - sys.exit and Ctrl-C in a cell too
            report(Kind.PROBLEM, wire.encode({"cell": i, "error": _line(type(e).__name__, MAX_NAME),
                                              "message": one_line(e)}))
    for k in range(start_exercise, len(exercises)):
        name, calls = exercises[k]
        report(Kind.EXERCISE, str(k).encode())
        outcomes = [call_one(module.__dict__.get(f), args, kwargs, echo) for f, args, kwargs, echo in calls]
        report(Kind.RESULT, wire.encode(outcomes))
    report(Kind.DONE)


def call_one(func, args, kwargs, echo=False) -> dict:
    """Call one function on private copies of the inputs; report its value or its error.

    With ``echo``, the copies come back too, as the function left them: whether it changed
    its inputs is judged by the grader, not by numpy in here, which a submission can patch.
    Runs on the untrusted side (and in a student's own kernel for self-checks).
    """
    import warnings

    import numpy as np

    if not callable(func):  # a field of its own: no message a function raises can read as this
        return {"undefined": True}
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
        # The innermost frame in the submission's own code. Cells are compiled as "<notebook cell 3>"
        # (a notebook) or "<line 12>" (a .py, at its own line numbers). Read from the frames
        # themselves: traceback.extract_tb would look up source lines, at a cost per call.
        where, tb = "", e.__traceback__
        while tb is not None:
            name = tb.tb_frame.f_code.co_filename
            if name.startswith(f"<{NOTEBOOK_CELL}"):
                where = f"{name.strip('<>')} line {tb.tb_lineno}"
            elif name.startswith("<line"):
                where = f"line {tb.tb_lineno}"
            tb = tb.tb_next
        # Each field within frames.py's sizes: a class or file name of the submission's own
        # can be any length, and hold a newline.
        return {"error": _line(type(e).__name__, MAX_NAME), "message": one_line(e), "where": _line(where, MAX_WHERE)}
    outcome = {"value": value, "seconds": time.perf_counter() - start}
    if echo:
        outcome["inputs_after"] = [a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray)]
    return outcome


def one_line(e: BaseException) -> str:
    try:
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    except BaseException:  # noqa: BLE001 - the submission's own __str__ raised
        text = _line(type(e).__name__, MAX_NAME)
    return _line(text, MAX_LINE)


def _line(text: str, limit: int) -> str:
    return " ".join(str(text).split())[:limit]
