"""`autograder pytest` run inside a hostile student repository (autograder/pytest_face.py).

Each attack is a repository built here: the released ps1 notebook untouched (the engine
gives it 0) plus files and environment variables a student controls (a repository's own
files, and what a workflow file sets). The safe command runs with the repository as its
current folder and the JUnit report written into it, and must give exactly the engine's
result: every declared check run, the engine's score, no marker written by any code of
the student's (every planted module writes one when imported or run), and nothing left in
the repository but the report the operator asked for.

So that no attack here is a dead one, each is also run the unsafe way (``python -m pytest
--submission`` in the repository, the environment as set), where it must take effect (a
marker, or another count or score) or be refused by the plugin's own check. The two that
Python never reads anywhere (a ``.pth`` file outside a site folder) are kept, marked so.
"""
from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder.assignments import exercise, exercises

ROOT = Path(__file__).resolve().parent.parent
AUTOGRADER = Path(sys.executable).parent / "autograder"
ASSIGNMENT = "ps1"
STUB = ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"  # as released: every exercise a stub
CORRECT = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"  # the instructor's, every check passes
VICTIM = "the TA's file\n"  # outside the repository, where a link of the student's points
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"
MARKERS = "@MARKERS@"  # replaced by the markers' folder when the repository is built


def mark(tag: str) -> str:
    """What every planted module does first: leave a file named ``tag`` among the markers."""
    return f"open({MARKERS + '/' + tag!r}, 'w').close()\n"


def marking(tag: str, rest: str = "") -> str:
    return mark(tag) + rest


FAKE_PLUGIN = marking("fake-plugin", '''
def pytest_addoption(parser):
    for name in ("--submission", "--assignment", "--student", "--autograder-timeout", "--autograder-origin",
                 "--autograder-hide", "--autograder-unreadable"):
        parser.addoption(name, action="append")
    parser.addoption("--visible", action="store_true")

def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("37/37 points")
''')

CONFTEST = marking("conftest", '''
import pytest

def pytest_collection_modifyitems(items):
    items[:] = items[:1]

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
''')


@dataclass(frozen=True)
class Attack:
    name: str
    files: dict[str, str]  # path in the repository -> text (MARKERS: the markers' folder)
    env: dict[str, str] = field(default_factory=dict)  # "{repo}" is the repository
    submission: str = f"{ASSIGNMENT}.ipynb"
    links: dict[str, str] = field(default_factory=dict)  # path in the repository -> target ("{outside}/...")
    via_m: bool = False  # the unsafe way is `python -m pytest` (the current folder first on sys.path), not `pytest`
    live: bool = True  # False: it fails even the unsafe way (kept as a record of what is held, and why)


ATTACKS = [
    Attack("shadow-autograder", {"autograder/__init__.py": marking("autograder"),
                                 "autograder/pytest_plugin.py": FAKE_PLUGIN}, via_m=True),
    Attack("shadow-numpy", {"numpy.py": marking("numpy")}, via_m=True),
    Attack("shadow-pytest", {"pytest.py": marking("pytest")}, via_m=True),
    Attack("shadow-_pytest", {"_pytest/__init__.py": marking("_pytest")}, via_m=True),
    Attack("shadow-pluggy", {"pluggy/__init__.py": marking("pluggy")}, via_m=True),
    Attack("shadow-stdlib", {f"{m}.py": marking(m) for m in ("json", "tempfile", "hashlib", "shlex", "argparse")},
           via_m=True),
    # The plugin sets --noconftest itself for a grading run, so this one is held the unsafe way too.
    Attack("conftest", {"conftest.py": CONFTEST}, live=False),
    # A course of the student's own: a course.toml naming a package that runs their code. No face
    # that runs in a student's folder looks for a course there (course.current(from_cwd=False)).
    Attack("course-of-their-own", {"course.toml": 'name = "attention"\npackage = "their_course"\n',
                                   "their_course/__init__.py": marking("their-course", "EXERCISES = ()\n")},
           live=False),
    Attack("pytest.ini-deselects", {"pytest.ini": "[pytest]\naddopts = -k nothing\n"}),
    Attack("pytest.ini-disables-the-plugin", {"pytest.ini": "[pytest]\naddopts = -p no:autograder\n"}),
    Attack("pytest.ini-loads-a-plugin", {"pytest.ini": "[pytest]\npythonpath = .\naddopts = -p evil\n",
                                         "evil.py": FAKE_PLUGIN}),
    Attack("pyproject.toml", {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-k nothing"\n'}),
    Attack("tox.ini", {"tox.ini": "[pytest]\naddopts = -k nothing\n"}),
    Attack("setup.cfg", {"setup.cfg": "[tool:pytest]\naddopts = -k nothing\n"}),
    Attack(".pytest_cache", {".pytest_cache/v/cache/lastfailed": json.dumps(
        {f"{ASSIGNMENT}/softmax::{exercise('softmax').specs[0].title}": True}),
        ".pytest_cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n"},
        env={"PYTEST_ADDOPTS": "--lf"}),
    Attack("sitecustomize", {"sitecustomize.py": marking("sitecustomize"),
                             "usercustomize.py": marking("usercustomize")}, env={"PYTHONPATH": "{repo}"}),
    # A .pth file runs from a site folder only: the user's, which PYTHONUSERBASE names (read
    # by a system Python; a virtual environment reads no user site at all)...
    Attack("user-site-pth", {f".local/lib/{PY}/site-packages/evil.pth": "import os; " + mark("pth")},
           env={"PYTHONUSERBASE": "{repo}/.local"}, live=bool(site.ENABLE_USER_SITE)),
    # ...never from the repository, even on PYTHONPATH: held everywhere by Python itself.
    Attack("pth-in-the-repository", {"autograder.pth": "import os; " + mark("autograder-pth"),
                                     "evil.pth": "import os; " + mark("evil-pth")},
           env={"PYTHONPATH": "{repo}"}, live=False),
    Attack("PYTHONPATH", {"lib/autograder/__init__.py": marking("pythonpath-autograder"),
                          "lib/autograder/pytest_plugin.py": FAKE_PLUGIN}, env={"PYTHONPATH": "{repo}/lib"}),
    Attack("PYTEST_ADDOPTS", {}, env={"PYTEST_ADDOPTS": "-k nothing"}),
    Attack("PYTEST_PLUGINS", {"lib/evil.py": FAKE_PLUGIN}, env={"PYTEST_PLUGINS": "evil", "PYTHONPATH": "{repo}/lib"}),
    # The engine never follows a link in the file's own name, on any face: held the unsafe way too.
    Attack("submission-links-out", {}, links={f"{ASSIGNMENT}.ipynb": f"{{outside}}/{ASSIGNMENT}.ipynb"}, live=False),
    # Nor one in a folder below where pytest started (the plugin reads the file as grade-batch reads a class folder).
    Attack("folder-links-out", {}, submission=f"nb/{ASSIGNMENT}.ipynb", links={"nb": "{outside}"}, live=False),
    Attack("report-links-out", {}, links={"report.xml": "{outside}/victim.txt"}),
]


@dataclass
class Repo:
    path: Path
    markers: Path
    outside: Path  # a folder the student's links point into: the correct notebook, a victim file
    env: dict[str, str]
    submission: str

    def marked(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())

    def files(self) -> set[str]:
        return {str(p.relative_to(self.path)) for p in self.path.rglob("*")}


def build(attack: Attack, tmp_path: Path) -> Repo:
    repo, markers, outside = tmp_path / "repo", tmp_path / "markers", tmp_path / "outside"
    for folder in (repo, markers, outside):
        folder.mkdir()
    (outside / f"{ASSIGNMENT}.ipynb").write_bytes(CORRECT.read_bytes())
    (outside / "victim.txt").write_text(VICTIM)
    if not attack.links.get(f"{ASSIGNMENT}.ipynb") and attack.submission == f"{ASSIGNMENT}.ipynb":
        (repo / attack.submission).write_bytes(STUB.read_bytes())
    for name, text in attack.files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace(MARKERS, str(markers)))
    for name, target in attack.links.items():
        (repo / name).symlink_to(target.replace("{outside}", str(outside)))
    env = {k: v.replace("{repo}", str(repo)) for k, v in attack.env.items()}
    return Repo(repo, markers, outside, env, attack.submission)


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    cases: list[str]  # node ids of the JUnit report's test cases
    failed: int

    @property
    def last_line(self) -> str:
        lines = self.stdout.rstrip().splitlines()
        return lines[-1] if lines else ""


def read_report(path: Path) -> tuple[list[str], int]:
    if not path.is_file() or path.is_symlink():
        return [], 0
    cases = list(ET.parse(path).iter("testcase"))
    ids = [c.get("classname").replace(".", "/", 1) + "::" + c.get("name") for c in cases]
    return ids, sum(c.find("failure") is not None for c in cases)


def run(argv: list[str], repo: Repo) -> Outcome:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), **repo.env}
    proc = subprocess.run(argv, cwd=repo.path, env=env, capture_output=True, text=True, timeout=300)
    cases, failed = read_report(repo.path / "report.xml")
    return Outcome(proc.returncode, proc.stdout, proc.stderr, cases, failed)


def safely(repo: Repo) -> Outcome:
    """The safe command as the TA types it, or, where the environment sets a variable that
    every Python reads as it starts (PYTHONPATH, PYTHONUSERBASE: a CI job's environment, not
    the TA's), as the Classroom workflow spells it: the launcher isolated too."""
    launcher = [sys.executable, "-I", "-m", "autograder"] if any(k.startswith("PYTHON") for k in repo.env) \
        else [str(AUTOGRADER)]
    return run([*launcher, "pytest", repo.submission, "--assignment", ASSIGNMENT, "--junitxml", "report.xml"], repo)


def unsafely(repo: Repo, via_m: bool) -> Outcome:
    pytest_ = [sys.executable, "-m", "pytest"] if via_m else [str(Path(sys.executable).parent / "pytest")]
    return run([*pytest_, "--submission", repo.submission, "--assignment", ASSIGNMENT, "--junitxml", "report.xml"],
               repo)


def declared() -> list[str]:
    return [f"{ASSIGNMENT}/{name}::{spec.title}" for name in exercises(ASSIGNMENT) for spec in exercise(name).specs]


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> dict:
    """`autograder grade` on the stub, from a clean folder: the result every attack must get."""
    folder = tmp_path_factory.mktemp("clean")
    (folder / STUB.name).write_bytes(STUB.read_bytes())
    proc = subprocess.run([str(AUTOGRADER), "grade", STUB.name, "--assignment", ASSIGNMENT], cwd=folder,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(proc.stdout)


def test_the_stub_scores_nothing(engine):
    assert engine["score"] == 0 and len(engine["tests"]) == len(declared())


@pytest.mark.slow  # one sandboxed grade per attack, each in fresh processes
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_the_safe_command_gives_the_engines_result(attack, tmp_path, engine):
    repo = build(attack, tmp_path)
    before = repo.files()
    out = safely(repo)
    assert out.returncode == pytest.ExitCode.TESTS_FAILED, out.stdout[-2000:] + out.stderr[-2000:]
    assert out.cases == declared()  # every declared check ran, in order
    assert out.failed == sum(t["status"] == "failed" for t in engine["tests"])
    assert out.last_line == f"{engine['score']:g}/{engine['max_score']:g} points"
    assert repo.marked() == []  # no code of the student's ran outside the sandbox
    assert repo.files() - before - {"report.xml"} == set()  # nothing else written into the repository
    assert not (repo.path / "report.xml").is_symlink()  # a link there is replaced, never followed
    assert (repo.outside / "victim.txt").read_text() == VICTIM


@pytest.mark.slow
@pytest.mark.parametrize("attack", [a for a in ATTACKS if a.live], ids=lambda a: a.name)
def test_the_attack_works_the_unsafe_way(attack, tmp_path, engine):
    """Each attack is live: run as plain `python -m pytest` it runs the student's code, changes
    what is counted, or is refused by the plugin's own check (one line, no grade)."""
    repo = build(attack, tmp_path)
    out = unsafely(repo, attack.via_m)
    refused = [line for line in (out.stdout + out.stderr).splitlines() if "refusing to grade:" in line]
    honest = (out.cases == declared() and out.last_line == f"{engine['score']:g}/{engine['max_score']:g} points"
              and (repo.outside / "victim.txt").read_text() == VICTIM)
    assert refused or repo.marked() or not honest, out.stdout[-2000:] + out.stderr[-2000:]
    if refused:
        assert len(refused) == 1 and " points" not in out.stdout


@pytest.mark.slow
def test_a_folder_link_in_the_report_path_is_refused(tmp_path):
    """The report is written through no link below the starting folder: refused before grading."""
    repo = build(Attack("report-folder-links-out", {}, links={"out": "{outside}"}), tmp_path)
    proc = subprocess.run([str(AUTOGRADER), "pytest", repo.submission, "--assignment", ASSIGNMENT,
                           "--junitxml", "out/report.xml"], cwd=repo.path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "out is a symbolic link" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in repo.outside.iterdir()) == [f"{ASSIGNMENT}.ipynb", "victim.txt"]


@pytest.mark.parametrize("args, message", [
    (["missing.ipynb", "--assignment", ASSIGNMENT], "no such file: missing.ipynb"),
    ([f"{ASSIGNMENT}.ipynb", "--assignment", "ps9"], "unknown assignment 'ps9'"),
    ([f"{ASSIGNMENT}.ipynb", "--assignment", ASSIGNMENT, "tests/"], "'tests/' is not a check of ps1"),
])
def test_bad_input_is_one_clear_line(tmp_path, capsys, monkeypatch, args, message):
    """Said before anything is started: no pytest process, nothing graded."""
    from autograder import cli

    (tmp_path / f"{ASSIGNMENT}.ipynb").write_bytes(STUB.read_bytes())
    monkeypatch.chdir(tmp_path)
    assert cli.main(["pytest", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_without_pytest_installed_it_says_so(tmp_path, capsys, monkeypatch):
    """A student's install of the grader does not bring pytest."""
    import importlib.util

    from autograder import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pytest" else real(name, *a))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["pytest", "x.ipynb", "--assignment", ASSIGNMENT]) == 2
    assert capsys.readouterr().err == "autograder: autograder pytest needs pytest: pip install pytest\n"
