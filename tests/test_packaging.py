"""What a student can install holds no answer: neither solutions/ nor the mistake variants."""
import ast
import zipfile
from pathlib import Path

import pytest

from autograder.assignments import ASSIGNMENTS
from autograder.catalogue import edit_function
from autograder.reference import load

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_text(built_wheel) -> dict[str, str]:
    with zipfile.ZipFile(built_wheel) as z:
        return {name: z.read(name).decode(errors="replace") for name in z.namelist()}


def _statements(source: str) -> set[str]:
    """The longer assignments and returns of ``source``, unparsed."""
    return {ast.unparse(stmt) for stmt in ast.walk(ast.parse(source))
            if isinstance(stmt, (ast.Assign, ast.Return)) and len(ast.unparse(stmt)) > 30}


def _body_lines():
    """Each statement line of every reference answer (solutions/<assignment>.py) and of every
    catalogued mistake (the reference with its edit made), unparsed."""
    sources = {a: (ROOT / "solutions" / f"{a}.py").read_text() for a in ASSIGNMENTS}
    lines = set().union(*(_statements(text) for text in sources.values()))
    for mistake in load().catalogue:
        source = next(text for a, text in sources.items() if mistake.func in ASSIGNMENTS[a])
        lines |= _statements(edit_function(source, mistake.func, mistake.edit))
    return lines


def test_wheel_ships_only_the_grader_and_the_course_declarations(wheel_text):
    packages = {name.split("/")[0] for name in wheel_text if not name.split("/")[0].endswith(".dist-info")}
    assert packages == {"autograder", "attention_course"}


def test_wheel_contains_no_reference_or_mistake_code(wheel_text):
    code = "\n".join(ast.unparse(ast.parse(text)) for name, text in wheel_text.items() if name.endswith(".py"))
    leaked = sorted(line for line in _body_lines() if line in code)
    assert leaked == []


def test_leak_detector_sees_reference_code():
    source = "\n".join(ast.unparse(ast.parse((ROOT / "solutions" / f"{a}.py").read_text())) for a in ASSIGNMENTS)
    assert sum(line in source for line in _body_lines()) > 20


# ---------------------------------------------------------------- what a student's install brings

INSTRUCTOR_ONLY = {"nbgrader", "jupyter", "jupyterlab", "notebook", "jupyter-server", "nbclient", "sqlalchemy",
                   "nbconvert", "alembic"}


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def closure(requirements: list[str]) -> set[str]:
    """Every distribution ``pip install`` of these requirements brings, read from the metadata of
    what this venv has installed (the same versions a fresh install resolves to here), with no
    extra asked for at any level."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = _normal(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [Requirement(r) for r in requires(req.name) or ()]
        except PackageNotFoundError:
            pass  # not installed here: nothing of it asked for by the base install (a marker excluded it)
    return seen


def test_the_base_install_is_a_students():
    from importlib.metadata import requires

    base = closure([r for r in requires("attention-autograder") if "extra ==" not in r])
    assert "numpy" in base and "matplotlib" in base
    assert base & INSTRUCTOR_ONLY == set(), "the student's install brings the instructor's tools"


def test_the_instructor_extra_brings_nbgrader():
    from importlib.metadata import requires

    extra = [r.split(";")[0] for r in requires("attention-autograder") if "extra == \"instructor\"" in r]
    assert {"nbgrader", "sqlalchemy", "nbclient"} <= closure(extra)
