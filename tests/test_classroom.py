"""`autograder classroom`: the GitHub Classroom starter repository and what its workflow runs.

GitHub's runner cannot be had here, so its commands are run as the Python grader runs them
(classroom-resources/autograding-python-grader@v1, bin/run.sh): ``eval`` of the step's
``setup-command`` in sh, then ``python3`` (found on the PATH that command exported) running
``pytest.main(["-s", "--tb=no", <every *_test.py file>])``. The install the setup command
makes once per job is stood in for by a virtual environment whose ``python3`` is this one.
"""
from __future__ import annotations

import ast
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder import classroom, cli
from autograder.assignments import exercise, exercises
from autograder.selfcheck import run_visible

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402
from notebook_answers import answer_functions  # noqa: E402

ASSIGNMENT = "ps2"
PACKAGE = "attention-autograder @ git+https://example.org/course/attention-autograder@v0.1.0"
MISTAKE = "missing_mask:scaled_dot_product_attention"

# What the grader's reporter reads of each report (runner/__init__.py): the head line, and
# for a failure longrepr.reprtraceback and longrepr.reprcrash.
RUNNER = """
import json, sys
import pytest

class Recorder:
    def __init__(self):
        self.rows = []

    def pytest_runtest_logreport(self, report):
        if report.when != "call":
            return
        trace = str(report.longrepr.reprtraceback) if report.failed else ""
        crash = report.longrepr.reprcrash is not None if report.failed else None
        self.rows.append({"name": report.head_line, "outcome": report.outcome, "trace": trace, "crash": crash})

runs = []
for addopts in json.loads(sys.argv[1]):  # each step's PYTEST_ADDOPTS, or null for the runner's own
    if addopts is not None:
        import os
        os.environ["PYTEST_ADDOPTS"] = addopts
    recorder = Recorder()
    code = pytest.main(["-s", "--tb=no", "-p", "no:hypothesispytest", *sys.argv[2:]], plugins=[recorder])
    runs.append({"code": int(code), "rows": recorder.rows})
print("RUNS " + json.dumps(runs))
"""


def visible_specs() -> list[tuple[str, str, float]]:
    return [(name, s.title, s.points) for name in exercises(ASSIGNMENT) for s in exercise(name).specs if s.visible]


@pytest.fixture(scope="module")
def starter(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("starter") / "repo"
    assert cli.main(["classroom", ASSIGNMENT, "--out", str(out), "--package", PACKAGE]) == 0
    return out


@pytest.fixture(scope="module")
def workflow(starter) -> dict:
    return yaml.safe_load((starter / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def steps(workflow) -> list[dict]:
    return workflow["jobs"]["run-autograding-tests"]["steps"]


@pytest.fixture(scope="module")
def grader_steps(steps) -> list[dict]:
    return [s for s in steps if s.get("uses") == classroom.GRADER]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """$HOME as the first step leaves it: the grader installed (here: this interpreter)."""
    home = tmp_path_factory.mktemp("home")
    venv = home / "autograder-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".installed").touch()
    (home / "no-solutions").mkdir()
    python3 = venv / "bin" / "python3"
    python3.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    python3.chmod(0o755)
    return home


def step_environment(setup_commands: list[str], home: Path, cwd: Path) -> list[dict]:
    """PATH and PYTEST_ADDOPTS after each step's setup command, each evaluated as the grader
    does (``eval`` in sh), in one sh process."""
    script = "".join(f'( eval {shlex.quote(cmd)}; printf "%s\\0%s\\0" "$PATH" "$PYTEST_ADDOPTS" )\n'
                     for cmd in setup_commands)
    out = subprocess.run(["sh", "-c", script], cwd=cwd, capture_output=True, text=True, check=True, timeout=60,
                         env={"HOME": str(home), "PATH": os.environ["PATH"]}).stdout.split("\0")
    return [{"PATH": out[i], "PYTEST_ADDOPTS": out[i + 1]} for i in range(0, len(out) - 1, 2)]


def grader_test_files(starter: Path) -> list[str]:
    """What the grader's runner passes to pytest: every *_test.py under the repository."""
    return sorted(str(p.relative_to(starter)) for p in starter.rglob("*_test.py"))


def run_like_the_grader(starter: Path, home: Path, setup_command: str, addopts: list[str | None]) -> list[dict]:
    """eval ``setup_command`` in sh, then python3 from the PATH it exported runs pytest as the
    grader's runner does, once per entry of ``addopts`` (a step's PYTEST_ADDOPTS; None: as set)."""
    files = " ".join(shlex.quote(f) for f in grader_test_files(starter))
    script = f'eval "$SETUP_COMMAND"; exec python3 -c "$RUNNER" "$ADDOPTS" {files}'
    proc = subprocess.run(["sh", "-c", script], cwd=starter, capture_output=True, text=True, timeout=300,
                          env={"HOME": str(home), "PATH": os.environ["PATH"], "SETUP_COMMAND": setup_command,
                               "RUNNER": RUNNER, "ADDOPTS": json.dumps(addopts),
                               # a student's repository: no reference solutions anywhere
                               "AUTOGRADER_SOLUTIONS": str(home / "no-solutions")})
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RUNS ")), None)
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(line[5:])


def fill(starter: Path, archetype: str) -> None:
    (starter / f"{ASSIGNMENT}.ipynb").write_text(make_class.archetype_notebook(ASSIGNMENT, archetype),
                                                 encoding="utf-8")


# ---------------------------------------------------------------- the files

def test_starter_holds_the_released_notebook(starter):
    released = ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert (starter / f"{ASSIGNMENT}.ipynb").read_bytes() == released.read_bytes()


def test_readme_says_the_grade_comes_from_grade_batch(starter):
    text = (starter / "README.md").read_text(encoding="utf-8")
    assert "grade-batch" in text
    assert "not your grade" in text


# ---------------------------------------------------------------- the workflow

def test_workflow_is_a_github_workflow(workflow):
    assert set(workflow["on"]) >= {"push", "repository_dispatch"}  # a key "on", not YAML's True
    assert workflow["permissions"]["checks"] == "write"


def test_one_grader_step_per_visible_check_with_its_points(grader_steps):
    got = [(s["name"], s["with"]["max-score"]) for s in grader_steps]
    assert got == [(f"{name}: {title}", points) for name, title, points in visible_specs()]


def test_grader_steps_have_distinct_ids(grader_steps):
    ids = [s["id"] for s in grader_steps]
    assert len(set(ids)) == len(ids)


def test_the_reporter_reads_every_grader_step(steps, grader_steps):
    (reporter,) = [s for s in steps if s.get("uses") == classroom.REPORTER]
    assert steps[-1] is reporter
    ids = [s["id"] for s in grader_steps]
    assert reporter["with"]["runners"].split(",") == ids
    assert reporter["env"] == {f"{i.upper()}_RESULTS": f"${{{{steps.{i}.outputs.result}}}}" for i in ids}


def test_the_package_is_installed_as_given(grader_steps):
    for step in grader_steps:
        assert shlex.quote(PACKAGE) in step["with"]["setup-command"]


def test_each_step_selects_its_own_check_alone(starter, grader_steps, home):
    tree = ast.parse((starter / "checks" / f"{ASSIGNMENT}_test.py").read_text(encoding="utf-8"))
    calls = {f.name: [ast.literal_eval(a) for a in f.body[0].value.args[1:]]
             for f in tree.body if isinstance(f, ast.FunctionDef)}
    envs = step_environment([s["with"]["setup-command"] for s in grader_steps], home, starter)
    assert len(envs) == len(grader_steps)
    for (name, title, _), env in zip(visible_specs(), envs, strict=True):
        keyword = shlex.split(env["PYTEST_ADDOPTS"])[1]
        selected = [f for f in calls if keyword.lower() in f.lower()]  # -k: a case-insensitive substring
        assert len(selected) == 1
        assert calls[selected[0]] == [ASSIGNMENT, name, title]


# ---------------------------------------------------------------- its commands, run here

def test_every_step_passes_on_the_released_notebook_filled_in(starter, grader_steps, home):
    fill(starter, "correct")
    commands = [s["with"]["setup-command"] for s in grader_steps]
    envs = step_environment(commands, home, starter)
    runs = run_like_the_grader(starter, home, commands[0], [e["PYTEST_ADDOPTS"] for e in envs])
    assert [r["code"] for r in runs] == [0] * len(grader_steps)
    assert [[row["outcome"] for row in r["rows"]] for r in runs] == [["passed"]] * len(grader_steps)


def test_a_mistake_fails_with_the_check_cells_message(starter, grader_steps, home):
    """The grader's reporter shows a failure's trace: the check cell's message, word for word."""
    fill(starter, MISTAKE)
    functions = answer_functions(starter / f"{ASSIGNMENT}.ipynb")
    cells = {(name, title): (passed, message) for name in exercises(ASSIGNMENT)
             for title, passed, message, _ in run_visible(name, functions[name])}
    (run,) = run_like_the_grader(starter, home, grader_steps[0]["with"]["setup-command"], [""])
    by_function = {c.function: (c.exercise, c.title) for c in classroom.visible_checks(ASSIGNMENT)}
    assert run["code"] == pytest.ExitCode.TESTS_FAILED
    assert len(run["rows"]) == len(cells)
    for row in run["rows"]:
        passed, message = cells[by_function[row["name"]]]
        assert (row["outcome"], row["trace"]) == (("passed", "") if passed else ("failed", message))
        assert row["crash"] in ((None,) if passed else (True,))


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("args, message", [
    (["ps9"], "unknown assignment 'ps9'"),
    ([ASSIGNMENT, "--package", " "], "--package must be one pip requirement"),
    ([ASSIGNMENT, "--notebook", "missing.ipynb"], "cannot read the released notebook"),
])
def test_bad_input_is_one_clear_line(tmp_path, capsys, args, message):
    argv = ["classroom", *args, "--out", str(tmp_path / "repo")]
    if "--package" not in args:
        argv += ["--package", PACKAGE]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "repo").exists()


def test_an_existing_folder_is_left_alone(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main(["classroom", ASSIGNMENT, "--out", str(tmp_path), "--package", PACKAGE]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
