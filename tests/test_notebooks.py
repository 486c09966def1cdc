"""The course notebooks: built from solutions/, released by nbgrader, runnable in Jupyter."""
import ast
import importlib
import inspect
import shutil
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import notebooks as build  # the notebook builder
from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.catalogue import edit_function
from autograder.reference import load

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT_NAMES = tuple(ASSIGNMENTS)


def execute(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def grade_cells(nb):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade")}


def errors(cell):
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


@pytest.fixture(scope="module", params=ASSIGNMENT_NAMES)
def executed_source(request):
    return request.param, execute(ROOT / "source" / request.param / f"{request.param}.ipynb")


@pytest.fixture(scope="module", params=ASSIGNMENT_NAMES)
def executed_release(request):
    return request.param, execute(ROOT / "assignments" / request.param / f"{request.param}.ipynb")


@pytest.mark.parametrize("assignment", ASSIGNMENT_NAMES)
def test_source_notebook_is_built_from_solutions(assignment):
    on_disk = (ROOT / "source" / assignment / f"{assignment}.ipynb").read_text()
    assert on_disk == build.notebook_text(assignment), "source/ is stale: run `make notebooks`"


def test_released_notebooks_are_current(tmp_path):
    shutil.copytree(ROOT / "source", tmp_path / "source")
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    build.release(tmp_path)
    for assignment in ASSIGNMENT_NAMES:
        fresh = nbformat.read(tmp_path / "assignments" / assignment / f"{assignment}.ipynb", as_version=4)
        committed = nbformat.read(ROOT / "assignments" / assignment / f"{assignment}.ipynb", as_version=4)
        assert fresh == committed, f"assignments/{assignment} is stale: run `make notebooks`"


@pytest.mark.parametrize("assignment", ASSIGNMENT_NAMES)
def test_every_exercise_has_a_stub_and_a_graded_cell(assignment):
    nb = nbformat.read(ROOT / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    ids = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    for name in ASSIGNMENTS[assignment]:
        assert {name, f"{name}_code"} <= ids


@pytest.fixture
def autograde_steps():
    """The two steps nbgrader_config.py adds to nbgrader autograde; their sandbox closed after."""
    from autograder import nbgrader_bridge

    yield nbgrader_bridge.GradeWithEngine, nbgrader_bridge.RecordEngineGrades
    nbgrader_bridge._close_sandboxes()


@pytest.mark.parametrize("assignment", ASSIGNMENT_NAMES)
def test_source_notebook_earns_every_point(assignment, autograde_steps):
    # Autograde's own steps on the instructor's notebook (no kernel needed: the kernel's
    # output never counts); determine_grade is how SaveAutoGrades reads a cell's points.
    from nbgrader.utils import determine_grade

    nb = nbformat.read(ROOT / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    resources = {"nbgrader": {"assignment": assignment, "notebook": assignment, "student": "instructor",
                              "db_url": "sqlite://"}}
    # The course's own configuration: GradeWithEngine refuses to grade where nbgrader's
    # defaults (Execute, a kernel as the instructor) would also run.
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    for step in autograde_steps:
        nb, resources = step(config=config).preprocess(nb, resources)
    points = {grade_id: determine_grade(cell)[0] for grade_id, cell in grade_cells(nb).items()}
    assert points == {name: exercise_points(name) for name in ASSIGNMENTS[assignment]}


def test_source_notebook_has_no_errors_or_stderr(executed_source):
    assignment, nb = executed_source
    bad = [(i, o.get("ename") or o.get("text", "")[:80]) for i, c in enumerate(nb.cells) if c.cell_type == "code"
           for o in c.outputs if o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")]
    assert bad == []


def test_released_notebook_runs_to_the_end(executed_release):
    # An unfinished exercise must not stop Restart & Run All: no cell raises.
    assignment, nb = executed_release
    raised = [(c.metadata.get("nbgrader", {}).get("grade_id"), o.ename) for c in nb.cells if c.cell_type == "code"
              for o in errors(c)]
    assert raised == []


def test_released_notebook_says_each_exercise_is_not_implemented_yet(executed_release):
    assignment, nb = executed_release
    said = {gid: "".join(o.get("text", "") for o in c.get("outputs", [])) for gid, c in grade_cells(nb).items()}
    assert {gid: f"{gid} is not implemented yet" in text for gid, text in said.items()} == {g: True for g in said}


def _solution_lines(assignment):
    """Distinctive body lines of this assignment's reference functions and of its catalogued
    mistakes (each reference function with its edit made)."""
    module = importlib.import_module(f"solutions.{assignment}")
    source = inspect.getsource(module)
    sources = [textwrap.dedent(inspect.getsource(getattr(module, n))) for n in ASSIGNMENTS[assignment]]
    sources += [edit_function(source, m.func, m.edit) for m in load().catalogue if m.func in ASSIGNMENTS[assignment]]
    nodes = [n for text in sources for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    lines = set()
    for node in nodes:
        body = node.body[1:] if ast.get_docstring(node) else node.body
        for stmt in body:
            line = ast.unparse(stmt).splitlines()[0]
            if len(line) > 24 and not line.startswith(("for ", "if ", "return out")):
                lines.add(line)
    return lines


@pytest.mark.parametrize("assignment", ASSIGNMENT_NAMES)
def test_released_notebook_holds_no_answer_and_no_hidden_test(assignment):
    # Every cell, given ones included: a released notebook carries no answer of any problem
    # set, its own or an earlier one (ps2 and ps3 ask for the student's own earlier functions).
    nb = nbformat.read(ROOT / "assignments" / assignment / f"{assignment}.ipynb", as_version=4)
    code = "\n".join(ast.unparse(ast.parse(c.source)) if c.cell_type == "code" else c.source for c in nb.cells)
    assert "HIDDEN TESTS" not in code and "nbgrader_bridge" not in code and "BEGIN SOLUTION" not in code
    leaked = [line for a in ASSIGNMENT_NAMES for line in _solution_lines(a) if line in code]
    assert leaked == []


def test_leak_check_sees_an_earlier_answer_given_whole():
    # What ps3 used to carry: problem set 2's answers as given cells.
    given = "\n".join(ast.unparse(ast.parse(textwrap.dedent(inspect.getsource(
        build.solution_function("ps3", name))))) for name in ("softmax", "causal_mask", "scaled_dot_product_attention"))
    assert [line for a in ASSIGNMENT_NAMES for line in _solution_lines(a) if line in given] != []


@pytest.mark.parametrize("assignment", ASSIGNMENT_NAMES)
def test_released_notebook_asks_for_earlier_functions_instead_of_giving_them(assignment):
    nb = nbformat.read(ROOT / "assignments" / assignment / f"{assignment}.ipynb", as_version=4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id", "") for c in nb.cells]
    answers = {n for a in ASSIGNMENT_NAMES for n in ASSIGNMENTS[a]}
    assert [i for i in ids if i.startswith("given_") and i[len("given_"):] in answers] == []
    earlier = [n for a in ASSIGNMENT_NAMES[:ASSIGNMENT_NAMES.index(assignment)] for n in ASSIGNMENTS[a]]
    stubs = {i[: -len("_code")] for i in ids if i.endswith("_code")} - set(ASSIGNMENTS[assignment])
    assert stubs <= set(earlier)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id", "")[: -len("_code")] in stubs:
            assert "raise NotImplementedError()" in cell.source


@pytest.mark.parametrize("assignment", ASSIGNMENT_NAMES)
def test_released_notebook_imports_the_worked_inputs(assignment):
    nb = nbformat.read(ROOT / "assignments" / assignment / f"{assignment}.ipynb", as_version=4)
    given = [c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("given")]
    assert any("from attention_course.worked_inputs import" in src for src in given)
