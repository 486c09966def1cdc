"""formgrader shows what ``grade-batch --gradebook`` graded, in an nbgrader course folder: the
sample class (a hang, a crash, a broken file among them) laid out as ``nbgrader collect`` lays
it out, one submission stamped before the due date and one after, graded by the grade-batch
command alone (no ``nbgrader autograde``), then read through nbgrader's NbGraderAPI, which
formgrader's REST handlers call, and ``nbgrader export``.
"""
import csv
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.results import from_json
from test_nbgrader_loop import ASSIGNMENT, ROOT, TIMEOUT, assert_timestamps_reach_the_gradebook, class_of, \
    formgrader_api, nbgrader, set_due_date, shared_config

sys.path.insert(0, str(ROOT / "examples"))
from make_class import make_class

pytestmark = pytest.mark.slow  # nbgrader's commands and a class graded: about a minute


@dataclass
class Course:
    folder: Path
    out: Path  # grade-batch's results
    kinds: dict[str, str]
    roster: dict[str, dict[str, str]]
    on_time: str
    late: str
    jupyter_config: Path


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Course:
    base = tmp_path_factory.mktemp("formgrader")
    course, exchange = base / "course", base / "exchange"
    course.mkdir(), exchange.mkdir()
    jupyter_config = shared_config(base / "etc-jupyter", exchange)
    shutil.copytree(ROOT / "source", course / "source")
    (course / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text()
                                               + "\nc.LateSubmissionPlugin.penalty_method = 'zero'\n")
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=course, jupyter_config=jupyter_config)
    roster = make_class(base / "sample", assignments=(ASSIGNMENT,), students=30, seed=0)
    kinds = class_of(roster)
    on_time, late = kinds["correct"], kinds["partial"]
    due = datetime.now(timezone.utc).replace(tzinfo=None)
    set_due_date(course, due)
    for student in sorted({kinds[k] for k in ("correct", "partial", "timeout", "crashed", "malformed", "scale_by_dk")}):
        shutil.copytree(base / "sample" / "submitted" / student, course / "submitted" / student)
    for student, when in ((on_time, due - timedelta(hours=1)), (late, due + timedelta(hours=1))):
        # as nbgrader submit writes it and collect copies it (the exchange itself: test_nbgrader_loop)
        stamp = when.replace(tzinfo=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f %Z")
        (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").write_text(stamp)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               JUPYTER_CONFIG_DIR=str(jupyter_config))
    done = subprocess.run([sys.executable, "-m", "autograder", "grade-batch", "submitted", "--assignment", ASSIGNMENT,
                           "--out", "out", "--timeout", str(TIMEOUT), "--gradebook", "sqlite:///gradebook.db"],
                          cwd=course, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    nbgrader("export", cwd=course, jupyter_config=jupyter_config)
    return Course(course, course / "out", kinds, roster, on_time, late, jupyter_config)


@pytest.fixture(scope="module")
def batch_points(graded) -> dict[str, float]:
    """Each student's total as grade-batch's results files give it."""
    return {p.stem: from_json(p.read_text()).score for p in graded.out.glob("*.json")}


@pytest.fixture(scope="module")
def api(graded):
    return formgrader_api(graded.folder, graded.jupyter_config)


def students(graded) -> list[str]:
    return sorted(p.name for p in (graded.folder / "submitted").iterdir())


def test_formgrader_shows_every_batch_graded_submission_autograded(graded, api, batch_points):
    shown = {s["student"]: (s["autograded"], s["needs_manual_grade"], s["score"])
             for s in api.get_submissions(ASSIGNMENT)}
    assert set(batch_points) == set(students(graded))
    assert shown == {s: (True, False, pytest.approx(batch_points[s], abs=1e-9)) for s in students(graded)}


def test_formgrader_opens_each_notebook_with_the_engines_points(graded, api, batch_points):
    for student in students(graded):
        (notebook,) = api.get_student_notebook_submissions(student, ASSIGNMENT)
        assert notebook["id"] is not None, student  # an autograded notebook on disk, not a placeholder
        assert notebook["score"] == pytest.approx(batch_points[student], abs=1e-9)


@pytest.mark.parametrize("kind", ["timeout", "crashed"])
def test_a_hung_or_crashed_exercise_costs_only_that_exercise(graded, api, kind):
    student = graded.kinds[kind]
    broken = graded.roster[student][ASSIGNMENT].split(":", 1)[1]
    (notebook,) = api.get_student_notebook_submissions(student, ASSIGNMENT)
    results = from_json((graded.out / f"{student}.json").read_text())
    assert results.exercise_scores()[broken] == 0
    assert 0 < notebook["score"] < notebook["max_score"]


def test_the_malformed_notebook_scores_zero_with_the_reason_in_its_comment(graded):
    from nbgrader.api import Gradebook

    student = graded.kinds["malformed"]
    with Gradebook(f"sqlite:///{graded.folder / 'gradebook.db'}") as gb:
        graded_nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        said = [c.auto_comment for c in graded_nb.comments if c.auto_comment]
        assert graded_nb.score == 0
    assert len(said) == 1 and "not a valid notebook" in said[0]


def test_the_autograded_notebook_shows_the_engines_report(graded):
    import nbformat

    student = graded.kinds["scale_by_dk"]
    nb = nbformat.read(graded.folder / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    reports = ["".join(c.outputs[0]["text"]) for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert reports and all(r.startswith("The grader's checks of ") for r in reports)


def test_submission_timestamps_reach_the_gradebook(graded):
    assert_timestamps_reach_the_gradebook(graded.folder, (graded.on_time, graded.late))


@pytest.mark.parametrize("which", ["on_time", "late"])
def test_nbgrader_late_penalty_applies_to_the_late_submission_only(graded, batch_points, which):
    student = getattr(graded, which)
    row = {r["student_id"]: r for r in csv.DictReader((graded.folder / "grades.csv").open())}[student]
    raw = batch_points[student]
    assert raw > 0
    penalty = raw if which == "late" else 0
    assert (float(row["raw_score"]), float(row["late_submission_penalty"]), float(row["score"])) == pytest.approx(
        (raw, penalty, raw - penalty), abs=1e-9)
