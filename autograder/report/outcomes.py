"""How a check ended when its code gave no answer to judge, in the words of a badge.

Read from the typed fields of a result (``Kind``, and for a process that ended, its
``crashes.Ended`` kind), never from its message: an error raised, a process that exited,
was killed or crashed, a hang, a stub, each has its own words. The feedback page puts the
badge on its verdict; the dashboard groups students by it and says what it means about them.
"""
from __future__ import annotations

from typing import NamedTuple

from ..results import Kind, TestResult


class Outcome(NamedTuple):
    key: str  # the dashboard's id of it
    badge: str  # the few words of a badge
    about: str  # what the student did, to follow "The student "
    broken: bool  # no answer came back at all: the dashboard names the submission at the top


RAISED = Outcome("raised", "raised an error", "wrote code that raised an error.", False)
TIMEOUT = Outcome("timeout", "ran out of time",
                  "wrote code that ran past the time limit (a loop that never ends, or far too much work).", True)
UNFINISHED = Outcome("not_implemented", "not implemented yet",
                     "left the exercise unfinished: the function still raises NotImplementedError.", False)
NO_RESULT = Outcome("no_result", "sent no result",
                    "wrote code whose process sent back something that is not a result (it wrote to the "
                    "grader's channel), so none could be trusted.", True)
# A process that ended, by crashes.Ended's kind.
ENDED = {
    "exit": Outcome("exited", "exited", "wrote code that ended the Python process running it (os._exit or a call "
                    "like it).", True),
    "memory": Outcome("out_of_memory", "killed: out of memory",
                      "wrote code that used more memory than the limit, so its process was killed.", True),
    "cpu": Outcome("out_of_cpu", "killed: out of CPU time",
                   "wrote code that used more CPU time than the limit, so its process was killed.", True),
    "signal": Outcome("killed", "killed by a signal", "wrote code whose process was killed by a signal.", True),
    "crash": Outcome("crashed", "crashed", "wrote code that crashed the Python process running it (a fault of "
                     "the interpreter, as ctypes can cause).", True),
    "unknown": Outcome("stopped", "stopped", "wrote code whose process stopped without an answer (it ended "
                       "itself, crashed, or ran out of memory).", True),
}
OUTCOMES = {o.key: o for o in (RAISED, TIMEOUT, UNFINISHED, NO_RESULT, *ENDED.values())}
# The engine's own tags (misconceptions.OWN) for a check whose judge kept only the tag.
_BY_TAG = {"crashed": RAISED, "timeout": TIMEOUT, "not_implemented": UNFINISHED}


def outcome(t: TestResult) -> Outcome | None:
    """How a failed check's code ended when it gave no answer; None for a judged answer."""
    if t.status == "passed":
        return None
    kind = t.kind
    if kind is Kind.CRASHED:
        return ENDED.get(t.finding.ended, ENDED["unknown"])
    if kind in (Kind.UNTRUSTED, Kind.MALFORMED):
        return NO_RESULT
    by_kind = {Kind.RAISED: RAISED, Kind.TIMEOUT: TIMEOUT, Kind.NOT_IMPLEMENTED: UNFINISHED}
    return by_kind.get(kind) or _BY_TAG.get(t.misconception or "")
