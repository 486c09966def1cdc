"""A GitHub Classroom starter repository for one assignment (``autograder classroom``).

The workflow grades with the one command that is safe inside a student's repository,
``autograder pytest`` (pytest_face.py): a fresh isolated interpreter that reads nothing of
the repository but the notebook's bytes. So each visible check is one step of GitHub
Classroom's command grader (classroom-resources/autograding-command-grader@v1: a
JavaScript action on the runner itself, which runs ``setup-command`` and then ``command``
in ``sh`` with only PATH and HOME in the environment, and gives ``max-score`` when the
command exits 0), whose command is ``python -I -m autograder pytest NOTEBOOK --assignment A
--visible CHECK`` (the launcher isolated too): that check alone, its points the step's
``max-score``. The steps share one virtual environment under ``$HOME``, which the job keeps
between steps, so the grader is installed once, with only what the checks need
(``setup_command``); the Python it is made from is set up by actions/setup-python.

A student's repository cannot hold the hidden reference: these points are feedback, and the
grade comes from collecting the repositories and running ``grade-batch`` on them.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from .gradescope.bundle import PINS

GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
CHECKOUT = "actions/checkout@v4"
SETUP_PYTHON = "actions/setup-python@v5"
PYTHON = "3.11"
PYTEST = "pytest>=7"  # what `autograder pytest` runs; not a dependency of the grader's base install
# What grading imports beyond the standard library, for this Python: the Gradescope image's pins.
RUNTIME = PINS[PYTHON]
VENV = "$HOME/autograder-venv"  # the runner's $HOME: kept for the whole job
STEP_MINUTES = 10  # the grader's timeout input, in minutes (the first step installs the package)


class ClassroomError(Exception):
    """Bad input for the starter: said in one line, nothing written."""


@dataclass(frozen=True)
class VisibleCheck:
    exercise: str
    title: str
    points: int
    step: str  # the workflow step's id

    def node_id(self, assignment: str) -> str:
        """What selects this check alone in `autograder pytest`."""
        return f"{assignment}/{self.exercise}::{self.title}"


def visible_checks(assignment: str) -> list[VisibleCheck]:
    """The assignment's visible checks, in the order the notebook runs them."""
    from .assignments import exercise, exercises

    specs = [(name, s) for name in exercises(assignment) for s in exercise(name).specs if s.visible]
    width = len(str(len(specs)))  # equal widths: the step ids sort in the notebook's order
    out = []
    for n, (name, spec) in enumerate(specs, 1):
        if not float(spec.points).is_integer():
            raise ClassroomError(f"GitHub Classroom's grader takes whole points; {name}: {spec.title!r} is worth "
                                 f"{spec.points:g}")
        out.append(VisibleCheck(name, spec.title, int(spec.points), f"check{n:0{width}d}"))
    return out


def released_notebook(assignment: str) -> Path:
    from . import course

    return course.current().folder("assignments") / assignment / f"{assignment}.ipynb"


def write_starter(assignment: str, out: Path, package: str, notebook: Path | None = None) -> list[Path]:
    """Write the starter repository into ``out`` (new or empty); returns the files written."""
    from .assignments import ASSIGNMENTS

    if assignment not in ASSIGNMENTS:
        raise ClassroomError(f"unknown assignment {assignment!r}; choose one of {', '.join(ASSIGNMENTS)}")
    if not package.strip() or "\n" in package:
        raise ClassroomError("--package must be one pip requirement (a name, a wheel URL or name @ git+URL)")
    notebook = Path(notebook) if notebook else released_notebook(assignment)
    try:
        released = notebook.read_bytes()
        json.loads(released)
    except (OSError, ValueError) as e:
        raise ClassroomError(f"cannot read the released notebook {notebook}: {e}") from None
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ClassroomError(f"{out} exists and is not an empty folder; the starter goes into a new one")
    checks = visible_checks(assignment)
    files = {
        f"{assignment}.ipynb": released,
        ".github/workflows/classroom.yml": workflow(assignment, checks, package).encode(),
        "README.md": readme(assignment, checks).encode(),
        ".gitignore": b"__pycache__/\n.ipynb_checkpoints/\n",
    }
    written = []
    for name, data in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def setup_command(package: str) -> str:
    """Install the grader once per job into a virtual environment under $HOME, with only what
    the checks need: what grading imports (``RUNTIME``) and pytest (the pytest face's; a
    student's install of the grader does not bring it), then the package itself with
    ``--no-deps``: its other dependencies, the notebooks' pictures (matplotlib and what it brings)
    and this command's YAML, are never imported while grading. The environment is made
    without pip (ensurepip costs several times a check's grading) and filled by the runner's
    pip (``--python``); ``--no-compile``, since byte-compiling every module of numpy and pytest
    was most of the install, and the first check's grader writes the bytecode of what it
    imports for the steps after it. benchmarks/classroom_first_step.py measures it."""
    pip = f'python3 -m pip --python "{VENV}/bin/python" install --quiet --no-compile --disable-pip-version-check'
    needs = " ".join(shlex.quote(r) for r in (*RUNTIME, PYTEST))
    return (f'if [ ! -f "{VENV}/.installed" ]; then python3 -m venv --without-pip "{VENV}" '
            f'&& {pip} {needs} && {pip} --no-deps --no-warn-conflicts {shlex.quote(package)} '
            f'&& touch "{VENV}/.installed"; fi')


def command(assignment: str, check: VisibleCheck) -> str:
    """The safe command, for ``check`` alone: exit 0 exactly when it passed. Spelled
    ``python -I -m autograder`` so that the launcher too reads no PYTHON* variable, user site
    or current folder: a job's environment is not the operator's own."""
    words = ["pytest", f"{assignment}.ipynb", "--assignment", assignment, "--visible", check.node_id(assignment)]
    return f'"{VENV}/bin/python" -I -m autograder ' + " ".join(shlex.quote(w) for w in words)


def workflow(assignment: str, checks: list[VisibleCheck], package: str) -> str:
    """.github/workflows/classroom.yml. Written by PyYAML from data, so no title or package
    name can change its structure."""
    import yaml

    steps = [{"name": "Checkout code", "uses": CHECKOUT},
             {"name": "Set up Python", "uses": SETUP_PYTHON, "with": {"python-version": PYTHON}}]
    for c in checks:
        steps.append({"name": f"{c.exercise}: {c.title}", "id": c.step, "uses": GRADER,
                      "with": {"test-name": f"{c.exercise}: {c.title}", "setup-command": setup_command(package),
                               "command": command(assignment, c), "timeout": STEP_MINUTES, "max-score": c.points}})
    steps.append({"name": "Autograding Reporter", "uses": REPORTER,
                  "env": {f"{c.step.upper()}_RESULTS": f"${{{{steps.{c.step}.outputs.result}}}}" for c in checks},
                  "with": {"runners": ",".join(c.step for c in checks)}})
    doc = {
        "name": f"Autograding Tests ({assignment}, visible checks)",
        "on": ["push", "workflow_dispatch", "repository_dispatch"],
        "permissions": {"checks": "write", "actions": "read", "contents": "read"},
        "jobs": {"run-autograding-tests": {"runs-on": "ubuntu-latest",
                                           "if": "github.actor != 'github-classroom[bot]'", "steps": steps}},
    }
    head = (f"# GitHub Classroom autograding for {assignment}: one step per visible check, its points as max-score.\n"
            f"# Generated by `autograder classroom {assignment}`; regenerate rather than edit.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, width=10_000, allow_unicode=True)


def readme(assignment: str, checks: list[VisibleCheck]) -> str:
    points = sum(c.points for c in checks)
    return f"""# {assignment}

Fill in `{assignment}.ipynb`: replace each `raise NotImplementedError()` with your code, run the
check cell under each exercise, and commit and push the saved notebook.

## What happens when you push

GitHub Classroom runs the notebook's {len(checks)} visible checks ({points} points in all), the
same ones its check cells run, with the same messages; the Actions tab shows which passed.
Run them yourself before pushing (the grader installed, as for the notebook, and pytest:
`pip install pytest`), with the command each step of the workflow runs:

    autograder pytest {assignment}.ipynb --assignment {assignment} --visible

## These points are not your grade

Your repository holds no reference solution, so it can only run the checks whose answers
are worked examples. After the deadline your instructor collects every repository and grades
it with `autograder grade-batch`: the same visible checks, plus hidden checks on inputs drawn
for you. That grade, with feedback on each mistake, is the one that counts.

Do not edit `.github/`: it only shows you the visible checks, and your grade does not read it.
"""
