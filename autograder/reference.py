"""The reference solutions and mistake variants, loaded by path in the grader's process only.

They live in the course folder's solutions/, never in a package, so ``pip install`` of the
grader and a course's declarations gives a student neither. Set AUTOGRADER_SOLUTIONS to grade from another folder.
"""
from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from . import course
from .catalogue import callers, edit_function

PACKAGE = "_autograder_solutions"  # a private name: never shadows a student's module


def solutions_dir() -> Path:
    """The current course's solutions/ (or $AUTOGRADER_SOLUTIONS, a copy placed elsewhere)."""
    return course.current().solutions


@dataclass(frozen=True)
class Reference:
    functions: dict[str, Callable]
    variants: dict[str, tuple[tuple[str, Callable], ...]]
    catalogue: tuple = ()  # solutions/mistakes.py's entries (autograder.catalogue.Mistake)
    edited: dict[str, Callable] = field(default_factory=dict)  # an entry's name -> its edited function
    # an entry's name -> {exercise: its function with the edit}: its own and each caller's
    reaches: dict[str, dict[str, Callable]] = field(default_factory=dict)

    def solution(self, func: str) -> Callable:
        return self.functions[func]

    def mistakes(self, func: str, inherited: bool = True) -> tuple[tuple[str, Callable], ...]:
        """(misconception id, function) pairs for ``func``, most specific first: the catalogue's
        entries for ``func``, then (unless ``inherited`` is false) those of functions it calls."""
        if inherited:
            return self.variants.get(func, ())
        return tuple((m.id, self.edited[m.name]) for m in self.catalogue if m.func == func)


class Answers:
    """One grade's view of the reference: several checks share a call, so each call's
    reference output is computed once per grade (and forgotten with it)."""

    def __init__(self, reference: Reference):
        self.reference = reference
        self._outputs: dict[int, tuple] = {}

    def solution(self, func: str) -> Callable:
        return self.reference.solution(func)

    def mistakes(self, func: str, inherited: bool = True):
        return self.reference.mistakes(func, inherited)

    def output(self, call):
        """The reference's return value for ``call`` (a checks.Call)."""
        if id(call) not in self._outputs:  # the call is kept with its output, so its id stays its own
            self._outputs[id(call)] = (call, self.solution(call.func)(*call.args, **call.kwargs))
        return self._outputs[id(call)][1]


@lru_cache(maxsize=1)
def load() -> Reference:
    from .assignments import ASSIGNMENTS  # the declarations import checks, which imports this module's users

    folder = solutions_dir()
    init = folder / "__init__.py"
    if not init.is_file():
        raise FileNotFoundError(f"no reference solutions at {folder} (set AUTOGRADER_SOLUTIONS)")
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]  # another folder's solutions, loaded before
    spec = importlib.util.spec_from_file_location(PACKAGE, init, submodule_search_locations=[str(folder)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    functions: dict[str, Callable] = {}
    sources: dict[str, str] = {}  # function -> the source of the module that defines it
    for assignment in ASSIGNMENTS:  # solutions/<assignment>.py
        module = importlib.import_module(f"{PACKAGE}.{assignment}")
        for k, v in vars(module).items():
            if callable(v) and not k.startswith("_") and getattr(v, "__module__", "") == module.__name__:
                functions[k] = v
                sources[k] = Path(module.__file__).read_text(encoding="utf-8")
    catalogue = importlib.import_module(f"{PACKAGE}.mistakes").MISTAKES
    own: dict[str, list] = {}
    edited: dict[str, Callable] = {}
    reaches: dict[str, dict[str, Callable]] = {}
    inherited: dict[str, list] = {}
    for n, mistake in enumerate(catalogue):
        if mistake.func not in sources:
            raise ValueError(f"the catalogue edits {mistake.func}, which no solution module defines")
        module = _edited_module(sources[mistake.func], mistake, n)
        own.setdefault(mistake.func, []).append((mistake.id, module[mistake.func]))
        edited[mistake.name] = module[mistake.func]
        reaches[mistake.name] = {mistake.func: module[mistake.func]}
        for caller in callers(sources[mistake.func], mistake.func):
            inherited.setdefault(caller, []).append((mistake.id, module[caller]))
            reaches[mistake.name][caller] = module[caller]
    # A function's own mistakes come before those it inherits from a function it calls.
    variants = {f: tuple(own.get(f, []) + inherited.get(f, [])) for f in {*own, *inherited}}
    return Reference(functions, variants, tuple(catalogue), edited, reaches)


def _edited_module(source: str, mistake, n: int) -> dict:
    """The namespace of the solution module with ``mistake``'s edit made to its function."""
    code = compile(edit_function(source, mistake.func, mistake.edit), f"<mistake {mistake.name}>", "exec")
    namespace = {"__name__": f"{PACKAGE}._mistake{n}", "__package__": PACKAGE}
    exec(code, namespace)  # trusted: the course's own catalogue, never a student's code
    return namespace
