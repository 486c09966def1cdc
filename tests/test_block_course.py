"""The second course, examples/block-course, graded from a copy outside the repository: proof
that the engine knows no chapter. Each grading runs in a process of its own (`autograder
--course COPY`), as an instructor's would: one course per process."""
from __future__ import annotations

import csv
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.catalogue import edit_function

ROOT = Path(__file__).resolve().parent.parent
BLOCK = ROOT / "examples" / "block-course"
FULL = 15  # the sum of the points block_course/exercises/*.py declare (checked below)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The course folder, copied where no ancestor holds the repository."""
    where = tmp_path_factory.mktemp("elsewhere") / "block-course"
    shutil.copytree(BLOCK, where, ignore=shutil.ignore_patterns("__pycache__"))
    return where


def catalogue(course: Path):
    """The copy's catalogue, read by path (this process grades for the attention course)."""
    spec = importlib.util.spec_from_file_location("_block_mistakes", course / "solutions" / "mistakes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MISTAKES


def autograder(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def graded(copy, tmp_path_factory) -> dict[str, dict]:
    """The right answer, every catalogued mistake as a student would hand it in, and the
    untouched released notebook, graded in one batch; results by student."""
    subs, out = tmp_path_factory.mktemp("block-subs"), tmp_path_factory.mktemp("block-out")
    answer = (copy / "solutions" / "block1.py").read_text()
    (subs / "right.py").write_text(answer)
    for mistake in catalogue(copy):
        (subs / f"{mistake.id}.py").write_text(edit_function(answer, mistake.func, mistake.edit))
    shutil.copy(copy / "assignments" / "block1" / "block1.ipynb", subs / "stub.ipynb")
    done = autograder("grade-batch", subs, "--assignment", "block1", "--out", out, "--course", copy,
                      cwd=tmp_path_factory.mktemp("anywhere"))
    assert done.returncode == 0, done.stderr
    with (out / "grades.csv").open() as f:
        assert {row["student"] for row in csv.DictReader(f)} == {p.stem for p in subs.iterdir()}
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def test_the_right_answer_gets_full_marks(graded):
    results = graded["right"]
    assert (results["score"], results["max_score"]) == (FULL, FULL), [t["output"] for t in results["tests"]]


@pytest.mark.parametrize("mistake", ["variance_unbiased", "eps_outside_sqrt", "normalised_wrong_axis",
                                     "gelu_cubic_dropped"])
def test_each_catalogued_mistake_loses_points_and_is_named(graded, mistake):
    results = graded[mistake]
    assert results["score"] < FULL
    named = [tag for t in results["tests"] if t["score"] < t["max_score"]
             for tag in t["tags"] if tag.startswith("misconception:")]
    # A check whose output this mistake makes degenerate (all zeros: one token over axis 0)
    # names nothing rather than guess; every check that names a mistake names this one.
    assert named and set(named) == {f"misconception:{mistake}"}, named


VISIBLE = """
import json, runpy, sys
from autograder.selfcheck import run_visible
func = runpy.run_path(sys.argv[1])[sys.argv[2]]
print(json.dumps([[title, ok, mistake] for title, ok, _, mistake in run_visible(sys.argv[2], func)]))
"""


@pytest.mark.parametrize("mistake", ["variance_unbiased", "eps_outside_sqrt", "normalised_wrong_axis",
                                     "gelu_cubic_dropped"])
def test_each_mistake_shows_in_a_visible_check(copy, tmp_path, mistake):
    """Before the deadline: the student's own check cells catch it, and name it."""
    answer = (copy / "solutions" / "block1.py").read_text()
    found = next(m for m in catalogue(copy) if m.id == mistake)
    (tmp_path / "sub.py").write_text(edit_function(answer, found.func, found.edit))
    done = subprocess.run([sys.executable, "-c", VISIBLE, str(tmp_path / "sub.py"), found.func], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin",
                                                                            "AUTOGRADER_COURSE": str(copy)})
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert any(not ok and named == mistake for _, ok, named in rows), rows


def test_the_untouched_notebook_gets_nothing_and_says_not_implemented(graded):
    results = graded["stub"]
    assert results["score"] == 0
    assert {tag for t in results["tests"] for tag in t["tags"] if tag.startswith("misconception:")} == {
        "misconception:not_implemented"}


def test_every_check_is_tagged_with_its_exercise(graded):
    for t in graded["right"]["tests"]:
        assert [tag for tag in t["tags"] if tag.startswith("exercise:")] in (["exercise:layer_norm"],
                                                                              ["exercise:gelu"])


def test_its_points_are_the_declared_ones(copy, tmp_path):
    code = ("from autograder import course; from autograder.assignments import exercise_points, exercises; "
            "print(sum(exercise_points(e) for e in exercises('block1')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "AUTOGRADER_COURSE": str(copy)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == FULL


def test_a_folder_that_is_not_a_course_is_one_line(tmp_path):
    done = autograder("grade", tmp_path / "x.py", "--assignment", "block1", "--course", tmp_path, cwd=tmp_path)
    assert done.returncode == 2
    assert "not a course folder" in done.stderr and done.stderr.count("\n") == 1


def test_the_pytest_face_grades_for_the_course_it_is_given(copy, tmp_path):
    """`autograder pytest --course DIR`: the fresh pytest it starts grades for that course."""
    (tmp_path / "right.py").write_text((copy / "solutions" / "block1.py").read_text())
    done = autograder("pytest", "right.py", "--assignment", "block1", "--course", copy, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().splitlines()[-1] == f"{FULL}/{FULL} points"
