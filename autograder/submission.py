"""Turn a submission file into the code cells to run, executing nothing.

A ``.py`` file is one cell. A notebook contributes its code cells in order, with IPython
magics and shell escapes neutralised and the assignment's own check cells left out (the
grader checks; a submission's copy of the checks is not trusted). Every problem (bad JSON,
a cell that does not parse, ...) becomes a one-line message; what still parses is graded.
"""
from __future__ import annotations

import ast
import json
import marshal
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 20 << 20
SELF_CHECK = re.compile(r"^\s*from autograder\.(selfcheck|nbgrader_bridge) import", re.M)


@dataclass
class Submission:
    path: Path
    cells: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # where each cell came from: "cell 3", "line 12"
    # Each cell compiled here, where it is checked anyway, and marshalled for the sandbox:
    # the child then execs it without compiling again.
    code: list[bytes] = field(default_factory=list)

    def add(self, source: str, label: str) -> None:
        """Keep a cell; raises SyntaxError (or ValueError) and keeps nothing if it does not compile."""
        code = marshal.dumps(compile(source, f"<{label}>", "exec", dont_inherit=True))
        self.cells.append(source)
        self.labels.append(label)
        self.code.append(code)
    problems: list[str] = field(default_factory=list)  # one line each, shown to the student


def load(path: str | Path) -> Submission:
    path = Path(path)
    sub = Submission(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        sub.problems.append(f"could not read {path.name}: {e.strerror or e}")
        return sub
    if len(raw) > MAX_BYTES:
        sub.problems.append(f"{path.name} is {len(raw) >> 20} MiB; submissions over {MAX_BYTES >> 20} MiB are not graded")
        return sub
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        sub.problems.append(f"{path.name} is not UTF-8 text (byte {e.start}); save it again as UTF-8")
        return sub
    if not text.strip():
        sub.problems.append(f"{path.name} is empty")
        return sub
    if path.suffix == ".ipynb":
        sources = _notebook_cells(text, sub)
    elif path.suffix == ".py":
        _python_statements(text, sub)
        return sub
    else:
        sub.problems.append(f"{path.name}: only .py and .ipynb submissions can be graded")
        return sub
    for i, src in sources:
        code = neutralise_magics(src) if path.suffix == ".ipynb" else src
        try:
            sub.add(code, f"cell {i + 1}")
        except (SyntaxError, ValueError) as e:  # ValueError: a NUL byte in the source
            line = f" on line {e.lineno}" if getattr(e, "lineno", None) else ""
            sub.problems.append(f"cell {i + 1} has a syntax error{line}: {getattr(e, 'msg', e)}; it was skipped")
    return sub


def _python_statements(text: str, sub: Submission) -> None:
    """A .py file as one step per top-level statement, so one hanging line costs only itself.

    Each step is padded with blank lines, so tracebacks give the file's own line numbers.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as e:
        line = f" on line {e.lineno}" if getattr(e, "lineno", None) else ""
        sub.problems.append(f"{sub.path.name} has a syntax error{line}: {getattr(e, 'msg', e)}; nothing could be run")
        return
    lines = text.splitlines()
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        sub.add("\n" * (first - 1) + "\n".join(lines[first - 1 : stmt.end_lineno]), f"line {first}")


def _notebook_cells(text: str, sub: Submission) -> list[tuple[int, str]]:
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as e:
        sub.problems.append(f"{sub.path.name} is not a valid notebook (broken JSON at line {e.lineno}); "
                            "open it in Jupyter, save, and submit again")
        return []
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        sub.problems.append(f"{sub.path.name} is not a Jupyter notebook (no list of cells)")
        return []
    if nb.get("nbformat") != 4:
        sub.problems.append(f"{sub.path.name} has notebook format {nb.get('nbformat')!r}; only format 4 is read, "
                            "so it was read as well as possible")
    out = []
    for i, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        if not isinstance(src, str):
            continue
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if (meta.get("grade") and not meta.get("solution")) or SELF_CHECK.search(src):
            continue  # the assignment's own checks: the grader runs its own
        out.append((i, src))
    return out


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
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or re.match(r"^\s*\w+\s*=\s*[!%]", line):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}pass  # {stripped}")
        else:
            out.append(line)
    return "\n".join(out)
