"""The instructor's loop on nbgrader's own machinery, and agreement with grade-batch.

generate_assignment → release_assignment → fetch / submit through an exchange folder →
collect → autograde (the grader's preprocessors write the engine's points) →
generate_feedback → export, then the same class through grade-batch. The class includes
hostile notebooks whose extra cell tries to make nbgrader's kernel produce the points.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.batch import grade_batch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from make_class import make_class  # noqa: E402

pytestmark = pytest.mark.slow  # nbgrader's whole loop on a class: minutes

ASSIGNMENT = "ps2"
DISHONEST = ("timeout", "crashed", "malformed")  # grades nbgrader cannot give right (see README)
FULL = {e: exercise_points(e) for e in ASSIGNMENTS[ASSIGNMENT]}
NONE = {e: 0 for e in ASSIGNMENTS[ASSIGNMENT]}

# Hostile notebooks: (the notebook handed in, one extra cell placed before every exercise,
# the engine's grade of it). When the graded cells computed their points in nbgrader's
# kernel (a hidden `score` call), (a) to (e) got 36/36 from it and (f) got 0/36.
HOSTILE = {
    # (a) the hidden cells called `score` after `check`: rebind both names, and drop the
    # graded cells' imports (which would bind them again) before they run.
    "zz_hostile_rebind_score": ("untouched", f"""
FULL = {FULL!r}
def check(exercise, func):
    pass
def score(assignment, exercise, notebook=None):
    return FULL[exercise]
get_ipython().input_transformers_post.append(
    lambda lines: [line for line in lines if not line.startswith("from autograder.")])
""", NONE),
    # (b) patch the modules the graded cells import, so any call returns full points.
    "zz_hostile_patch_module": ("untouched", f"""
import autograder.nbgrader_bridge, autograder.selfcheck
FULL = {FULL!r}
autograder.nbgrader_bridge.score = lambda assignment, exercise, notebook=None: FULL[exercise]
autograder.selfcheck.check = lambda exercise, func: FULL[exercise]
""", NONE),
    # (c) a fake autograder package in sys.modules: every later import gets it.
    "zz_hostile_fake_package": ("untouched", f"""
import sys, types
FULL = {FULL!r}
fake, bridge, selfcheck = (types.ModuleType(n) for n in
                           ("autograder", "autograder.nbgrader_bridge", "autograder.selfcheck"))
fake.__path__ = []
bridge.score = lambda assignment, exercise, notebook=None: FULL[exercise]
selfcheck.check = lambda exercise, func: FULL[exercise]
fake.nbgrader_bridge, fake.selfcheck = bridge, selfcheck
sys.modules.update({{m.__name__: m for m in (fake, bridge, selfcheck)}})
""", NONE),
    # (d) output mimicking the engine: every graded cell is rewritten, before it runs, into a
    # print of a perfect report and the full points as its value.
    "zz_hostile_fake_output": ("untouched", rf"""
FULL = {FULL!r}
def perfect_report(lines):
    for name, points in FULL.items():
        if f"check({{name!r}}" in "".join(lines):
            return [f"print('The grader\\'s checks of {{name}}: {{points}}/{{points}} points')\n", f"{{points!r}}\n"]
    return lines
get_ipython().input_transformers_post.append(perfect_report)
""", NONE),
    # (e) the old hidden call graded the notebook file in the kernel's folder: overwrite it
    # with a classmate's finished notebook, and keep the stubs' check from raising first.
    "zz_hostile_write_notebook": ("untouched", """
import os, autograder.selfcheck
if os.path.exists("{notebook}.ipynb"):
    with open("{notebook}.ipynb", "w") as f:
        f.write({correct!r})
autograder.selfcheck.check = lambda exercise, func: None
""", NONE),
    # (f) right answers, but every graded cell raises in the kernel: the kernel's error must
    # not cost the engine's points either.
    "zz_hostile_raise": ("correct", """
def raise_in_graded_cells(lines):
    return lines + ["\\nraise RuntimeError('the kernel raised')\\n"] if "check(" in "".join(lines) else lines
get_ipython().input_transformers_post.append(raise_in_graded_cells)
""", FULL),
}


def hostile_notebook(base: Path, cell: str) -> str:
    nb = json.loads(base.read_text())
    extra = {"cell_type": "code", "execution_count": None, "id": "hostile", "metadata": {}, "outputs": [],
             "source": cell.strip()}
    nb["cells"].insert(1, extra)  # after the title: it runs before any exercise
    return json.dumps(nb, indent=1)


def nbgrader(*args, cwd, user=None):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


# The kinds of notebook whose grade depends on what nbgrader does around the engine: right
# ones in two styles, output on stdout and on stderr (a kernel's stderr costs a cell its
# points in plain nbgrader), a partly done one, and mistakes the engine diagnoses. The engine's
# own grading of every archetype is the corpus's test; each notebook here costs a kernel.
KINDS = ("correct", "correct_einsum", "prints_a_lot", "runtime_warning", "partial", "scale_by_dk",
         "unstable_softmax", "weights_transposed")


def class_of(roster: dict[str, dict[str, str]]) -> list[str]:
    """The first student (by name) of each kind in KINDS, sorted."""
    first: dict[str, str] = {}
    for student, sets in sorted(roster.items()):
        kind = sets[ASSIGNMENT].split(":", 1)[0]
        if kind in KINDS and not kind.startswith(DISHONEST):
            first.setdefault(kind, student)
    assert set(first) == set(KINDS), f"the sample class lacks {set(KINDS) - set(first)}"
    return sorted(first.values())


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder with ps2 released, two students through the exchange, and the sample class."""
    base = tmp_path_factory.mktemp("nbgrader")
    course, exchange = base / "course", base / "exchange"
    course.mkdir()
    exchange.mkdir()
    shutil.copytree(ROOT / "source", course / "source")
    config = (ROOT / "nbgrader_config.py").read_text() + f"\nc.Exchange.root = {str(exchange)!r}\n"
    (course / "nbgrader_config.py").write_text(config)
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=course)
    nbgrader("release_assignment", ASSIGNMENT, "--force", cwd=course)

    sample = base / "sample"
    roster = make_class(sample, assignments=(ASSIGNMENT,), students=30, seed=0)
    honest = class_of(roster)
    through_exchange = honest[:2]
    for student in through_exchange:
        home = base / "home" / student
        home.mkdir(parents=True)
        nbgrader("fetch_assignment", ASSIGNMENT, "--course", "attention", f"--Exchange.root={exchange}", cwd=home)
        shutil.copy(sample / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", home / ASSIGNMENT)
        nbgrader("submit", ASSIGNMENT, "--course", "attention", f"--Exchange.root={exchange}",
                 f"--student={student}", cwd=home)
    nbgrader("collect", ASSIGNMENT, cwd=course)
    assert sorted(p.name for p in (course / "submitted").iterdir()) == through_exchange
    for student in honest[2:]:  # the rest arrive as nbgrader collect would lay them out
        shutil.copytree(sample / "submitted" / student, course / "submitted" / student)
    # One student hands back the released notebook untouched.
    stub = course / "submitted" / "zz_untouched" / ASSIGNMENT
    stub.mkdir(parents=True)
    shutil.copy(course / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", stub)
    correct = next(s for s in honest if roster[s][ASSIGNMENT] == "correct")
    bases = {"untouched": stub / f"{ASSIGNMENT}.ipynb",
             "correct": sample / "submitted" / correct / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"}
    for student, (base, cell, _) in HOSTILE.items():
        cell = cell.replace("{notebook}", ASSIGNMENT).replace("{correct!r}", repr(bases["correct"].read_text()))
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(hostile_notebook(bases[base], cell))
    nbgrader("autograde", ASSIGNMENT, cwd=course)
    nbgrader("generate_feedback", ASSIGNMENT, cwd=course)
    nbgrader("export", cwd=course)
    return course


def nbgrader_scores(course: Path) -> dict[str, dict[str, float]]:
    from nbgrader.api import Gradebook

    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # nbgrader runs alembic
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: {g.name: g.score for g in s.notebooks[0].grades if g.name in ASSIGNMENTS[ASSIGNMENT]}
                for s in gb.assignment_submissions(ASSIGNMENT)}


def test_collect_autograde_and_export_record_every_student(course):
    rows = list(csv.DictReader((course / "grades.csv").open()))
    assert len(rows) == len(list((course / "submitted").iterdir()))
    assert {r["student_id"]: float(r["score"]) for r in rows}["zz_untouched"] == 0


@pytest.mark.parametrize("student", HOSTILE)
def test_hostile_notebook_gets_the_engines_points_in_the_gradebook(course, student):
    assert nbgrader_scores(course)[student] == HOSTILE[student][2]


@pytest.mark.parametrize("student", HOSTILE)
def test_hostile_notebook_gets_the_engines_score_in_export(course, student):
    rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader((course / "grades.csv").open())}
    assert rows[student] == sum(HOSTILE[student][2].values())


def test_graded_cells_show_the_engines_report_not_the_kernels(course):
    # The kernel of zz_hostile_fake_output printed a perfect report in every graded cell.
    nb = json.loads((course / "autograded" / "zz_hostile_fake_output" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    graded = {c["metadata"]["nbgrader"]["grade_id"]: c["outputs"] for c in nb["cells"]
              if c["metadata"].get("nbgrader", {}).get("grade")}
    for name, outputs in graded.items():
        assert [o["output_type"] for o in outputs] == ["stream", "execute_result"]
        assert "".join(outputs[0]["text"]).startswith(f"The grader's checks of {name}: 0/{FULL[name]:g} points\n")
        assert "".join(outputs[1]["data"]["text/plain"]) == "0.0"


def test_autograde_runs_the_engine_around_the_kernel():
    # Without these two steps nbgrader would score the graded cells by what the kernel did.
    from traitlets.config.loader import PyFileConfigLoader

    steps = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config().Autograde.autograde_preprocessors
    names = [s.rsplit(".", 1)[-1] for s in steps]
    assert names.index("GradeWithEngine") < names.index("Execute")
    assert names.index("RecordEngineGrades") == names.index("SaveAutoGrades") - 1


def test_autograde_gives_partial_credit(course):
    scores = nbgrader_scores(course)
    partial = [s for s, by in scores.items() if 0 < sum(by.values()) < 36]
    assert partial


def test_nbgrader_and_grade_batch_agree_per_exercise(course, tmp_path):
    rows = grade_batch(course / "submitted", ASSIGNMENT, tmp_path / "batch", jobs=2, progress=False)
    batch = {r["student"]: {e: float(r["exercises"].get(e, 0)) for e in ASSIGNMENTS[ASSIGNMENT]} for r in rows}
    assert nbgrader_scores(course) == batch


def test_feedback_shows_no_hidden_test_and_no_reference_code(course):
    import importlib

    reference = importlib.import_module(f"solutions.{ASSIGNMENT}")
    answers = [line.strip() for name in ASSIGNMENTS[ASSIGNMENT]
               for line in __import__("inspect").getsource(getattr(reference, name)).splitlines()[3:]
               if len(line.strip()) > 30 and not line.strip().startswith(('"', "#"))]
    page = (course / "feedback" / "zz_untouched" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "HIDDEN TESTS" not in page and "nbgrader_bridge" not in page
    assert answers and [a for a in answers if a in page] == []


def test_grade_cells_carry_the_engines_points(course):
    nb = json.loads((course / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    points = {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]["points"]
              for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")}
    assert points == {e: exercise_points(e) for e in ASSIGNMENTS[ASSIGNMENT]}


# The grader failing (here its sandbox breaking protocol on every run, patched in by the
# course's config file, which nbgrader executes in its own process).
BROKEN_GRADER = '''
import autograder.sandbox
from autograder.errors import GraderError


def _broken_run(self, *args, **kwargs):
    raise GraderError("the sandbox failed (broken on purpose by the test)")


autograder.sandbox.Sandbox.run = _broken_run
'''


@pytest.fixture(scope="module")
def broken_grader(tmp_path_factory):
    """A course where one right notebook was autograded, then autograded again (--force)
    while the grader fails: returns the course folder and the second autograde."""
    course = tmp_path_factory.mktemp("broken") / "course"
    course.mkdir()
    shutil.copytree(ROOT / "source", course / "source")
    config = (ROOT / "nbgrader_config.py").read_text()
    (course / "nbgrader_config.py").write_text(config)
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=course)
    sample = course.parent / "sample"
    roster = make_class(sample, assignments=(ASSIGNMENT,), students=30, seed=0)
    correct = next(s for s, a in sorted(roster.items()) if a[ASSIGNMENT] == "correct")
    shutil.copytree(sample / "submitted" / correct, course / "submitted" / "zz_right")
    nbgrader("autograde", ASSIGNMENT, cwd=course)
    assert sum(nbgrader_scores(course)["zz_right"].values()) == sum(FULL.values())
    (course / "nbgrader_config.py").write_text(config + BROKEN_GRADER)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    failed = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"],
                            cwd=course, env=env, capture_output=True, text=True)
    return course, failed


def test_grader_failure_fails_the_autograde_loudly(broken_grader):
    _, failed = broken_grader
    assert failed.returncode != 0
    assert "the grader could not grade ps2 of 'zz_right'" in failed.stderr


def test_grader_failure_records_no_points_for_the_submission(broken_grader):
    # Not 0 (as if graded and wrong), and not the earlier run's points: no auto score at all.
    from nbgrader.api import Gradebook

    course, _ = broken_grader
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grades = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "zz_right").grades
        assert {g.name: g.auto_score for g in grades if g.name in FULL} == {e: None for e in FULL}
    assert not (course / "autograded" / "zz_right" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()
