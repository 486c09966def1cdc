"""On every face of the grader, a submission's code runs only inside a sandbox child.

The faces: `autograder grade`, `grade-batch`, Gradescope's run (as Gradescope runs it, without
CAP_SYS_ADMIN: the uid level), the pytest plugin, grade-batch on Dask workers, and
`nbgrader autograde` with this course's config. Each grades the same canary notebook: the
released ps1 with one cell appended that records where it runs (its uid and pid namespace),
tries to write a marker into a world-writable folder of the test's, and defines a right
`softmax`. Per face: the marker never appears, the canary's record says it ran in a process of
another uid or pid namespace than the grader's (so it did run, and not here), and the grade is
the engine's (the same file graded in this process's own sandbox: 5 points of softmax).
"""
import csv
import importlib
import inspect
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder import course
from autograder.gradescope.bundle import course_files

from autograder.grade import grade, hidden_paths
from autograder.sandbox import Sandbox

pytestmark = pytest.mark.slow  # nbgrader and a Dask cluster start: about a minute in all

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ASSIGNMENT = "ps1"
STUDENT = "canary"
EMAIL = "canary@example.edu"  # Gradescope's student: the upload's email
NO_SYS_ADMIN = ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", "--"]

CANARY = r'''
import json, os
record = {"uid": os.getuid(), "pid": os.getpid()}
try:
    record["pidns"] = os.stat("/proc/self/ns/pid").st_ino
except OSError:
    record["pidns"] = None
try:
    with open(MARKER, "w") as f:
        f.write(json.dumps(record))
    record["marker"] = "written"
except OSError as e:
    record["marker"] = type(e).__name__
print("CANARY " + json.dumps(record))
import numpy as np
'''


def canary_notebook(folder: Path, marker: Path) -> Path:
    reference = importlib.import_module(f"solutions.{ASSIGNMENT}")
    nb = json.loads((ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    source = CANARY.replace("MARKER", repr(str(marker))) + "\n" + inspect.getsource(reference.softmax)
    nb["cells"].append({"cell_type": "code", "execution_count": None, "id": "canary", "metadata": {},
                        "outputs": [], "source": source})
    path = folder / f"{ASSIGNMENT}.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    return path


def env() -> dict:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", AUTOGRADER_QUIET="1")


def run(cmd: list, cwd: Path, ok=(0,)) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env(), capture_output=True, text=True, timeout=600)
    assert done.returncode in ok, (done.stdout + done.stderr)[-3000:]
    return done


# ---------------------------------------------------------------- the faces: (points, what it showed)

def face_grade(canary: Path, work: Path) -> tuple[float, str]:
    results = work / "results.json"
    run([sys.executable, "-m", "autograder.cli", "grade", canary, "--assignment", ASSIGNMENT,
         "--student", STUDENT, "--results", results], work)
    doc = json.loads(results.read_text())
    return doc["score"], doc["output"]


def _class(canary: Path, work: Path) -> Path:
    folder = work / "class" / "submitted" / STUDENT / ASSIGNMENT
    folder.mkdir(parents=True)
    shutil.copy(canary, folder)
    return work / "class" / "submitted"


def _batch_results(out: Path) -> tuple[float, str]:
    (row,) = list(csv.DictReader((out / "grades.csv").open()))
    assert row["student"] == STUDENT
    return float(row["score"]), json.loads((out / f"{STUDENT}.json").read_text())["output"]


def face_grade_batch(canary: Path, work: Path) -> tuple[float, str]:
    run([sys.executable, "-m", "autograder.cli", "grade-batch", _class(canary, work), "--assignment", ASSIGNMENT,
         "--out", work / "out", "--jobs", "1"], work)
    return _batch_results(work / "out")


def face_gradescope(canary: Path, work: Path) -> tuple[float, str]:
    root = work / "gradescope-root"  # laid out as /autograder: source/ is the zip's course folder
    shutil.copytree(ROOT / "solutions", root / "source" / "solutions")
    for name, (data, _) in course_files(course.current()).items():
        (root / "source" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "source" / name).write_bytes(data)
    (root / "submission").mkdir(parents=True)
    shutil.copy(canary, root / "submission" / "My Homework.ipynb")
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": EMAIL}]}))
    run([*NO_SYS_ADMIN, sys.executable, "-m", "autograder.gradescope.run", "--root", root,
         "--assignment", ASSIGNMENT], work)
    doc = json.loads((root / "results" / "results.json").read_text())
    assert doc["extra_data"]["isolation"] == "uid"
    return doc["score"], doc["output"]


def face_pytest(canary: Path, work: Path) -> tuple[float, str]:
    done = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--submission", canary,
                "--assignment", ASSIGNMENT, "--student", STUDENT, "-q"], work, ok=(0, 1))  # 1: some checks fail
    (points,) = re.findall(r"^([\d.]+)/[\d.]+ points$", done.stdout, re.M)
    return float(points), done.stdout


def face_dask(canary: Path, work: Path) -> tuple[float, str]:
    from test_cluster import start_cluster

    submitted = _class(canary, work)
    cluster = start_cluster(work / "dask", workers=1)
    try:
        run([sys.executable, "-m", "autograder.cli", "grade-batch", submitted, "--assignment", ASSIGNMENT,
             "--out", work / "out", "--scheduler", cluster.address], work)
    finally:
        cluster.stop()
    return _batch_results(work / "out")


def face_nbgrader(canary: Path, work: Path) -> tuple[float, str]:
    course = work / "course"
    shutil.copytree(ROOT / "source", course / "source")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    run([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"], course)
    folder = course / "submitted" / STUDENT / ASSIGNMENT
    folder.mkdir(parents=True)
    shutil.copy(canary, folder)
    run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT], course)
    with sqlite3.connect(course / "gradebook.db") as con:  # not nbgrader.api: its import costs seconds
        (points,) = con.execute("SELECT sum(g.auto_score) FROM grade g "
                                "JOIN submitted_notebook n ON g.notebook_id = n.id "
                                "JOIN submitted_assignment a ON n.assignment_id = a.id WHERE a.student_id = ?",
                                (STUDENT,)).fetchone()
    nb = json.loads((course / "autograded" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    shown = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    return points, shown


FACES = {"grade": (face_grade, STUDENT), "grade-batch": (face_grade_batch, STUDENT),
         "gradescope": (face_gradescope, EMAIL), "pytest": (face_pytest, STUDENT),
         "dask": (face_dask, STUDENT), "nbgrader": (face_nbgrader, STUDENT)}


def own_pid_namespace() -> int:
    return os.stat("/proc/self/ns/pid").st_ino


@pytest.mark.parametrize("face", FACES)
def test_the_canarys_code_runs_only_in_a_sandbox_child(face, tmp_path):
    marked = Path(tempfile.mkdtemp(prefix="autograder-canary-"))  # under /tmp, which every uid may enter
    try:
        marked.chmod(0o777)  # writable by anyone: only the sandbox stands between the canary and it
        marker = marked / "canary-was-here"
        (tmp_path / "in").mkdir()
        canary = canary_notebook(tmp_path / "in", marker)
        runner, student = FACES[face]
        work = tmp_path / "work"
        work.mkdir()
        points, shown = runner(canary, work)
        assert not marker.exists(), f"the canary ran outside the sandbox: {marker.read_text()}"
        records = [json.loads(line) for line in re.findall(r"^CANARY (\{.*\})$", shown, re.M)]
        assert records, f"the {face} face shows no record of the canary: did it run?"
        for record in records:
            assert record["uid"] != os.getuid() or record["pidns"] not in (None, own_pid_namespace()), record
        with Sandbox(hide=hidden_paths(canary.parent)) as sandbox:
            engine = grade(canary, ASSIGNMENT, sandbox=sandbox, student=student)
        assert engine.exercise_scores()["softmax"] > 0  # the canary's softmax was graded: its cell ran
        assert points == pytest.approx(engine.score, abs=1e-9)
    finally:
        shutil.rmtree(marked, ignore_errors=True)
