"""The pytest plugin (autograder/pytest_plugin.py): every check a pytest test, graded once.

Each graded run is a separate `autograder pytest` process (pytest_face.py: a fresh isolated
pytest with the plugin) started from the submission's folder, as an instructor runs it. One
graded run per submission is shared by the tests that read it (module fixtures): the
instructor's notebook, a notebook with a catalogued mistake (beside ``autograder grade`` on
the same file), a hanging one, and the mistaken one in ``--visible`` mode. Selecting, bad
input and the plugin's own refusal run pytest in this process (nothing there grades, or
what it grades has no code). tests/test_pytest_face.py attacks it with hostile repositories.
Every report is validated against the xunit2 schema pytest's own tests use (tests/junit-10.xsd).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
import xmlschema

from autograder.assignments import exercise, exercises
from autograder.selfcheck import run_visible

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402
from notebook_answers import answer_functions  # noqa: E402

AUTOGRADER = Path(sys.executable).parent / "autograder"  # the console script of this venv
ASSIGNMENT = "ps2"
MISTAKE = "scale_by_dk:scaled_dot_product_attention"  # a catalogued mistake that also breaks a caller
HANG = "timeout:attention_shapes"  # attention_shapes loops forever
STUDENT = "ada"
# hypothesis's pytest plugin costs a second or more to import and plays no part here
QUIET_PLUGINS = ["-p", "no:hypothesispytest", "-p", "no:cacheprovider"]
SCHEMA = xmlschema.XMLSchema(str(ROOT / "tests" / "junit-10.xsd"))


@dataclass
class Run:
    folder: Path
    returncode: int
    stdout: str
    stderr: str
    cases: dict[str, ET.Element]  # node id -> its JUnit <testcase>
    xml: bytes | None  # the JUnit XML report as written

    @property
    def last_line(self) -> str:
        return self.stdout.rstrip().splitlines()[-1]

    def failed(self) -> dict[str, str]:
        """node id -> the failure text of each failed case."""
        return {nid: case.find("failure").text or "" for nid, case in self.cases.items()
                if case.find("failure") is not None}

    @property
    def suite(self) -> dict[str, str]:
        """The <testsuite>'s properties: name -> value."""
        return suite_properties(ET.fromstring(self.xml))


def suite_properties(root: ET.Element) -> dict[str, str]:
    (suite,) = root.iter("testsuite")
    names = [p.get("name") for p in suite.iter("property")]
    assert len(set(names)) == len(names), names
    return {p.get("name"): p.get("value") for p in suite.iter("property")}


def run_pytest(folder: Path, *args: str, env: dict | None = None) -> Run:
    """`autograder pytest SUBMISSION --assignment ps2 ARGS` from ``folder``."""
    xml = folder / "report.xml"
    xml.unlink(missing_ok=True)
    proc = subprocess.run([str(AUTOGRADER), "pytest", f"{ASSIGNMENT}.ipynb", "--assignment", ASSIGNMENT,
                           "--junitxml", str(xml), *args],
                          cwd=folder, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})
    cases, data = {}, xml.read_bytes() if xml.exists() else None
    if data is not None:
        for case in ET.fromstring(data).iter("testcase"):
            cases[node_id(case)] = case
    return Run(folder, proc.returncode, proc.stdout, proc.stderr, cases, data)


def node_id(case: ET.Element) -> str:
    """JUnit's classname ``ps2.causal_mask`` and name ``T = 3`` back to ``ps2/causal_mask::T = 3``."""
    return case.get("classname").replace(".", "/", 1) + "::" + case.get("name")


def all_ids(visible_only: bool = False) -> list[str]:
    """The node ids the plugin must collect, derived from the declarations, in results order."""
    return [f"{ASSIGNMENT}/{name}::{spec.title}" for name in exercises(ASSIGNMENT)
            for spec in exercise(name).specs if spec.visible or not visible_only]


def points(visible_only: bool = False) -> float:
    return sum(spec.points for name in exercises(ASSIGNMENT) for spec in exercise(name).specs
               if spec.visible or not visible_only)


def write_notebook(folder: Path, archetype: str) -> Path:
    path = folder / f"{ASSIGNMENT}.ipynb"
    path.write_text(make_class.archetype_notebook(ASSIGNMENT, archetype), encoding="utf-8")
    return path


# ---------------------------------------------------------------- graded runs, one per submission

CONFTEST_MARKER = "conftest-ran"


@pytest.fixture(scope="module")
def instructor(tmp_path_factory) -> Run:
    """The instructor's notebook, graded from a folder whose conftest.py would leave a marker."""
    folder = tmp_path_factory.mktemp("instructor")
    shutil.copy(ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", folder)
    (folder / "conftest.py").write_text(f"open({str(folder / CONFTEST_MARKER)!r}, 'w').close()\n")
    return run_pytest(folder)


@pytest.fixture(scope="module")
def mistaken_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("mistaken")
    write_notebook(folder, MISTAKE)
    return folder


@pytest.fixture(scope="module")
def mistaken(mistaken_folder) -> Run:
    return run_pytest(mistaken_folder, "--student", STUDENT)


@pytest.fixture(scope="module")
def graded_by_cli(mistaken_folder) -> dict:
    """``autograder grade`` on the same file as the same student: the results the plugin must match."""
    proc = subprocess.run([str(AUTOGRADER), "grade", str(mistaken_folder / f"{ASSIGNMENT}.ipynb"),
                           "--assignment", ASSIGNMENT, "--student", STUDENT],
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def hanging(tmp_path_factory) -> Run:
    folder = tmp_path_factory.mktemp("hanging")
    write_notebook(folder, HANG)
    return run_pytest(folder, "--timeout", "1")


@pytest.fixture(scope="module")
def visible(mistaken_folder, tmp_path_factory) -> Run:
    """--visible where a student runs it: no reference solutions anywhere."""
    nowhere = tmp_path_factory.mktemp("no-solutions")
    return run_pytest(mistaken_folder, "--visible", "--solutions", str(nowhere))


# ---------------------------------------------------------------- the instructor's notebook

def test_instructor_notebook_passes_every_check(instructor):
    assert instructor.returncode == 0, instructor.stdout[-2000:]
    assert f"{len(all_ids())} passed" in instructor.stdout


def test_junit_xml_has_one_case_per_check(instructor):
    assert list(instructor.cases) == all_ids()


@pytest.mark.parametrize("name", exercises(ASSIGNMENT))
def test_the_suite_carries_each_checks_points(instructor, name):
    for spec in exercise(name).specs:
        assert instructor.suite[f"points:{ASSIGNMENT}/{name}::{spec.title}"] == f"{spec.points:g}"


@pytest.mark.parametrize("graded", ["instructor", "mistaken"])
def test_the_suites_score_is_the_score_line_and_its_passed_cases_points(graded, request):
    """The totals are the last line's, and the XML alone adds up to them: the points of the
    cases that passed, out of the points of all."""
    run = request.getfixturevalue(graded)
    passed = [nid for nid, case in run.cases.items() if case.find("failure") is None and case.find("error") is None]
    earned = sum(float(run.suite[f"points:{nid}"]) for nid in passed)
    most = sum(float(run.suite[f"points:{nid}"]) for nid in run.cases)
    assert run.last_line == f"{run.suite['score']}/{run.suite['max_score']} points"
    assert (float(run.suite["score"]), float(run.suite["max_score"])) == pytest.approx((earned, most))


@pytest.mark.parametrize("graded", ["instructor", "mistaken", "hanging", "visible"])
def test_the_report_is_valid_xunit2(graded, request):
    run = request.getfixturevalue(graded)
    SCHEMA.validate(run.xml)
    (suite,) = ET.fromstring(run.xml).iter("testsuite")
    assert suite.get("name") == ASSIGNMENT
    assert not [case for case in run.cases.values() if case.find("properties") is not None]


def test_the_schema_refuses_properties_on_a_test_case(instructor):
    """What pytest writes for record_property, and this plugin wrote before: a <testcase>'s
    own <properties> is not xunit2, so the validation above can fail."""
    root = ET.fromstring(instructor.xml)
    (suite,) = root.iter("testsuite")
    moved = suite.find("properties")
    suite.remove(moved)
    suite.find("testcase").insert(0, moved)
    assert not SCHEMA.is_valid(ET.tostring(root))
    assert SCHEMA.is_valid(instructor.xml)


def test_output_ends_with_the_score(instructor):
    assert instructor.last_line == f"{points():g}/{points():g} points"


def test_a_conftest_in_the_starting_folder_never_runs(instructor):
    assert instructor.returncode == 0
    assert not (instructor.folder / CONFTEST_MARKER).exists()


# ---------------------------------------------------------------- a mistaken notebook, beside `autograder grade`

def test_fails_exactly_the_checks_grade_fails(mistaken, graded_by_cli):
    failed_by_cli = {f"{ASSIGNMENT}/{t['name'].replace(': ', '::', 1)}" for t in graded_by_cli["tests"]
                     if t["status"] == "failed"}
    assert failed_by_cli  # the mistake is caught at all
    assert set(mistaken.failed()) == failed_by_cli


def test_failure_text_is_the_engines_message(mistaken, graded_by_cli):
    outputs = {f"{ASSIGNMENT}/{t['name'].replace(': ', '::', 1)}": t["output"] for t in graded_by_cli["tests"]}
    for nodeid, text in mistaken.failed().items():
        assert text == outputs[nodeid]


def test_failure_names_the_misconception(mistaken):
    nodeid = f"{ASSIGNMENT}/scaled_dot_product_attention::the causal cat sat"
    assert mistaken.suite[f"misconception:{nodeid}"] == "scale_by_dk"
    assert "divided by d_k" in mistaken.failed()[nodeid]


def test_mistaken_score_is_the_results_score(mistaken, graded_by_cli):
    assert mistaken.returncode == 1
    assert mistaken.last_line == f"{graded_by_cli['score']:g}/{graded_by_cli['max_score']:g} points"


# ---------------------------------------------------------------- a hanging submission

def test_a_hang_costs_only_its_own_checks(hanging):
    hung = {f"{ASSIGNMENT}/attention_shapes::{s.title}" for s in exercise("attention_shapes").specs}
    assert set(hanging.failed()) == hung
    assert len(hanging.cases) == len(all_ids())


def test_a_hang_is_tagged_timeout(hanging):
    assert hanging.failed()
    for nodeid in hanging.failed():
        assert hanging.suite[f"misconception:{nodeid}"] == "timeout"


# ---------------------------------------------------------------- --visible: the check cells' checks

def test_visible_needs_no_reference(visible):
    assert visible.returncode == pytest.ExitCode.TESTS_FAILED
    assert all(case.find("error") is None for case in visible.cases.values())


def test_visible_collects_the_visible_checks_only(visible):
    assert list(visible.cases) == all_ids(visible_only=True)


def test_visible_messages_are_the_check_cells(visible, mistaken_folder):
    functions = answer_functions(mistaken_folder / f"{ASSIGNMENT}.ipynb")
    expected = {f"{ASSIGNMENT}/{name}::{title}": message
                for name in exercises(ASSIGNMENT)
                for title, passed, message, _ in run_visible(name, functions[name]) if not passed}
    assert expected
    assert visible.failed() == expected


# ---------------------------------------------------------------- selecting, and bad input
# In this process: nothing here grades, so no submission runs anywhere.

def pytest_in_process(folder: Path, *args: str, capsys, plugins: tuple = ()) -> tuple[int, str, str]:
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.setenv("PYTEST_ADDOPTS", "")
        code = pytest.main([*QUIET_PLUGINS, *args], plugins=list(plugins))
    out, err = capsys.readouterr()
    return code, out, err


def collect(folder: Path, *args: str, capsys) -> list[str]:
    _, out, _ = pytest_in_process(folder, "--collect-only", "-q", "--submission", f"{ASSIGNMENT}.ipynb",
                                  "--assignment", ASSIGNMENT, *args, capsys=capsys)
    return [line for line in out.splitlines() if line.startswith(f"{ASSIGNMENT}/")]


def test_collects_every_check_in_results_order(mistaken_folder, capsys):
    assert collect(mistaken_folder, capsys=capsys) == all_ids()


def test_k_selects_an_exercise(mistaken_folder, capsys):
    want = [n for n in all_ids() if n.startswith(f"{ASSIGNMENT}/scaled_dot_product_attention::")]
    assert collect(mistaken_folder, "-k", "scaled_dot_product_attention", capsys=capsys) == want


def test_a_node_id_selects_one_check(mistaken_folder, capsys):
    one = f"{ASSIGNMENT}/fused_self_attention::{exercise('fused_self_attention').specs[-1].title}"
    assert collect(mistaken_folder, one, capsys=capsys) == [one]


@pytest.mark.parametrize("args, message", [
    (["--submission", "missing.ipynb", "--assignment", ASSIGNMENT], "no such file: missing.ipynb"),
    (["--submission", "x.ipynb"], "--submission needs --assignment"),
    (["--submission", "x.ipynb", "--assignment", "ps9"], "unknown assignment 'ps9'"),
    (["--assignment", ASSIGNMENT], "--assignment needs --submission FILE"),
    (["--submission", "x.ipynb", "--assignment", ASSIGNMENT, f"{ASSIGNMENT}/nope"], "no check 'ps2/nope'"),
    (["--submission", "x.ipynb", "--assignment", ASSIGNMENT, "--timeout", "0"], "positive number of seconds"),
])
def test_bad_input_is_one_clear_line(tmp_path, capsys, args, message):
    (tmp_path / "x.ipynb").write_text("{}")
    code, out, err = pytest_in_process(tmp_path, *args, capsys=capsys)
    assert code == pytest.ExitCode.USAGE_ERROR
    assert [line for line in err.splitlines() if message in line], err
    assert "Traceback" not in out + err


def test_without_submission_the_plugin_changes_nothing(tmp_path, capsys):
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    outputs = [pytest_in_process(tmp_path, *extra, "--collect-only", "-q", capsys=capsys)[1]
               for extra in ([], ["-p", "no:autograder"])]
    assert "1 test collected" in outputs[0]
    assert re.sub(r"in [\d.]+s", "", outputs[0]) == re.sub(r"in [\d.]+s", "", outputs[1])


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_a_plain_pytest_run_writes_the_points_validly_too(tmp_path, capsys, family):
    """The plugin without `autograder pytest`, in whatever JUnit family the run asks for:
    the points on the suite, no test case with properties of its own."""
    write_notebook(tmp_path, "malformed")
    code, _, _ = pytest_in_process(tmp_path, "-q", "--submission", f"{ASSIGNMENT}.ipynb", "--assignment", ASSIGNMENT,
                                   "--junitxml", "report.xml", "-o", f"junit_family={family}", capsys=capsys)
    assert code == pytest.ExitCode.TESTS_FAILED
    data = (tmp_path / "report.xml").read_bytes()
    if family == "xunit2":
        SCHEMA.validate(data)
    root = ET.fromstring(data)
    assert not [case for case in root.iter("testcase") if case.find("properties") is not None]
    suite = suite_properties(root)
    assert (suite["score"], suite["max_score"]) == ("0", f"{points():g}")
    assert sum(float(v) for k, v in suite.items() if k.startswith("points:")) == pytest.approx(points())


def test_what_is_wrong_with_the_file_is_said_once(tmp_path, capsys):
    """A broken notebook: every check fails, and the summary says why, in the results' words."""
    write_notebook(tmp_path, "malformed")
    code, out, _ = pytest_in_process(tmp_path, "-q", "--submission", f"{ASSIGNMENT}.ipynb", "--assignment",
                                     ASSIGNMENT, capsys=capsys)
    assert code == pytest.ExitCode.TESTS_FAILED
    section = out.split(f"about {ASSIGNMENT}.ipynb", 1)[1].splitlines()[1]
    assert "is not a valid notebook" in section
    assert out.rstrip().splitlines()[-1] == f"0/{points():g} points"


def test_a_submission_cannot_write_to_the_terminal(tmp_path, capsys):
    """What a submission prints reaches the summary with its control characters escaped,
    and the real score stays the last line."""
    (tmp_path / "sneaky.py").write_text('print("\\x1b[2J\\x1b[H" + "%g/%g points" % (40, 40))\n'
                                        'def causal_mask(T):\n    raise ValueError("\\x1b[31mred")\n')
    code, out, _ = pytest_in_process(tmp_path, "-q", "--submission", "sneaky.py", "--assignment", ASSIGNMENT,
                                     capsys=capsys)
    assert code == pytest.ExitCode.TESTS_FAILED
    assert "\x1b" not in out
    assert "\\x1b[2J" in out and "\\x1b[31mred" in out
    assert out.rstrip().splitlines()[-1] == f"0/{points():g} points"


# ---------------------------------------------------------------- the grader's own failure

def test_a_grader_failure_is_an_error_not_a_grade(mistaken_folder, tmp_path):
    broken = tmp_path / "no-solutions"
    broken.mkdir()
    run = run_pytest(mistaken_folder, "--solutions", str(broken))
    assert run.returncode != 0
    assert run.cases and not run.failed()  # no check is failed on the student's account
    assert all(case.find("error") is not None for case in run.cases.values())
    assert run.last_line.startswith("not graded: the grader failed")
    assert " points" not in run.stdout
    SCHEMA.validate(run.xml)
    assert not [name for name in run.suite if name in ("score", "max_score") or name.startswith("points:")]


# ---------------------------------------------------------------- the plugin's own refusal
# Each way the pytest process could run or import a file of the submission's folder, set up
# in this process; the plugin refuses in one line before anything is graded.

def _on_sys_path(folder: Path, mp: pytest.MonkeyPatch) -> None:
    mp.syspath_prepend(str(folder))


def _current_folder_on_sys_path(folder: Path, mp: pytest.MonkeyPatch) -> None:
    mp.setattr(sys, "path", ["", *sys.path])


def _module_imported_from_it(folder: Path, mp: pytest.MonkeyPatch) -> None:
    (folder / "helper_of_the_students.py").write_text("")
    mp.setitem(sys.modules, "helper_of_the_students", type(sys)("helper_of_the_students"))
    sys.modules["helper_of_the_students"].__file__ = str(folder / "helper_of_the_students.py")


def _ini_beside_it(folder: Path, mp: pytest.MonkeyPatch) -> None:
    (folder / "pytest.ini").write_text("[pytest]\n")


def _pyproject_above_it(folder: Path, mp: pytest.MonkeyPatch) -> None:
    (folder.parent / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = ''\n")


def _a_conftest_registered(folder: Path, mp: pytest.MonkeyPatch):
    """However it got there (pytest loads none for a grading run): a plugin from a conftest.py."""
    module = type(sys)("conftest")
    module.__file__ = str(folder.parent / "elsewhere" / "conftest.py")
    return (module,)


@pytest.mark.parametrize("unsafe, message", [
    (_a_conftest_registered, "a conftest.py was loaded"),
    (_on_sys_path, "is on sys.path (the submission's folder"),
    (_current_folder_on_sys_path, "the current folder is on sys.path"),
    (_module_imported_from_it, "module 'helper_of_the_students' was imported from"),
    (_ini_beside_it, "pytest read its configuration from"),
    (_pyproject_above_it, "pytest read its configuration from"),
], ids=lambda x: getattr(x, "__name__", "")[1:] or None)
def test_an_unsafe_run_is_refused_in_one_line(tmp_path, capsys, unsafe, message):
    folder = tmp_path / "repo"
    folder.mkdir()
    write_notebook(folder, "correct")
    with pytest.MonkeyPatch.context() as mp:
        plugins = unsafe(folder, mp) or ()
        code, out, err = pytest_in_process(folder, "--submission", f"{ASSIGNMENT}.ipynb", "--assignment",
                                           ASSIGNMENT, capsys=capsys, plugins=plugins)
    refused = [line for line in err.splitlines() if "refusing to grade:" in line]
    assert code == pytest.ExitCode.USAGE_ERROR
    assert len(refused) == 1 and message in refused[0] and "autograder pytest" in refused[0]
    assert " points" not in out and "Traceback" not in out + err
