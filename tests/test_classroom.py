"""`autograder classroom`: the GitHub Classroom starter repository and what its workflow runs.

GitHub's runner cannot be had here, so each step is run as the command grader runs it
(classroom-resources/autograding-command-grader@v1, src/main.js): ``setup-command`` and then
``command`` through ``execSync`` (``/bin/sh -c``) in the repository, with an environment of
PATH, HOME and three variables of its own, the step passing when the command exits 0. The
first step's install is real: the setup command makes the virtual environment under a fresh
$HOME and fills it with pip (this machine's configuration, as a runner's is GitHub's) from
this checkout's wheel as ``--package``, so the steps run in a student's environment: the
package without its course folder, no reference solutions.
"""
from __future__ import annotations

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
# The command grader's environment for both commands (main.js's `env`), besides PATH and HOME.
GRADER_ENV = {"FORCE_COLOR": "true", "DOTNET_CLI_HOME": "/tmp", "DOTNET_NOLOGO": "true"}


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
def wheel_starter(tmp_path_factory, built_wheel) -> Path:
    """The starter whose workflow installs this checkout's wheel: the one whose steps run here."""
    out = tmp_path_factory.mktemp("wheel-starter") / "repo"
    assert cli.main(["classroom", ASSIGNMENT, "--out", str(out), "--package", str(built_wheel)]) == 0
    return out


@pytest.fixture(scope="module")
def wheel_steps(wheel_starter) -> list[dict]:
    doc = yaml.safe_load((wheel_starter / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))
    return [s for s in doc["jobs"]["run-autograding-tests"]["steps"] if s.get("uses") == classroom.GRADER]


@pytest.fixture(scope="module")
def home(tmp_path_factory, wheel_starter, wheel_steps) -> Path:
    """$HOME as the first step's setup command leaves it: the grader installed."""
    home = tmp_path_factory.mktemp("home")
    proc = sh(wheel_steps[0]["with"]["setup-command"], wheel_starter, home)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (home / "autograder-venv" / ".installed").is_file()
    return home


def sh(command: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), **GRADER_ENV}
    return subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def run_step(step: dict, starter: Path, home: Path) -> subprocess.CompletedProcess:
    """The step as the command grader runs it: setup-command, then command, each in sh."""
    for key in ("setup-command", "command"):
        proc = sh(step["with"][key], starter, home)
        if proc.returncode != 0:
            break
    return proc


def fill(starter: Path, archetype: str) -> None:
    (starter / f"{ASSIGNMENT}.ipynb").write_text(make_class.archetype_notebook(ASSIGNMENT, archetype),
                                                 encoding="utf-8")


# ---------------------------------------------------------------- the files

def test_starter_holds_the_released_notebook(starter):
    released = ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert (starter / f"{ASSIGNMENT}.ipynb").read_bytes() == released.read_bytes()


def test_starter_holds_no_test_file(starter):
    """Nothing of the grader's runs from the repository: the workflow's command is all."""
    assert sorted(str(p.relative_to(starter)) for p in starter.rglob("*") if p.is_file()) == \
        [".github/workflows/classroom.yml", ".gitignore", "README.md", f"{ASSIGNMENT}.ipynb"]


def test_readme_says_the_grade_comes_from_grade_batch(starter):
    text = (starter / "README.md").read_text(encoding="utf-8")
    assert "grade-batch" in text
    assert "not your grade" in text
    assert f"autograder pytest {ASSIGNMENT}.ipynb --assignment {ASSIGNMENT} --visible" in text


# ---------------------------------------------------------------- the workflow

def test_workflow_is_a_github_workflow(workflow):
    assert set(workflow["on"]) >= {"push", "repository_dispatch"}  # a key "on", not YAML's True
    assert workflow["permissions"]["checks"] == "write"


def test_python_is_set_up_before_the_grader_steps(steps, grader_steps):
    (setup,) = [i for i, s in enumerate(steps) if s.get("uses") == classroom.SETUP_PYTHON]
    assert setup < steps.index(grader_steps[0])


def test_one_grader_step_per_visible_check_with_its_points(grader_steps):
    got = [(s["name"], s["with"]["test-name"], s["with"]["max-score"]) for s in grader_steps]
    assert got == [(f"{name}: {title}", f"{name}: {title}", points) for name, title, points in visible_specs()]


def test_grader_steps_have_distinct_ids(grader_steps):
    ids = [s["id"] for s in grader_steps]
    assert len(set(ids)) == len(ids)


def test_the_reporter_reads_every_grader_step(steps, grader_steps):
    (reporter,) = [s for s in steps if s.get("uses") == classroom.REPORTER]
    assert steps[-1] is reporter
    ids = [s["id"] for s in grader_steps]
    assert reporter["with"]["runners"].split(",") == ids
    assert reporter["env"] == {f"{i.upper()}_RESULTS": f"${{{{steps.{i}.outputs.result}}}}" for i in ids}


def test_the_install_is_what_the_checks_need_then_the_package_as_given_alone(grader_steps):
    """What grading imports and pytest, then the package with --no-deps: not the notebooks'
    pictures, nor any extra."""
    for step in grader_steps:
        parts = step["with"]["setup-command"].split("&&")
        needs, package = [shlex.split(part) for part in parts if " install " in part]
        assert needs[-len(classroom.RUNTIME) - 1:] == [*classroom.RUNTIME, classroom.PYTEST]
        assert package[-1] == PACKAGE and "--no-deps" in package


def test_every_step_runs_the_safe_command_for_its_own_check(grader_steps, home):
    """The command is `autograder pytest` with the launcher isolated (python -I -m), the
    notebook, --visible, and the node id of that step's check: nothing else, nothing of the
    repository's (a test file, a conftest, an ini) in between."""
    python = f"{home}/autograder-venv/bin/python"
    for step, (name, title, _) in zip(grader_steps, visible_specs(), strict=True):
        words = shlex.split(step["with"]["command"].replace("$HOME", str(home)))
        assert words == [python, "-I", "-m", "autograder", "pytest", f"{ASSIGNMENT}.ipynb", "--assignment",
                         ASSIGNMENT, "--visible", f"{ASSIGNMENT}/{name}::{title}"]


# ---------------------------------------------------------------- its commands, run here

def test_each_steps_node_id_selects_its_check_alone(starter, grader_steps, capsys):
    """Every step's node id, collected by the plugin (in this process: collecting grades
    nothing), is exactly one check: the one the step is named after. All in one collection
    with duplicates kept: a node id that selected another check too would add it, one that
    selected nothing would be an error, so the collected list is the steps' only when each
    selects its own check alone."""
    node_ids = [shlex.split(step["with"]["command"])[-1] for step in grader_steps]
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(starter)
        mp.setenv("PYTEST_ADDOPTS", "")
        code = pytest.main(["-p", "no:hypothesispytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                            "--keep-duplicates", "--submission", f"{ASSIGNMENT}.ipynb", "--assignment", ASSIGNMENT,
                            "--visible", *node_ids])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    assert [line for line in out.splitlines() if line.startswith(f"{ASSIGNMENT}/")] == node_ids


# A distribution's requirements, walked from some names, in the environment that runs this.
CLOSURE = """
import json, sys
from importlib.metadata import distributions, requires
from packaging.requirements import Requirement
seen, todo = set(), [Requirement(r) for r in sys.argv[1:]]
while todo:
    req = todo.pop()
    name = req.name.lower().replace("_", "-")
    if (req.marker is None or req.marker.evaluate({"extra": ""})) and name not in seen:
        seen.add(name)
        todo += [Requirement(r) for r in requires(req.name) or ()]
print(json.dumps(sorted(seen)))
print(json.dumps(sorted(d.metadata["Name"].lower().replace("_", "-") for d in distributions())))
"""


def test_the_install_holds_what_the_checks_need_and_the_package(wheel_starter, home):
    """Every distribution in the environment is the package, or what grading imports and
    pytest ask for; so no matplotlib and no PyYAML, which the package's metadata asks for."""
    python = home / "autograder-venv" / "bin" / "python"
    proc = subprocess.run([str(python), "-I", "-c", CLOSURE, *classroom.RUNTIME, classroom.PYTEST],
                          capture_output=True, text=True, timeout=60, check=True)
    needed, installed = (set(json.loads(line)) for line in proc.stdout.splitlines())
    assert installed == needed | {"attention-autograder"}
    assert {"numpy", "pytest"} <= installed and not {"matplotlib", "pyyaml"} & installed


def test_without_visible_a_students_install_says_what_to_do(wheel_starter, home):
    """The workflow's command without --visible, in the environment it made (no reference
    solutions): one line saying to add --visible, nothing graded."""
    python = home / "autograder-venv" / "bin" / "python"
    fill(wheel_starter, "correct")
    proc = sh(f'"{python}" -I -m autograder pytest {ASSIGNMENT}.ipynb --assignment {ASSIGNMENT}', wheel_starter, home)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "no reference solutions" in line and "add --visible" in line
    assert " points" not in proc.stdout and "passed" not in proc.stdout


def test_the_first_and_last_steps_pass_on_the_released_notebook_filled_in(wheel_starter, wheel_steps, home):
    """Two steps run end to end as the command grader runs them, in the environment the first
    step installed (each is one sandboxed grade; the node ids of all of them are checked above)."""
    fill(wheel_starter, "correct")
    for step in (wheel_steps[0], wheel_steps[-1]):
        proc = run_step(step, wheel_starter, home)
        assert proc.returncode == 0, step["name"] + "\n" + proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "1 passed" in proc.stdout


def test_a_mistake_fails_exactly_its_steps_with_the_check_cells_message(wheel_starter, wheel_steps, home):
    """The step of each check the check cell fails exits non-zero, the cell's message in its
    log; one step of a check the mistake passes exits 0."""
    fill(wheel_starter, MISTAKE)
    functions = answer_functions(wheel_starter / f"{ASSIGNMENT}.ipynb")
    cells = {f"{name}: {title}": (passed, message) for name in exercises(ASSIGNMENT)
             for title, passed, message, _ in run_visible(name, functions[name])}
    failing = [s for s in wheel_steps if not cells[s["with"]["test-name"]][0]]
    passing = [s for s in wheel_steps if cells[s["with"]["test-name"]][0]]
    assert failing and passing
    for step in [*failing, passing[0]]:
        passed, message = cells[step["with"]["test-name"]]
        proc = run_step(step, wheel_starter, home)
        assert (proc.returncode == 0) == passed, step["name"] + "\n" + proc.stdout[-2000:]
        if not passed:
            assert proc.returncode == pytest.ExitCode.TESTS_FAILED
            assert message.splitlines()[0] in proc.stdout


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
