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
import importlib

# Each name from its module, imported when first used: `autograder grade` launches its sandbox
# (handle.py) before it imports numpy, which child.py's call_one needs.
_FROM = {"call_one": "child", "ExerciseRun": "handle", "Sandbox": "handle", "SandboxResult": "handle",
         "Unisolated": "handle", "DEFAULT_MEMORY": "limits", "Limits": "limits"}
__all__ = sorted(_FROM)


def __getattr__(name: str):
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_FROM[name]}", __name__), name)
