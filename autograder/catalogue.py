"""Named edits of an answer's source, and the catalogue's entries built from them.

The catalogue of mistakes (solutions/mistakes.py, hidden) lists each known mistake once: the
reference answer of one exercise with one edit, and the misconception id it illustrates.
From those entries come, without writing any mistake a second time:

- the grader's diagnosis: each edit applied to the reference module gives a mistaken
  function (reference.py), and so does every function of that module that calls it;
- the mistaken submissions of the sample class and of the test corpus
  (examples/make_class.py edits the released notebook's answers with the same edits).

An edit is a function from one exercise's source to the edited source; it fails loudly when
the text it edits is not there exactly once, so a change of the reference cannot silently
turn a mistake into a right answer.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

Edit = Callable[[str], str]


@dataclass(frozen=True)
class Mistake:
    func: str  # the exercise whose answer is edited
    id: str  # the misconception (CONTRACTS.md's table)
    edit: Edit
    label: str = ""  # tells apart two entries of one id for one exercise
    # Exercise -> why no visible check of it can see this mistake there (written as a dict; kept
    # as sorted pairs, so that an entry stays hashable). The adequacy test (course contract)
    # fails wherever a mistake passes every visible check of an exercise it reaches, unless
    # this names that exercise; and where it names one whose visible checks do see it.
    visible_blind: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        pairs = tuple(sorted(dict(self.visible_blind).items()))
        if not all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in pairs):
            raise ValueError(f"{self.name}: visible_blind maps an exercise to a reason, in words")
        object.__setattr__(self, "visible_blind", pairs)

    def blind_reason(self, exercise: str) -> str:
        """Why no visible check of ``exercise`` can see this mistake ('' where one must)."""
        return dict(self.visible_blind).get(exercise, "")

    @property
    def name(self) -> str:
        """``<id>:<exercise>[:<label>]``: the sample class's archetype name for it."""
        return f"{self.id}:{self.func}" + (f":{self.label}" if self.label else "")


class EditError(ValueError):
    """An edit's text is not where the edit expects it (the reference changed)."""


def swap(*pairs: str) -> Edit:
    """Replace text: swap(old1, new1, old2, new2, ...); each old text must occur once."""
    if not pairs or len(pairs) % 2:
        raise ValueError("swap() takes pairs of (old, new) texts")

    def edit(code: str) -> str:
        for old, new in zip(pairs[::2], pairs[1::2], strict=True):
            if code.count(old) != 1:
                raise EditError(f"expected {old!r} exactly once, found it {code.count(old)} times")
            code = code.replace(old, new)
        return code
    return edit


def rewrite_line(contains: str, new: str) -> Edit:
    """Replace the one line containing ``contains`` by ``new`` (may be several lines),
    indented like the line it replaces."""
    def edit(code: str) -> str:
        lines = code.split("\n")
        hits = [i for i, line in enumerate(lines) if contains in line]
        if len(hits) != 1:
            raise EditError(f"expected one line with {contains!r}, found {len(hits)}")
        old = lines[hits[0]]
        indent = old[: len(old) - len(old.lstrip())]
        lines[hits[0]: hits[0] + 1] = [indent + line if line else line for line in new.split("\n")]
        return "\n".join(lines)
    return edit


def after_docstring(func: str, new: str) -> Edit:
    """Insert ``new`` as the first statements of ``func``, right after its docstring."""
    def edit(code: str) -> str:
        node = next((n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef) and n.name == func), None)
        if node is None:
            raise EditError(f"no function {func} to edit")
        first = node.body[1] if ast.get_docstring(node) is not None else node.body[0]
        lines = code.split("\n")
        lines[first.lineno - 1: first.lineno - 1] = [" " * first.col_offset + line for line in new.split("\n")]
        return "\n".join(lines)
    return edit


def prepend(new: str) -> Edit:
    """Code before the function, in the same cell (an import, say)."""
    return lambda code: new + "\n\n\n" + code


def append(new: str) -> Edit:
    """Code after the function, in the same cell (a quick test, say)."""
    return lambda code: code + "\n\n\n" + new


def chain(*edits: Edit) -> Edit:
    def edit(code: str) -> str:
        for e in edits:
            code = e(code)
        return code
    return edit


# ---------------------------------------------------------------- edits of a whole module

def edit_function(module_source: str, func: str, edit: Edit) -> str:
    """``module_source`` with function ``func``'s source replaced by its edit."""
    span = _functions(module_source).get(func)
    if span is None:
        raise EditError(f"no function {func} in the module")
    start, end, _ = span
    lines = module_source.split("\n")
    lines[start:end] = edit("\n".join(lines[start:end])).split("\n")
    return "\n".join(lines)


@lru_cache(maxsize=32)
def _functions(module_source: str) -> dict[str, tuple[int, int, frozenset[str]]]:
    """Each top-level function of a module: its lines (decorators included) and the names it
    uses. Parsed once per module: every entry of the catalogue edits one of a few modules."""
    return {n.name: (n.lineno - 1 - len(n.decorator_list), n.end_lineno,
                     frozenset(m.id for m in ast.walk(n) if isinstance(m, ast.Name)))
            for n in ast.parse(module_source).body if isinstance(n, ast.FunctionDef)}


def callers(module_source: str, func: str) -> list[str]:
    """The module's functions that call ``func``, directly or through another, in file order:
    an edit of ``func`` changes what they return too."""
    uses = {name: names for name, (_, _, names) in _functions(module_source).items()}
    found = {func}
    while True:
        more = {name for name, names in uses.items() if names & found} - found
        if not more:
            return [name for name in uses if name in found - {func}]
        found |= more
