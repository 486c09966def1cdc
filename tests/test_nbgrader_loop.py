"""The instructor's loop on nbgrader's own machinery, and agreement with grade-batch.

generate_assignment → release_assignment → fetch / submit through an exchange folder →
collect → autograde (the notebooks' hidden cells call the engine) → generate_feedback →
export, then the same class through grade-batch.
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

ASSIGNMENT = "ps2"
DISHONEST = ("timeout", "crashed", "malformed")  # grades nbgrader cannot give right (see README)


def nbgrader(*args, cwd, user=None):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


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
    honest = sorted(s for s, a in roster.items() if not a[ASSIGNMENT].startswith(DISHONEST))
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
