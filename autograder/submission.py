"""Turn a submission file into the code cells to run, executing nothing.

A ``.py`` file is one step per top-level statement. A notebook contributes its code cells
in order, with IPython magics and shell escapes neutralised and the assignment's own check
cells left out (the grader checks; a submission's copy of the checks is not trusted).
Every problem (bad JSON, a cell that does not parse, a file that is a link or a pipe, ...)
becomes a one-line message; what still parses is graded.

The file is read without following links (``O_NOFOLLOW`` on every component below the
class folder), without blocking (``O_NONBLOCK``: a FIFO or a device is seen by ``fstat``
and refused, never read), and only if it is a regular file of at most ``MAX_BYTES``.
Loading is linear in the file's size: each statement is compiled from the one parse of
the file, never from a re-padded copy of it, and no parser recursion reaches the grader.
"""
from __future__ import annotations

import ast
import errno
import hashlib
import json
import marshal
import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .names import NOTEBOOK_CELL, one_line, readable

MAX_BYTES = 5 << 20  # 5 MiB: ten times the largest honest notebook with its outputs
# Steps sent to the sandbox. More statements or cells than this are grouped, consecutive
# ones together, into this many steps: the job stays far below wire.MAX_ITEMS (10,000),
# the limit on the size of a *student's* returned list, which the list of cells must not hit.
MAX_CELLS = 1000
# Characters of code (blank lines and indentation aside) a submission may have: the
# parse tree costs about 1 kB per statement, so this bounds the grader's memory at about
# 200 MB where 5 MiB of one-line statements took 900 MB. An honest answer is under 50 kB.
MAX_CODE = 1 << 20
# What to do with a notebook that is not valid JSON: Jupyter may not open it either.
UNOPENABLE = ("open it in Jupyter, save it and submit again. If Jupyter cannot open it either, open the .ipynb "
              "file in a text editor, copy your code out of it into a fresh copy of the released notebook, and "
              "submit that one (or ask your instructor for help)")
MAX_PROBLEMS = 50  # one-line problems kept; the rest are counted
SELF_CHECK = re.compile(r"^\s*from autograder\.(selfcheck|nbgrader_bridge) import", re.M)
_SPACE = re.compile(r"\s+")
_MAGIC_ASSIGNMENT = re.compile(r"^\s*\w+\s*=\s*[!%]")  # `files = !ls`, `t = %timeit f()`
_KINDS = {stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFDIR: "a folder", stat.S_IFSOCK: "a socket", stat.S_IFLNK: "a symbolic link"}
# What the parser or compiler raises on a hostile source: nesting too deep, too much of it.
_SOURCE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


@dataclass
class Submission:
    path: Path
    cells: list[str] = field(default_factory=list)  # each step's source text
    # where each step came from: "notebook cell 3", "line 12", "lines 3-9"
    labels: list[str] = field(default_factory=list)
    # Each step compiled here, where it is checked anyway, and marshalled for the sandbox:
    # the child then execs it without compiling again.
    code: list[bytes] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line each, shown to the student
    dropped: int = 0  # problems beyond MAX_PROBLEMS, counted only
    # A notebook's JSON as parsed here, when it holds a list of cells: other_set.py reads its
    # cells too, rather than parse the file a second time.
    notebook: dict | None = field(default=None, repr=False, compare=False)

    def add(self, source: str, label: str) -> None:
        """Keep a cell; raises SyntaxError (or ValueError) and keeps nothing if it does not compile."""
        self._keep(compile(source, f"<{label}>", "exec", dont_inherit=True), source, label)

    def _keep(self, code, source: str, label: str) -> None:
        self._keep_compiled(marshal.dumps(code), source, label)

    def _keep_compiled(self, code: bytes, source: str, label: str) -> None:
        self.code.append(code)
        self.cells.append(source)
        self.labels.append(label)

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(one_line(text, 500))
        else:
            self.dropped += 1

    def all_problems(self) -> list[str]:
        more = [f"... and {self.dropped} more problems like these"] if self.dropped else []
        return self.problems + more


class Unreadable(Exception):
    """The submission is not a regular file the grader may read; the message says why, in one line."""


def read_submission(path: str | Path, base: str | Path | None = None) -> bytes:
    """The bytes of ``path``, a regular file of at most MAX_BYTES, opened without following a
    link at any component below ``base`` (the class folder the operator named; without it,
    only the last component), and without blocking on a FIFO or a device."""
    path = Path(path)
    shown = readable(path.name)
    if base is not None:
        parts = Path(os.path.relpath(path, base)).parts
        if not parts or parts[0] == os.pardir:
            raise Unreadable(f"{shown} is not inside the class folder")
        anchor = str(base)
    else:
        parts = (path.name,)
        anchor = str(path.parent)
    flags = os.O_RDONLY | os.O_CLOEXEC
    dir_fd = os.open(anchor, flags | os.O_DIRECTORY)
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                fd = os.open(part, flags | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            except OSError as e:
                where = readable(os.path.join(*parts[: i + 1]))
                if e.errno in (errno.ELOOP, errno.ENOTDIR):  # Linux says ENOTDIR for a link with O_DIRECTORY
                    try:
                        link = stat.S_ISLNK(os.stat(part, dir_fd=dir_fd, follow_symlinks=False).st_mode)
                    except OSError:
                        link = False
                    what = "a symbolic link; links are not followed" if link else "not a folder"
                    raise Unreadable(f"{where} is {what}, so nothing was read") from None
                raise Unreadable(f"could not open the folder {where}: {e.strerror}") from None
            os.close(dir_fd)
            dir_fd = fd
        # lstat first, so a device is never even opened; fstat after, in case it changed between.
        try:
            kind = stat.S_IFMT(os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError as e:
            raise Unreadable(f"could not read {shown}: {e.strerror}") from None
        if kind != stat.S_IFREG:
            raise Unreadable(_not_regular(shown, kind))
        try:
            fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=dir_fd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise Unreadable(_not_regular(shown, stat.S_IFLNK)) from None
            raise Unreadable(f"could not read {shown}: {e.strerror}") from None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(_not_regular(shown, stat.S_IFMT(st.st_mode)))
        if st.st_size > MAX_BYTES:
            raise Unreadable(_too_big(shown, st.st_size))
        chunks, size = [], 0
        while size <= MAX_BYTES:  # the file may grow after fstat: never read more than the cap
            chunk = os.read(fd, min(1 << 20, MAX_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_BYTES:
            raise Unreadable(_too_big(shown, size))
        return b"".join(chunks)
    except OSError as e:
        raise Unreadable(f"could not read {shown}: {e.strerror}") from None
    finally:
        os.close(fd)


def _not_regular(shown: str, kind: int) -> str:
    what = _KINDS.get(kind, "not a regular file")
    return f"{shown} is {what}, not a regular file, so it was not read; submit the file itself"


def _too_big(shown: str, size: int) -> str:
    return (f"{shown} is {size / (1 << 20):.1f} MiB; submissions over {MAX_BYTES >> 20} MiB are not graded "
            "(clear the notebook's outputs and submit again)")


def load(path: str | Path, base: str | Path | None = None) -> Submission:
    """The file read (``read_submission``) and parsed. Never raises for anything in the file:
    every problem is a one-line message."""
    path = Path(path)
    sub = Submission(path)
    name = readable(path.name)
    try:
        raw = read_submission(path, base)
    except Unreadable as e:
        sub.problem(str(e))
        return sub
    except OSError as e:  # the class folder itself went away
        sub.problem(f"could not read {name}: {e.strerror or e}")
        return sub
    return parse(path, raw)


def parse(path: Path, raw: bytes) -> Submission:
    """The submission in ``raw``, the bytes of the file ``path`` names as read_submission read
    them: its name labels the problems and its suffix says how to read it. Never raises for
    anything in the bytes: every problem is a one-line message."""
    sub = Submission(path)
    name = readable(path.name)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        sub.problem(f"{name} is not UTF-8 text (byte {e.start}); save it again as UTF-8")
        return sub
    if not text.strip():
        sub.problem(f"{name} is empty")
        return sub
    if path.suffix == ".ipynb":
        _notebook_steps(text, sub, name)
    elif path.suffix == ".py":
        _python_steps(text, sub, name)
    else:
        sub.problem(f"{name}: only .py and .ipynb submissions can be graded")
    return sub


def _code_size(text: str) -> int:
    """Characters with every run of whitespace counted as one: blank lines cost nothing."""
    return len(_SPACE.sub(" ", text))


def _over_code_limit(text: str) -> bool:
    """More than MAX_CODE characters of code. Collapsing whitespace only shortens a text, so
    one no longer than the limit is within it without being collapsed (every honest one)."""
    return len(text) > MAX_CODE and _code_size(text) > MAX_CODE


def _too_much_code(name: str, text: str) -> str:
    return (f"{name} has {_code_size(text) / (1 << 20):.1f} MiB of code; over {MAX_CODE >> 20} MiB "
            "is not graded (is there data pasted into it?)")


def _error_text(e: BaseException) -> str:
    """What is wrong with a source, to follow "<where> has "."""
    if isinstance(e, (RecursionError, MemoryError)):
        return "code nested too deeply for Python to read"
    line = f" on line {e.lineno}" if getattr(e, "lineno", None) else ""
    return f"a syntax error{line}: {getattr(e, 'msg', None) or e}"


def _python_steps(text: str, sub: Submission, name: str) -> None:
    """A .py file as one step per top-level statement, so one hanging line costs only itself.

    Each statement is compiled from the file's one parse tree, so tracebacks give the
    file's own line numbers at no cost (the old way padded each statement's text with the
    blank lines before it: quadratic in a file of many lines)."""
    if _over_code_limit(text):
        sub.problem(_too_much_code(name, text))
        return
    try:
        tree = ast.parse(text, filename=f"<{name}>")
    except _SOURCE_ERRORS as e:
        sub.problem(f"{name} has {_error_text(e)}; nothing could be run")
        return
    lines = text.splitlines()
    units = []
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        last = stmt.end_lineno or first
        units.append(_Unit(first, last, [stmt], "\n".join(lines[first - 1 : last])))
    _add_steps(sub, units, "line")


@lru_cache(maxsize=1024)
def _compiled_cached(source: str, filename: str) -> bytes:
    return marshal.dumps(compile(source, filename, "exec", dont_inherit=True))


def _compiled(source: str, filename: str) -> bytes:
    """A cell compiled and marshalled; once per process for a small cell, since most cells of a
    class are the notebook's own, unchanged (a large one is compiled each time, so that a
    class's worth of large cells cannot fill the grader's memory)."""
    if len(source) <= 16_384:
        return _compiled_cached(source, filename)
    return marshal.dumps(compile(source, filename, "exec", dont_inherit=True))


def _notebook_steps(text: str, sub: Submission, name: str) -> None:
    units = []
    cells = _notebook_cells(text, sub, name)
    code = "".join(src for _, src in cells)
    if _over_code_limit(code):
        sub.problem(_too_much_code(name, code))
        return
    if len(cells) <= MAX_CELLS:  # a step per cell: compiled straight from its text, one call
        for i, src in cells:
            code = neutralise_magics(src)
            try:
                compiled = _compiled(code, f"<{NOTEBOOK_CELL} {i + 1}>")
            except _SOURCE_ERRORS as e:
                sub.problem(f"{NOTEBOOK_CELL} {i + 1} has {_error_text(e)}; it was skipped")
                continue
            sub._keep_compiled(compiled, code, f"{NOTEBOOK_CELL} {i + 1}")
        return
    for i, src in cells:
        code = neutralise_magics(src)
        try:
            tree = ast.parse(code, filename=f"<{NOTEBOOK_CELL} {i + 1}>")
        except _SOURCE_ERRORS as e:
            sub.problem(f"{NOTEBOOK_CELL} {i + 1} has {_error_text(e)}; it was skipped")
            continue
        units.append(_Unit(i + 1, i + 1, tree.body, code))
    _add_steps(sub, units, NOTEBOOK_CELL)


@dataclass
class _Unit:
    first: int  # line (of a .py) or cell number where it starts
    last: int
    body: list  # its statements, parsed once
    source: str


def _add_steps(sub: Submission, units: list[_Unit], what: str) -> None:
    """One step per unit, or, past MAX_CELLS units, consecutive units grouped into MAX_CELLS steps."""
    size = -(-len(units) // MAX_CELLS) if units else 1
    for k in range(0, len(units), size):
        group = units[k : k + size]
        first, last = group[0].first, group[-1].last
        label = f"{what} {first}" if len(group) == 1 else f"{what}s {first}-{last}"
        body = [s for u in group for s in u.body]
        try:
            code = compile(ast.Module(body=body, type_ignores=[]), f"<{label}>", "exec", dont_inherit=True)
        except _SOURCE_ERRORS as e:  # e.g. `return` outside a function: the parser allows it, the compiler not
            sub.problem(f"{label} has {_error_text(e)}; it was skipped")
            continue
        sub._keep(code, "\n".join(u.source for u in group), label)


def _notebook_cells(text: str, sub: Submission, name: str) -> list[tuple[int, str]]:
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as e:
        sub.problem(f"{name} is not a valid notebook (broken JSON at line {e.lineno}); {UNOPENABLE}")
        return []
    except (ValueError, RecursionError, MemoryError) as e:  # too deep, a 5000-digit number...
        why = "nested too deeply" if isinstance(e, RecursionError) else "unreadable"
        sub.problem(f"{name} is not a valid notebook (its JSON is {why}); {UNOPENABLE}")
        return []
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        sub.problem(f"{name} is not a Jupyter notebook (no list of cells)")
        return []
    sub.notebook = nb
    if nb.get("nbformat") != 4 or type(nb.get("nbformat")) is not int:
        shown = nb.get("nbformat") if type(nb.get("nbformat")) in (int, float) else "unknown"
        sub.problem(f"{name} has notebook format {shown}; only format 4 is read, so it was read as well as possible")
    if "nbformat_minor" in nb and type(nb["nbformat_minor"]) is not int:
        sub.problem(f"{name}'s nbformat_minor is {_kind(nb['nbformat_minor'])}, not a number; it was ignored")
    if "metadata" in nb and not isinstance(nb["metadata"], dict):
        sub.problem(f"{name}'s metadata is {_kind(nb['metadata'])}, not a mapping; it was ignored "
                    "(open the notebook in Jupyter, save, and submit again)")
    out = []
    for i, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict):
            sub.problem(f"{NOTEBOOK_CELL} {i + 1} of {name} is {_kind(cell)}, not a cell; it was skipped")
            continue
        if cell.get("cell_type") not in ("code", "markdown", "raw"):
            sub.problem(f"{NOTEBOOK_CELL} {i + 1} of {name} has {_cell_type(cell)}; it was skipped")
            continue
        if "metadata" in cell and not isinstance(cell["metadata"], dict):
            sub.problem(f"{NOTEBOOK_CELL} {i + 1} of {name}: its metadata is {_kind(cell['metadata'])}, not a mapping; "
                        "it was read without it")
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        if isinstance(src, list):
            try:
                src = "".join(src)
            except TypeError:  # a line that is not text: said just below
                pass
        if not isinstance(src, str):
            sub.problem(f"{NOTEBOOK_CELL} {i + 1} of {name}: its source is not text; it was skipped")
            continue
        meta = cell.get("metadata")
        meta = meta.get("nbgrader") if isinstance(meta, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        if (meta.get("grade") and not meta.get("solution")) or SELF_CHECK.search(src):
            continue  # the assignment's own checks: the grader runs its own
        if _unchanged_demo(cell, src):
            continue  # the course's own demonstration, as released: nothing of the student's
        out.append((i, src))
    return out


def _kind(x) -> str:
    """What a notebook held where a structure belongs, in a word or two."""
    return {list: "a list", dict: "a mapping", str: "text", bool: "true or false", type(None): "null",
            int: "a number", float: "a number"}.get(type(x), "something else")


def _cell_type(cell: dict) -> str:
    kind = cell.get("cell_type")
    if kind is None:
        return "no cell_type"
    if isinstance(kind, str):
        return f"the unknown cell_type {one_line(kind, 40)!r}"
    return f"a cell_type that is {_kind(kind)}, not text"


def demo_digest(source: str) -> str:
    """What a released demonstration cell records of its own text (autograder/notebooks.py)."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _unchanged_demo(cell: dict, src: str) -> bool:
    """A demo cell whose text is still the released one. Its demonstrations (plots, timings,
    a few hundred random draws) would cost more than grading; a student who edits the cell
    changes its text, and then it runs like any cell. A cell that claims to be a demo only
    keeps its own code from running."""
    meta = cell.get("metadata")
    tag = meta.get("autograder") if isinstance(meta, dict) else None
    digest = tag.get("demo") if isinstance(tag, dict) else None
    return isinstance(digest, str) and digest == demo_digest(src)


def neutralise_magics(src: str) -> str:
    """IPython syntax to plain Python: magics and shell escapes become comments."""
    lines = src.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].split()[0]
        if magic in ("%%time", "%%timeit", "%%capture"):
            lines = ["# " + lines[0]] + lines[1:]  # the body is ordinary Python
        else:
            return "\n".join("# " + line for line in lines)  # %%bash and friends: not Python
    out = []
    for line in lines:
        if "%" not in line and "!" not in line:  # neither a magic nor a shell escape: most lines
            out.append(line)
            continue
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or _MAGIC_ASSIGNMENT.match(line):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}pass  # {stripped}")
        else:
            out.append(line)
    return "\n".join(out)
