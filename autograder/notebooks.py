"""Build a course's nbgrader source notebooks (source/) from its templates/<set>.py and solutions/.

The templates are percent-format Python files. Each cell starts with a marker line:

    # %% [markdown]             prose, read-only; lines keep their "# " prefix stripped
    # %% [given]                code students run but do not edit (read-only)
    # %%                        a plain code cell students may edit (demos, scratch)
    # %% [solution] NAME        the stub cell for exercise NAME: signature and docstring
                                from solutions/, the body between nbgrader's solution
                                markers (the template body must be empty)
    # %% [solution-given] NAME  an earlier assignment's answer, given whole and read-only
    # %% [tests] NAME           the graded cell for NAME: the visible self-checks only;
                                its points are the exercise's own checks' (template body
                                must be empty). At autograde the grader writes the cell's
                                points itself (autograder/nbgrader_bridge.py): nothing the
                                student's kernel computes is recorded.

Answers are therefore written once, in solutions/; tests/test_notebooks.py fails when
source/ differs from what this builds. It also writes the course package's worked_examples.json,
what each catalogued mistake returns on the visible checks' public inputs. Run:
``autograder notebooks [--course DIR] [--release]`` (--release also regenerates assignments/
with nbgrader generate_assignment).
"""
from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import nbformat

from . import course
from .assignments import ASSIGNMENTS, exercise_points

MARKER = re.compile(r"^# %%(?: \[(?P<kind>[\w-]+)\])?(?: (?P<name>\w+))?\s*$")
KINDS_WITH_NAME = {"solution", "solution-given", "tests"}


def parse_template(text: str) -> list[tuple[str, str | None, str]]:
    """Split a percent-format template into (kind, name, body) triples."""
    cells: list[tuple[str, str | None, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        m = MARKER.match(line)
        if m:
            kind, name = m["kind"] or "code", m["name"]
            if (kind in KINDS_WITH_NAME) != (name is not None):
                raise ValueError(f"line {lineno}: '{line}' needs a name exactly for {sorted(KINDS_WITH_NAME)}")
            cells.append((kind, name, []))
        elif cells:
            cells[-1][2].append(line)
        elif line.strip():
            raise ValueError(f"line {lineno}: text before the first '# %%' marker")
    return [(kind, name, "\n".join(body).strip("\n")) for kind, name, body in cells]


def markdown_text(body: str) -> str:
    lines = []
    for line in body.splitlines():
        if line.startswith("# "):
            lines.append(line[2:])
        elif line.rstrip() == "#":
            lines.append("")
        else:
            raise ValueError(f"markdown line does not start with '# ': {line!r}")
    return "\n".join(lines)


def solution_function(assignment: str, name: str):
    from . import reference

    functions = reference.load().functions
    if name not in functions:
        raise KeyError(f"no reference solution named {name} (for {assignment})")
    return functions[name]


def stub_source(func) -> str:
    """The function's signature and docstring, its body wrapped in solution markers."""
    src = textwrap.dedent(inspect.getsource(func))
    fn = ast.parse(src).body[0]
    lines = src.splitlines()
    first_body = fn.body[1] if ast.get_docstring(fn) else fn.body[0]
    head = lines[: first_body.lineno - 1]
    body = lines[first_body.lineno - 1 :]
    return "\n".join(head + ["    ### BEGIN SOLUTION", *body, "    ### END SOLUTION"])


def tests_source(assignment: str, name: str) -> str:
    # No hidden part: a hidden call in the student's kernel could be fooled by any other cell
    # of the notebook, so the points are written by nbgrader_bridge.RecordEngineGrades instead.
    return "\n".join([
        "# Run this cell to check your work: it prints which checks pass and why.",
        "from autograder.selfcheck import check",
        f"check({name!r}, {name})",
    ])


def demo_digest(source: str) -> str:
    from .submission import demo_digest as digest

    return digest(source)


def nbgrader_meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": 3, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def build_notebook(assignment: str, template: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    counts: dict[str, int] = {}

    def next_id(prefix: str) -> str:
        counts[prefix] = counts.get(prefix, 0) + 1
        return f"{prefix}_{counts[prefix]}"

    for kind, name, body in parse_template(template):
        if kind in {"solution", "tests"} and body.strip():
            raise ValueError(f"[{kind}] {name}: the body is generated; leave it empty")
        if kind == "markdown":
            cell = nbformat.v4.new_markdown_cell(markdown_text(body))
            cell.metadata = nbgrader_meta(next_id("text"), locked=True)
        elif kind == "given":
            cell = nbformat.v4.new_code_cell(body)
            cell.metadata = nbgrader_meta(next_id("given"), locked=True)
        elif kind == "code":
            cell = nbformat.v4.new_code_cell(body)
            # A demonstration: the grader skips it while its text is the course's (see
            # autograder/submission.py), so grading does not pay for the demos.
            cell.metadata = {"autograder": {"demo": demo_digest(body)}}
        elif kind == "solution":
            cell = nbformat.v4.new_code_cell(stub_source(solution_function(assignment, name)))
            cell.metadata = nbgrader_meta(f"{name}_code", solution=True)
        elif kind == "solution-given":
            src = textwrap.dedent(inspect.getsource(solution_function(assignment, name))).strip()
            cell = nbformat.v4.new_code_cell(src)
            cell.metadata = nbgrader_meta(f"given_{name}", locked=True)
        elif kind == "tests":
            cell = nbformat.v4.new_code_cell(tests_source(assignment, name))
            cell.metadata = nbgrader_meta(name, grade=True, locked=True,
                                          points=exercise_points(name))
        else:
            raise ValueError(f"unknown cell kind [{kind}]")
        nb.cells.append(cell)
    for i, cell in enumerate(nb.cells):
        cell.id = f"{assignment}-{i:03d}"  # stable ids: rebuilding gives identical files
    _check_exercises_present(assignment, nb)
    return nb


def _check_exercises_present(assignment: str, nb) -> None:
    ids = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    for name in ASSIGNMENTS[assignment]:
        for grade_id in (f"{name}_code", name):
            if grade_id not in ids:
                raise ValueError(f"{assignment}: no cell with grade_id {grade_id}")


def template_path(assignment: str) -> Path:
    return course.current().folder("templates") / f"{assignment}.py"


def notebook_text(assignment: str) -> str:
    template = (template_path(assignment)).read_text(encoding="utf-8")
    return nbformat.writes(build_notebook(assignment, template)) + "\n"


def build_sources(root: Path | None = None) -> list[Path]:
    root = root or course.current().folder(".")
    written = []
    for assignment in ASSIGNMENTS:
        path = root / "source" / assignment / f"{assignment}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(notebook_text(assignment))
        written.append(path)
    return written


def release(root: Path | None = None) -> None:
    """Regenerate assignments/ from source/ with nbgrader's own converter."""
    root = root or course.current().folder(".")
    # nbgrader runs the `alembic` script by name: put this interpreter's scripts on PATH.
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    with tempfile.TemporaryDirectory() as tmp:  # a throwaway gradebook: releasing records nothing
        for assignment in ASSIGNMENTS:
            subprocess.run(
                [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force",
                 "--log-level=WARN", f"--CourseDirectory.db_url=sqlite:///{tmp}/gradebook.db"],
                cwd=root, check=True, env=env,
            )


def visible_calls() -> list:
    """Every visible check's calls, once each. Visible inputs are the same for every student
    (tests/test_worked_examples.py checks it), so any seed draws them."""
    import numpy as np

    from .assignments import exercise

    calls = {}
    for names in ASSIGNMENTS.values():
        for name in names:
            for check in exercise(name).checks(np.random.default_rng(0)):
                if check.visible:
                    calls.update({id(c): c for c in check.calls})
    return list(calls.values())


def worked_examples_text() -> str:
    from . import reference, worked_examples

    return worked_examples.text(worked_examples.build(reference.load(), visible_calls()))


def write_worked_examples() -> Path:
    path = course.current().worked_examples
    path.write_text(worked_examples_text(), encoding="utf-8")
    return path


def build(release_too: bool = False) -> None:
    """`autograder notebooks`: the source notebooks and the worked examples' table, and with
    ``release_too`` the released notebooks."""
    root = course.current().folder(".")
    for path in [*build_sources(), write_worked_examples()]:
        print(f"wrote {path.relative_to(root)}")
    if release_too:
        release()
        print("regenerated assignments/")
