"""Run untrusted submission code in confined child processes, never in the grader's own.

    protocol.py  the frames on the pipes, and a reader that validates them
    limits.py    what one submission may use (``Limits``)
    view.py      the child's world, declared: every path it may read (``View``)
    confine.py   the kernel's confinement primitives (the zygote picks the isolation level)
    zygote.py    the pristine process that forks confined children and ends them
    child.py     the only code that runs beside student code
    handle.py    the grader's ``Sandbox``: the job's state machine, deadlines, output
    frames.py    the schema of each frame's payload, and the typed values it parses into

Only plain data crosses back (see wire.py); comparisons happen in the grader.
"""
from .child import call_one
from .handle import ExerciseRun, Sandbox, SandboxResult, Unisolated
from .limits import DEFAULT_MEMORY, Limits

__all__ = ["DEFAULT_MEMORY", "ExerciseRun", "Limits", "Sandbox", "SandboxResult", "Unisolated", "call_one"]
