"""The reference solutions and mistake variants, loaded by path in the grader's process only.

They live in solutions/ beside the package, never inside it, so ``pip install`` of the
grader gives a student neither. Set AUTOGRADER_SOLUTIONS to grade from another folder.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

PACKAGE = "_autograder_solutions"  # a private name: never shadows a student's module


def solutions_dir() -> Path:
    default = Path(__file__).resolve().parent.parent / "solutions"
    return Path(os.environ.get("AUTOGRADER_SOLUTIONS", default)).resolve()


@dataclass(frozen=True)
class Reference:
    functions: dict[str, Callable]
    variants: dict[str, tuple[tuple[str, Callable], ...]]

    def solution(self, func: str) -> Callable:
        return self.functions[func]

    def mistakes(self, func: str) -> tuple[tuple[str, Callable], ...]:
        """(misconception id, function) pairs for ``func``, most specific first."""
        return self.variants.get(func, ())


class Answers:
    """One grade's view of the reference: several checks share a call, so each call's
    reference output is computed once per grade (and forgotten with it)."""

    def __init__(self, reference: Reference):
        self.reference = reference
        self._outputs: dict[int, tuple] = {}

    def solution(self, func: str) -> Callable:
        return self.reference.solution(func)

    def mistakes(self, func: str):
        return self.reference.mistakes(func)

    def output(self, call):
        """The reference's return value for ``call`` (a checks.Call)."""
        if id(call) not in self._outputs:  # the call is kept with its output, so its id stays its own
            self._outputs[id(call)] = (call, self.solution(call.func)(*call.args, **call.kwargs))
        return self._outputs[id(call)][1]


@lru_cache(maxsize=1)
def load() -> Reference:
    folder = solutions_dir()
    init = folder / "__init__.py"
    if not init.is_file():
        raise FileNotFoundError(f"no reference solutions at {folder} (set AUTOGRADER_SOLUTIONS)")
    spec = importlib.util.spec_from_file_location(PACKAGE, init, submodule_search_locations=[str(folder)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    functions: dict[str, Callable] = {}
    for module_name in ("ps1", "ps2", "ps3"):
        module = importlib.import_module(f"{PACKAGE}.{module_name}")
        functions.update({k: v for k, v in vars(module).items()
                          if callable(v) and not k.startswith("_") and getattr(v, "__module__", "") == module.__name__})
    variants: dict[str, list] = {}
    mistakes = importlib.import_module(f"{PACKAGE}.mistakes")
    # A variant is named <function>__<misconception id>[__<label>], in file order.
    for name, fn in vars(mistakes).items():
        if callable(fn) and "__" in name.strip("_"):
            func, mistake = name.split("__")[:2]
            variants.setdefault(func, []).append((mistake, fn))
    return Reference(functions, {k: tuple(v) for k, v in variants.items()})
