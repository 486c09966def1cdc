"""How a submission's process ended when it sent no result, in plain words.

The zygote reaps each child and knows its exit status, and (with a memory cgroup) whether
the kernel killed it for memory; the handle asks it when a child's results pipe ends in the
middle of a step. ``Ended`` is that answer as data; ``clause`` and ``advice`` are the words a
student reads, written here once for the results, the feedback page and the dashboard.
``whose`` decides whether an end is the student's at all (see docs/grader-failures.md).
"""
from __future__ import annotations

import enum
import signal
from dataclasses import dataclass, field

# Signals a crash of the interpreter itself raises (rather than the code or the limits).
_CRASH_SIGNALS = {signal.SIGSEGV: "a segmentation fault", signal.SIGBUS: "a bus error",
                  signal.SIGILL: "an illegal instruction", signal.SIGFPE: "an arithmetic fault",
                  signal.SIGABRT: "an abort"}


@dataclass(frozen=True)
class Ended:
    """How a child ended: ``kind`` is "exit", "memory", "cpu", "crash", "signal" or
    "unknown" (it did not end within the wait, or its status was lost)."""
    kind: str
    code: int = 0  # the exit code ("exit") or the signal's number
    memory: int = 0  # bytes: the limit it ran into ("memory")
    # CPU seconds the process used, from the rusage its reaping gave (0: not known). Not part
    # of what an end *is* (two ends of one kind compare equal): it is the evidence ``whose``
    # reads to tell a kill at the CPU rlimit from a kill by someone else.
    cpu: float = field(default=0.0, compare=False)

    @classmethod
    def from_status(cls, status: int | None, oom_killed: bool, memory: int, cpu: float = 0.0) -> "Ended":
        """From a wait status (None: unknown), whether its memory cgroup counted an OOM kill,
        and the CPU seconds its rusage showed."""
        import os

        if status is None:
            return cls("unknown", cpu=cpu)
        if os.WIFEXITED(status):
            return cls("exit", os.WEXITSTATUS(status), cpu=cpu)
        number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        if oom_killed:
            return cls("memory", number, memory, cpu=cpu)
        if number == signal.SIGXCPU:
            return cls("cpu", number, cpu=cpu)
        if number in _CRASH_SIGNALS:
            return cls("crash", number, cpu=cpu)
        return cls("signal", number, cpu=cpu) if number else cls("unknown", cpu=cpu)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "code": self.code, "memory": self.memory, "cpu": self.cpu}

    @classmethod
    def from_dict(cls, d: dict) -> "Ended":
        kind = d.get("kind")
        try:
            cpu = max(0.0, float(d.get("cpu") or 0.0))
        except (TypeError, ValueError):
            cpu = 0.0
        if kind not in ("exit", "memory", "cpu", "crash", "signal", "unknown"):
            return cls("unknown")
        return cls(kind, int(d.get("code") or 0), int(d.get("memory") or 0), cpu=cpu)

    def at_cpu_limit(self, limit: float) -> "Ended":
        """This end, as the CPU limit's when it was a SIGKILL after ``limit`` CPU seconds: with
        the soft and hard RLIMIT_CPU equal (child.py sets both), the kernel's kill at the limit
        is a SIGKILL, not a SIGXCPU."""
        if self.kind == "signal" and self.code == signal.SIGKILL and self.cpu >= limit - CPU_TOLERANCE:
            return Ended("cpu", self.code, cpu=self.cpu)
        return self


# rusage's user and system times are the scheduler's exact runtime split in two and rounded
# to microseconds; the kernel kills at >= the limit, so anything within this is at the limit.
CPU_TOLERANCE = 0.01  # seconds


class Whose(enum.Enum):
    STUDENT = "student"  # the submission's doing: it costs the step it ended in
    GRADER = "grader"  # nobody in the sandbox did it: the job is tried again, then not graded


# Signals the kernel sends a process because of what the process itself did, with no
# signal-sending syscall: faults (SEGV, BUS, FPE, ILL, TRAP from a breakpoint or a perf
# event), a refused syscall (SYS: seccomp's kill), a write to a closed pipe (PIPE), its own
# limits (XCPU, XFSZ), the timers it armed (ALRM, VTALRM, PROF: alarm, setitimer) and the
# asynchronous I/O it asked for (IO: O_ASYNC with F_SETOWN). ABRT: abort() raises it on
# itself. Anyone else *could* send these too; they are counted the student's on purpose
# (an outsider's SIGSEGV is rarer than a submission that makes one, and a student must
# never be able to turn its own crash into "the grader failed").
KERNEL_FOR_ITSELF = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGTRAP,
                               signal.SIGSYS, signal.SIGPIPE, signal.SIGXCPU, signal.SIGXFSZ, signal.SIGALRM,
                               signal.SIGVTALRM, signal.SIGPROF, signal.SIGIO, signal.SIGABRT})

# The layer name the zygote reports when its children's seccomp filter refuses every way to
# make the kernel deliver a signal of the sender's choosing: kill, tkill, tgkill,
# rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal, and the ones that name a signal for
# later (timer_create's sigevent, fcntl F_SETSIG, mq_notify). Where it is in force, a
# submission can end by no signal outside KERNEL_FOR_ITSELF.
REFUSES_SIGNALS = "seccomp allow-list"


def whose(e: Ended, *, signals_refused: bool) -> Whose:
    """Whose doing an end after student code started is (before that, nothing of the student
    ran, so it is never theirs: the handle does not ask). Exits, the memory cgroup's OOM
    kill, the CPU limit and every signal of KERNEL_FOR_ITSELF are the student's. Any other
    signal (SIGKILL, SIGTERM, SIGHUP, SIGUSR1, real-time ones...) was sent by a process:
    where the submission cannot send its process one (``signals_refused``: it is the init of
    its own pid namespace, or the filter refuses it every way), that process was not the
    submission's, and the sandbox's own kills only ever follow a decision already recorded
    (a timeout, the watch), so the end is not the student's. Otherwise the submission could
    have sent it itself: the student's, as before."""
    if e.kind != "signal" or e.code in KERNEL_FOR_ITSELF:
        return Whose.STUDENT
    return Whose.GRADER if signals_refused else Whose.STUDENT


def signal_name(number: int) -> str:
    """A signal's name (SIGKILL), or its number where it has none (a real-time signal)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def clause(e: Ended) -> str:
    """What the code did, to follow its name: "softmax <clause>"."""
    if e.kind == "exit":
        return (f"ended the Python process that was running it (exit code {e.code}: os._exit() or a call "
                "like it)")
    if e.kind == "memory":
        return f"used more memory than the limit ({e.memory >> 20} MiB) and was killed"
    if e.kind == "cpu":
        return "used more CPU time than the limit and was killed"
    if e.kind == "crash":
        return (f"crashed the Python process that was running it ({_CRASH_SIGNALS[e.code]}, "
                f"{signal_name(e.code)})")
    if e.kind == "signal":
        return f"stopped the Python process that was running it (it was killed by {signal_name(e.code)})"
    return ("stopped the Python process that was running it: it ended the process itself (os._exit), "
            "crashed it, or used more memory than the limit")


ADVICE = {
    "exit": "Look for a call that ends the program (os._exit, os.kill, os.abort) and remove it.",
    "memory": "Look for an array that grows without bound, or one far larger than the inputs need.",
    "cpu": "Look for a loop that never ends, or threads or processes that keep running.",
    "crash": ("Python itself crashed: that happens when code reaches into memory directly (ctypes) or "
              "calls a library wrongly. Plain numpy code does not do this."),
    "signal": "Look for code that sends signals (os.kill, signal) or starts processes, and remove it.",
    "unknown": ("Look for a call that ends the program, or an array that grows without bound."),
}


def advice(e: Ended) -> str:
    return ADVICE[e.kind]


# One of these ends the message of every exercise that sent no usable result (the dashboard flags it).
NO_RESULT = "no result came back"
UNTRUSTED = "no result could be trusted"


def sentence(func: str, detail: str, e: Ended | None) -> str:
    """The whole message of a check whose exercise sent no result: what happened (the
    sandbox's ``detail``) and, when its process ended, what to look for."""
    return f"{func} {detail}." + (f" {advice(e)}" if e is not None else "")
