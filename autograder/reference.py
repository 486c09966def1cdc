"""The reference solutions and mistake variants, loaded by path in the grader's process only.

They live in the course folder's solutions/, never in a package, so ``pip install`` of the
grader and a course's declarations gives a student neither. Set AUTOGRADER_SOLUTIONS to grade from another folder.
"""
from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from collections.abc import Mapping
from typing import Callable

from . import course
from .catalogue import callers, edit_function

PACKAGE = "_autograder_solutions"  # a private name: never shadows a student's module


def solutions_dir() -> Path:
    """The current course's solutions/ (or $AUTOGRADER_SOLUTIONS, a copy placed elsewhere)."""
    return course.current().solutions


class _Lazy(Mapping):
    """A read-only mapping whose values are made on first use: most grades name no mistake,
    and compiling every catalogue entry's module cost a cold grade a third of its time."""

    def __init__(self, keys, make: Callable):
        self._keys, self._make, self._made = tuple(keys), make, {}

    def __getitem__(self, key):
        if key not in self._made:
            if key not in self._keys:
                raise KeyError(key)
            self._made[key] = self._make(key)
        return self._made[key]

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)


class Reference:
    """The reference functions and, made when first asked for, each catalogue entry's edited
    module: ``edited`` (an entry's name -> its edited function), ``reaches`` (an entry's name ->
    {exercise: its function with the edit}: its own and each caller's) and ``variants``
    (a function -> (misconception id, function) pairs, its own entries before inherited ones)."""

    def __init__(self, functions: dict[str, Callable], catalogue: tuple = (), sources: dict[str, str] | None = None):
        self.functions = functions
        self.catalogue = tuple(catalogue)  # solutions/mistakes.py's entries (autograder.catalogue.Mistake)
        self._entries = {(m.id, m.func) for m in self.catalogue}  # (id, the exercise it edits)
        self._ids = {m.id for m in self.catalogue}
        self._sources = sources or {}  # function -> the source of the module that defines it
        entries = {m.name: (n, m) for n, m in enumerate(self.catalogue)}
        # Which functions an entry's edit reaches needs only the module's syntax, not its code.
        self._reach = {m.name: (m.func, *callers(self._sources[m.func], m.func)) for m in self.catalogue}
        self._modules = _Lazy(entries, lambda name: _edited_module(self._sources[entries[name][1].func],
                                                                   entries[name][1], entries[name][0]))
        self.edited = _Lazy(entries, lambda name: self._modules[name][entries[name][1].func])
        self.reaches = _Lazy(entries, lambda name: {f: self._modules[name][f] for f in self._reach[name]})
        reached = {f for fs in self._reach.values() for f in fs}
        self.variants = _Lazy(sorted(reached), self._variants)

    def _variants(self, func: str) -> tuple[tuple[str, Callable], ...]:
        own = [(m.id, self.reaches[m.name][func]) for m in self.catalogue if m.func == func]
        inherited = [(m.id, self.reaches[m.name][func]) for m in self.catalogue
                     if m.func != func and func in self._reach[m.name]]
        return tuple(own + inherited)

    def solution(self, func: str) -> Callable:
        return self.functions[func]

    def inherited(self, func: str, mistake: str) -> bool:
        """Whether ``mistake``, named in ``func``'s checks, is only another exercise's entry."""
        return (mistake, func) not in self._entries and mistake in self._ids

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

    def inherited(self, func: str, mistake: str) -> bool:
        return self.reference.inherited(func, mistake)

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
    for mistake in catalogue:
        if mistake.func not in sources:
            raise ValueError(f"the catalogue edits {mistake.func}, which no solution module defines")
    return Reference(functions, tuple(catalogue), sources)


def _edited_module(source: str, mistake, n: int) -> dict:
    """The namespace of the solution module with ``mistake``'s edit made to its function."""
    code = compile(edit_function(source, mistake.func, mistake.edit), f"<mistake {mistake.name}>", "exec")
    namespace = {"__name__": f"{PACKAGE}._mistake{n}", "__package__": PACKAGE}
    exec(code, namespace)  # trusted: the course's own catalogue, never a student's code
    return namespace
