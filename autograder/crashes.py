"""How a submission's process ended when it sent no result, in plain words.

The zygote reaps each child and knows its exit status, and (with a memory cgroup) whether
the kernel killed it for memory; the handle asks it when a child's results pipe ends in the
middle of a step. ``Ended`` is that answer as data; ``clause`` and ``advice`` are the words a
student reads, written here once for the results, the feedback page and the dashboard.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass

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

    @classmethod
    def from_status(cls, status: int | None, oom_killed: bool, memory: int) -> "Ended":
        """From a wait status (None: unknown) and whether its memory cgroup counted an OOM kill."""
        import os

        if status is None:
            return cls("unknown")
        if os.WIFEXITED(status):
            return cls("exit", os.WEXITSTATUS(status))
        number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        if oom_killed:
            return cls("memory", number, memory)
        if number == signal.SIGXCPU:
            return cls("cpu", number)
        if number in _CRASH_SIGNALS:
            return cls("crash", number)
        return cls("signal", number) if number else cls("unknown")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "code": self.code, "memory": self.memory}

    @classmethod
    def from_dict(cls, d: dict) -> "Ended":
        kind = d.get("kind")
        if kind not in ("exit", "memory", "cpu", "crash", "signal", "unknown"):
            return cls("unknown")
        return cls(kind, int(d.get("code") or 0), int(d.get("memory") or 0))


def _signal_name(number: int) -> str:
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
                f"{_signal_name(e.code)})")
    if e.kind == "signal":
        return f"stopped the Python process that was running it (it was killed by {_signal_name(e.code)})"
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
