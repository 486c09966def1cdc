"""The course notebooks: built from solutions/, released by nbgrader, runnable in Jupyter."""
import ast
import importlib
import inspect
import re
import shutil
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import notebooks as build  # the notebook builder
from demo_claims import CLAIMS, disagreements  # tests/demo_claims.py
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



# ---------------------------------------------------------------- the prose quotes what the demos print

def _is_demo(cell) -> bool:
    return cell.cell_type == "code" and "demo" in cell.metadata.get("autograder", {})


def _prose(nb) -> str:
    """What the notebook says, whitespace as single spaces: its markdown, and the code of its
    given and demo cells, whose comments quote numbers too (never a solution's code)."""
    parts = [c.source for c in nb.cells if c.cell_type == "markdown" or _is_demo(c)
             or c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("given")]
    return " ".join(" ".join(parts).split())


def _printed(nb) -> str:
    """What the demo cells printed, whitespace as single spaces."""
    return " ".join(" ".join(o.text for c in nb.cells if _is_demo(c) for o in c.outputs
                             if o.output_type == "stream" and o.name == "stdout").split())


def _print_precision(nb) -> int:
    """The digits numpy prints, as the notebook's first cell sets them."""
    (digits,) = re.findall(r"np\.set_printoptions\(precision=(\d+)", nb.cells[1].source)
    return int(digits)


def test_every_number_the_prose_says_a_demo_prints_is_what_it_prints(executed_source):
    # The demos run with the reference solutions filled in (the source notebook); CLAIMS says
    # where, and tests/demo_claims.py how close (the two roundings, or the prose's own ±).
    assignment, nb = executed_source
    prose, printed, precision = _prose(nb), _printed(nb), _print_precision(nb)
    assert CLAIMS[assignment]
    wrong = [w for claim in CLAIMS[assignment] for w in disagreements(claim, prose, printed, precision)]
    assert wrong == []


def test_each_block_a_check_cell_prints_names_its_function(executed_source):
    # ps2 to ps4 check the functions pasted from earlier sets in one cell, a block each.
    assignment, nb = executed_source
    for cell in nb.cells:
        names = re.findall(r"^check\(['\"](\w+)['\"]", cell.source, re.M) if cell.cell_type == "code" else []
        heads = [line.split(":")[0] for o in cell.get("outputs", []) if o.output_type == "stream"
                 for line in o.text.splitlines() if re.match(r"\w+: \d+/\d+ checks pass", line)]
        assert heads == names, (assignment, cell.id)


def test_no_notebook_leaves_positions_to_the_next_chapter():
    # ps4 teaches them (sinusoidal_positions, rope): "next chapter" names only what it does not.
    said = [sentence for a in ASSIGNMENT_NAMES for kind, _, body in build.parse_template(build.template_path(a)
            .read_text(encoding="utf-8")) if kind == "markdown"
            for sentence in re.split(r"(?<=[.:])\s", " ".join(build.markdown_text(body).split()))
            if "next chapter" in sentence]
    assert said and [s for s in said if "position" in s.lower() or "RoPE" in s] == []


def test_every_prediction_asked_is_followed_by_the_cell_that_answers_it():
    # "Predict:" (the library, the value, the temperature) and ps1's "Predict first." each
    # stand right above a demo cell the student runs after guessing.
    nbs = {a: nbformat.read(ROOT / "assignments" / a / f"{a}.ipynb", as_version=4) for a in ASSIGNMENT_NAMES}
    asked = [(a, nb.cells[i + 1]) for a, nb in nbs.items() for i, c in enumerate(nb.cells)
             if c.cell_type == "markdown" and re.search(r"\*\*Predict(:| first\.)\*\*", c.source)]
    assert len(asked) >= 4 and [(a, c.id) for a, c in asked if not _is_demo(c)] == []
