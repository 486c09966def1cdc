"""The instructor's loop on nbgrader's own machinery, and agreement with grade-batch.

generate_assignment → release_assignment → fetch / submit through an exchange folder →
collect → autograde (the grader's preprocessors: the engine's points, no kernel) →
generate_feedback → export, then the same class through grade-batch. The class includes
hostile notebooks: extra cells that tried to make nbgrader's kernel produce the points
(from when autograde still ran one), and cells that go for the gradebook, the answers,
the classmates' files and the world outside their folder. The gradebook's tables and the
files around the course are compared before and after autograde.
"""
import csv
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.batch import grade_batch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from make_class import make_class  # noqa: E402

pytestmark = pytest.mark.slow  # nbgrader's whole loop on a class: minutes

ASSIGNMENT = "ps2"
TIMEOUT = 3.0  # seconds per exercise, for nbgrader autograde and grade-batch alike: the hang waits it out
FULL = {e: exercise_points(e) for e in ASSIGNMENTS[ASSIGNMENT]}
NONE = {e: 0 for e in ASSIGNMENTS[ASSIGNMENT]}

# Hostile notebooks: (the notebook handed in, one extra cell placed before every exercise,
# the engine's grade of it). When the graded cells computed their points in nbgrader's
# kernel (a hidden `score` call), (a) to (e) got 36/36 from it and (f) got 0/36. Since
# autograde runs no kernel they run in the sandbox, where `get_ipython` does not exist and
# the modules they patch are not the grader's.
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


# Hostile cells that go for what lies around the notebook when nbgrader grades it. Each is
# appended as the notebook's last cell (its report is then the last thing the code prints),
# with {course!r}, {solutions!r}, {outside!r} and {classmate!r} replaced by absolute paths
# and a name (the worst case: the student knows the layout). Each tries every way in it
# knows and prints `REACHED [...]`: what it could write, read or delete. In nbgrader's kernel,
# as autograde ran every notebook until this design (see docs/nbgrader.md), (g)
# added its trigger, table and row, and every notebook autograded after it got full points,
# an untouched one too; (h) printed the instructor's solution cells into the autograded
# notebook; (i) deleted every submission (the rest of the autograde failed); (j) wrote its
# marker into the course, autograded/, the folders above, /tmp, /var/tmp, /dev/shm and /root.
# They use os and json alone where they can: the sandbox's allow-list may hold no other module,
# and an attack that fails on its import proves nothing.
FIND_COURSE = r'''
import json, os
reached = []
def places():
    here = os.getcwd()
    while True:  # walking up from where it runs
        yield here
        if os.path.dirname(here) == here:
            break
        here = os.path.dirname(here)
    yield {course!r}  # the course's absolute path
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        pids = []
    for pid in pids:  # where the grader's processes run
        try:
            yield os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            pass
'''
MARKER = "zz_hostile_was_here"
MARKER_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/root", os.path.expanduser("~"))  # outside the test's folder
LOOT = {
    # (g) the gradebook: a trigger that gives every grade full points, a table, a row.
    "zz_hostile_gradebook": ("untouched", FIND_COURSE + r'''
try:
    import sqlite3
except ImportError:  # then the file's bytes: a page header overwritten breaks the gradebook
    sqlite3 = None
for place in places():
    db = os.path.join(place, "gradebook.db")
    try:
        if not os.path.isfile(db):
            continue
        if sqlite3 is None:
            with open(db, "r+b") as f:
                f.seek(100)
                f.write(b"owned")
        else:
            con = sqlite3.connect(db)
            con.executescript("""
                CREATE TRIGGER full_marks AFTER UPDATE OF auto_score ON grade
                BEGIN UPDATE grade SET auto_score = (SELECT max_score FROM grade_cells WHERE id = NEW.cell_id)
                      WHERE id = NEW.id; END;
                CREATE TABLE owned (x); INSERT INTO owned VALUES (1);
                INSERT INTO student (id) VALUES ('zz_ghost');""")
            con.commit()
        reached.append("wrote " + db)
    except Exception:
        pass
print("REACHED", reached)
''', NONE),
    # (h) the answers: the instructor's source/ notebook and the grader's solutions, printed
    # and run as the submission's own code.
    "zz_hostile_answers": ("untouched", FIND_COURSE + r'''
for path in [os.path.join(p, "source", "ps2", "ps2.ipynb") for p in places()] + [{solutions!r}]:
    try:
        text = open(path).read()
    except Exception:
        continue
    reached.append("read " + path)
    cells = json.loads(text)["cells"] if path.endswith(".ipynb") else [{"cell_type": "code", "source": text}]
    for c in cells:
        if c["cell_type"] == "code" and ("BEGIN SOLUTION" in "".join(c["source"]) or path.endswith(".py")):
            print("".join(c["source"])[:300])
            try:
                exec("".join(c["source"]), globals())
            except Exception:
                pass
print("REACHED", reached)
''', NONE),
    # (i) the classmates: read a right notebook and run its answers, then delete submissions.
    "zz_hostile_classmates": ("untouched", FIND_COURSE + r'''
for place in places():
    theirs = os.path.join(place, "submitted", {classmate!r}, "ps2", "ps2.ipynb")
    try:
        cells = json.load(open(theirs))["cells"]
    except Exception:
        continue
    reached.append("read " + theirs)
    for c in cells:
        if c["cell_type"] == "code" and "check(" not in "".join(c["source"]):
            try:
                exec("".join(c["source"]), globals())
            except Exception:
                pass
    for folder, _, files in os.walk(os.path.join(place, "submitted"), topdown=False):
        for victim in [os.path.join(folder, f) for f in files] + [folder]:
            try:
                os.remove(victim) if victim != folder else os.rmdir(victim)
                reached.append("deleted " + victim)
            except Exception:
                pass
print("REACHED", reached)
''', NONE),
    # (j) writing outside its folder, on right answers (whose points it must not cost): the
    # course and every folder above where it runs, the test's own folder, /tmp, the homes.
    "zz_hostile_writes_outside": ("correct", FIND_COURSE + r'''
own = os.path.realpath(os.getcwd())
for place in [*places(), {outside!r}, *MARKER_FOLDERS]:
    marker = os.path.join(place, "zz_hostile_was_here")
    if os.path.realpath(place) == own:
        continue  # its own folder is its own
    try:
        with open(marker, "w") as f:
            f.write("owned")
        reached.append("wrote " + marker)
    except Exception:
        pass
print("REACHED", reached)
'''.replace("*MARKER_FOLDERS", ", ".join(map(repr, MARKER_FOLDERS))), FULL),
}
REACHED_NOTHING = "REACHED []"  # what each LOOT cell must print: it reached nothing


def hostile_notebook(base: Path, cell: str, last: bool = False) -> str:
    nb = json.loads(base.read_text())
    extra = {"cell_type": "code", "execution_count": None, "id": "hostile", "metadata": {}, "outputs": [],
             "source": cell.strip()}
    nb["cells"].insert(len(nb["cells"]) if last else 1, extra)  # 1: after the title, before any exercise
    return json.dumps(nb, indent=1)


def nbgrader(*args, cwd, jupyter_config: Path | None = None):
    """Run nbgrader as a user would; ``jupyter_config``: the folder of the configuration every
    user reads (as /etc/jupyter is on a shared machine), which names the exchange."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if jupyter_config is not None:
        env["JUPYTER_CONFIG_DIR"] = str(jupyter_config)
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def shared_config(folder: Path, exchange: Path) -> Path:
    """The one file that names the exchange for instructor and students alike (docs/nbgrader.md)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(f"c = get_config()  # noqa: F821\nc.Exchange.root = {str(exchange)!r}\n")
    return folder


def formgrader_api(course: Path, jupyter_config: Path):
    """nbgrader's NbGraderAPI for the course, configured as formgrader configures it (the
    course's nbgrader_config.py over the shared one): what formgrader's REST handlers call."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # nbgrader runs alembic
    config = PyFileConfigLoader("nbgrader_config.py", path=str(jupyter_config)).load_config()
    config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())
    return NbGraderAPI(coursedir=CourseDirectory(config=config, root=str(course)), config=config)


def set_due_date(course: Path, due: datetime) -> None:
    """The assignment's due date (naive UTC, as nbgrader keeps it), with nbgrader's own API."""
    from nbgrader.api import Gradebook

    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # nbgrader runs alembic
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)


# The kinds of notebook whose grade depends on what nbgrader does around the engine: right
# ones in two styles, output on stdout and on stderr (a kernel's stderr costs a cell its
# points in plain nbgrader), a partly done one, and mistakes the engine diagnoses. The engine's
# own grading of every archetype is the corpus's test; each notebook here costs a kernel.
# A hung and a crashed exercise, and a broken file, too: only the exercise loses its points, the
# broken file scores 0 with the reason in its comment (not "needs autograding" forever).
KINDS = ("correct", "correct_einsum", "prints_a_lot", "runtime_warning", "partial", "scale_by_dk",
         "unstable_softmax", "weights_transposed", "timeout", "crashed", "malformed")


def class_of(roster: dict[str, dict[str, str]]) -> dict[str, str]:
    """The first student (by name) of each kind in KINDS: kind -> student."""
    first: dict[str, str] = {}
    for student, sets in sorted(roster.items()):
        kind = sets[ASSIGNMENT].split(":", 1)[0]
        if kind in KINDS:
            first.setdefault(kind, student)
    assert set(first) == set(KINDS), f"the sample class lacks {set(KINDS) - set(first)}"
    return first


# What nbgrader itself writes in the course during autograde; every other file there, and
# in the folders around it (the exchange, the students' homes, the test's own), must come out
# of autograde byte for byte as it went in.
NBGRADER_WRITES = ("course/autograded/", "course/gradebook.db", "course/.nbgrader.log")
# The gradebook's tables autograde writes (students, their submissions, grades, comments):
# checked row by row against what the engine's points make them. Every other table, and
# sqlite_master (tables, indexes, triggers, views), must be as before autograde.
WRITTEN_TABLES = ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")
OUTSIDE_MARKERS = [Path(p) / MARKER for p in MARKER_FOLDERS]


def tree(base: Path) -> dict[str, str]:
    """Every file and link under ``base`` (but what nbgrader writes) and its sha256."""
    out = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base).as_posix()
        if rel.startswith(NBGRADER_WRITES) or path.is_dir() and not path.is_symlink():
            continue
        out[rel] = ("link:" + os.readlink(path)) if path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def dump(db: Path) -> dict[str, list[dict]]:
    """Every table's rows (as dicts, in a fixed order) and sqlite_master, read-only."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        con.row_factory = sqlite3.Row
        out = {"sqlite_master": sorted((dict(r) for r in con.execute("SELECT * FROM sqlite_master")), key=repr)}
        for t in [r["name"] for r in out["sqlite_master"] if r["type"] == "table"]:
            out[t] = sorted((dict(r) for r in con.execute(f'SELECT * FROM "{t}"')), key=repr)
        return out
    finally:
        con.close()


@dataclass
class Loop:
    course: Path
    tree_before: dict[str, str]  # before autograde
    tree_after: dict[str, str]  # right after autograde
    db_before: dict[str, list[dict]]
    db_after: dict[str, list[dict]]
    students: list[str]  # submitted/ when autograde started
    kinds: dict[str, str]  # kind (KINDS) -> the student handing in that kind
    roster: dict[str, dict[str, str]]  # the sample class: student -> set -> what they hand in
    on_time: str  # submitted through the exchange before the due date
    late: str  # submitted through the exchange after it
    jupyter_config: Path  # the configuration every user reads


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """A course folder with ps2 released, two students through the exchange (one on time, one
    late), the sample class and the hostile notebooks, autograded (its files and gradebook read
    before and after), then feedback and export."""
    base = tmp_path_factory.mktemp("nbgrader")
    course, exchange, outside = base / "course", base / "exchange", base / "outside"
    for folder in (course, exchange, outside):
        folder.mkdir()
    jupyter_config = shared_config(base / "etc-jupyter", exchange)
    shutil.copytree(ROOT / "source", course / "source")
    config = (ROOT / "nbgrader_config.py").read_text() + (
        f"\nc.GradeWithEngine.timeout = {TIMEOUT}\n"
        "c.LateSubmissionPlugin.penalty_method = 'zero'  # a late submission scores 0: its penalty is its score\n")
    (course / "nbgrader_config.py").write_text(config)
    nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=course, jupyter_config=jupyter_config)
    nbgrader("release_assignment", ASSIGNMENT, "--force", cwd=course, jupyter_config=jupyter_config)

    sample = base / "sample"
    roster = make_class(sample, assignments=(ASSIGNMENT,), students=30, seed=0)
    kinds = class_of(roster)
    on_time, late = kinds["correct"], kinds["partial"]
    for student in (on_time, late):
        if student == late:  # due between the two submissions
            set_due_date(course, datetime.now(timezone.utc).replace(tzinfo=None))
            time.sleep(1.1)  # nbgrader's timestamps have microseconds; a second apart is unambiguous
        home = base / "home" / student
        home.mkdir(parents=True)
        nbgrader("fetch_assignment", ASSIGNMENT, "--course", "attention", cwd=home, jupyter_config=jupyter_config)
        shutil.copy(sample / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", home / ASSIGNMENT)
        nbgrader("submit", ASSIGNMENT, "--course", "attention", f"--student={student}", cwd=home,
                 jupyter_config=jupyter_config)
    nbgrader("collect", ASSIGNMENT, cwd=course, jupyter_config=jupyter_config)
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted((on_time, late))
    for student in sorted(set(kinds.values()) - {on_time, late}):  # as nbgrader collect would lay them out
        shutil.copytree(sample / "submitted" / student, course / "submitted" / student)
    # One student hands back the released notebook untouched.
    stub = course / "submitted" / "zz_untouched" / ASSIGNMENT
    stub.mkdir(parents=True)
    shutil.copy(course / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", stub)
    correct = kinds["correct"]
    bases = {"untouched": stub / f"{ASSIGNMENT}.ipynb",
             "correct": sample / "submitted" / correct / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"}
    fill = {"{notebook}": ASSIGNMENT, "{correct!r}": repr(bases["correct"].read_text()),
            "{course!r}": repr(str(course)), "{solutions!r}": repr(str(ROOT / "solutions" / f"{ASSIGNMENT}.py")),
            "{outside!r}": repr(str(outside)), "{classmate!r}": repr(correct)}
    for student, (kind, cell, _) in {**HOSTILE, **LOOT}.items():
        for key, value in fill.items():
            cell = cell.replace(key, value)
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(hostile_notebook(bases[kind], cell, last=student in LOOT))
    for marker in OUTSIDE_MARKERS:  # a leftover of an earlier run would fail this one
        marker.unlink(missing_ok=True)
    before, db_before = tree(base), dump(course / "gradebook.db")
    students = sorted(p.name for p in (course / "submitted").iterdir())
    nbgrader("autograde", ASSIGNMENT, cwd=course, jupyter_config=jupyter_config)
    after, db_after = tree(base), dump(course / "gradebook.db")
    nbgrader("generate_feedback", ASSIGNMENT, cwd=course, jupyter_config=jupyter_config)
    nbgrader("export", cwd=course, jupyter_config=jupyter_config)
    return Loop(course, before, after, db_before, db_after, students, kinds, roster, on_time, late, jupyter_config)


@pytest.fixture(scope="module")
def course(loop) -> Path:
    return loop.course


@pytest.fixture(scope="module")
def engine_points(course, tmp_path_factory) -> dict[str, dict[str, float]]:
    """Each student's points per exercise from grade-batch: the engine alone."""
    rows = grade_batch(course / "submitted", ASSIGNMENT, tmp_path_factory.mktemp("batch") / "out", jobs=2,
                       timeout=TIMEOUT, progress=False)
    return {r["student"]: {e: float(r["exercises"].get(e, 0)) for e in ASSIGNMENTS[ASSIGNMENT]} for r in rows}


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


@pytest.mark.parametrize("student", [*HOSTILE, *LOOT])
def test_hostile_notebook_gets_the_engines_points_in_the_gradebook(course, student):
    assert nbgrader_scores(course)[student] == {**HOSTILE, **LOOT}[student][2]


@pytest.mark.parametrize("student", [*HOSTILE, *LOOT])
def test_hostile_notebook_gets_the_engines_score_in_export(course, student):
    rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader((course / "grades.csv").open())}
    assert rows[student] == sum({**HOSTILE, **LOOT}[student][2].values())


@pytest.mark.parametrize("student", ["zz_hostile_gradebook", "zz_hostile_answers", "zz_hostile_classmates"])
def test_hostile_cell_ran_in_the_sandbox_and_reached_nothing(course, student):
    # Its report is what the sandbox captured of the notebook's printing, shown in the first
    # graded cell: proof that the cell ran, and of what it found from where it ran.
    nb = json.loads((course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    shown = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "REACHED [" in shown
    assert REACHED_NOTHING in shown, shown[shown.index("REACHED ["):][:500]


def test_autograde_changes_no_file_but_what_nbgrader_writes(loop):
    changed = {p for p in loop.tree_before.keys() | loop.tree_after.keys()
               if loop.tree_before.get(p) != loop.tree_after.get(p)}
    assert changed == set()
    assert [str(m) for m in OUTSIDE_MARKERS if m.exists()] == []


def test_autograde_leaves_the_gradebooks_schema_as_it_was(loop):
    # sqlite_master: every table, index, trigger and view, with its SQL.
    assert loop.db_after["sqlite_master"] == loop.db_before["sqlite_master"]


def test_autograde_writes_only_the_tables_it_owns(loop):
    assert set(loop.db_after) == set(loop.db_before)
    for table in set(loop.db_before) - set(WRITTEN_TABLES) - {"sqlite_master"}:
        assert loop.db_after[table] == loop.db_before[table], table


def test_the_gradebooks_rows_are_what_the_engines_points_make_them(loop, engine_points):
    before, after, course = loop.db_before, loop.db_after, loop.course
    assert set(engine_points) == set(loop.students)
    (assignment,) = [a["id"] for a in before["assignment"] if a["name"] == ASSIGNMENT]
    (notebook,) = [n["id"] for n in before["notebook"] if n["assignment_id"] == assignment]
    cells = {c["id"]: c for c in before["base_cell"] if c["notebook_id"] == notebook}
    graded = {i: c["name"] for i, c in cells.items() if c["type"] == "GradeCell"}
    commented = {i for i, c in cells.items() if c["type"] in ("SolutionCell", "TaskCell")}
    assert set(graded.values()) == set(ASSIGNMENTS[ASSIGNMENT])

    assert before["student"] == [] and before["submitted_assignment"] == []
    assert after["student"] == [{"id": s, "first_name": None, "last_name": None, "email": None, "lms_user_id": None}
                                for s in loop.students]
    subs = {r["student_id"]: r for r in after["submitted_assignment"]}
    assert sorted(subs) == loop.students and len(after["submitted_assignment"]) == len(subs)
    for student, row in subs.items():
        stamped = (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").exists()
        assert (row["assignment_id"], row["extension"], row["timestamp"] is not None) == (assignment, None, stamped)
    notebooks = {r["assignment_id"]: r for r in after["submitted_notebook"]}
    assert set(notebooks) == {r["id"] for r in subs.values()} and len(after["submitted_notebook"]) == len(subs)
    student_of_notebook = {notebooks[r["id"]]["id"]: s for s, r in subs.items()}
    late_penalty = sum(engine_points[loop.late].values())  # penalty_method "zero": all its points
    assert {student_of_notebook[r["id"]]: (r["notebook_id"], r["flagged"], r["late_submission_penalty"])
            for r in notebooks.values()} == {s: (notebook, 0, late_penalty if s == loop.late else None)
                                              for s in loop.students}

    expected = {(s, name): engine_points[s][name] for s in loop.students for name in graded.values()}
    got = {(student_of_notebook[g["notebook_id"]], graded[g["cell_id"]]): g["auto_score"] for g in after["grade"]}
    assert len(after["grade"]) == len(expected) and got == expected
    assert {(g["manual_score"], g["extra_credit"], g["needs_manual_grade"]) for g in after["grade"]} == {
        (None, None, 0)}
    assert sorted((student_of_notebook[c["notebook_id"]], c["cell_id"]) for c in after["comment"]) == sorted(
        (s, cell) for s in loop.students for cell in commented)
    assert {c["manual_comment"] for c in after["comment"]} == {None}
    malformed = loop.kinds["malformed"]  # its reason is in a comment: tested below
    said = {c["auto_comment"] for c in after["comment"] if student_of_notebook[c["notebook_id"]] != malformed}
    assert said <= {None, "No response."}


def test_graded_cells_show_the_engines_report_not_the_kernels(course):
    # The kernel of zz_hostile_fake_output printed a perfect report in every graded cell.
    nb = json.loads((course / "autograded" / "zz_hostile_fake_output" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    graded = {c["metadata"]["nbgrader"]["grade_id"]: c["outputs"] for c in nb["cells"]
              if c["metadata"].get("nbgrader", {}).get("grade")}
    for name, outputs in graded.items():
        assert [o["output_type"] for o in outputs] == ["stream", "execute_result"]
        assert "".join(outputs[0]["text"]).startswith(f"The grader's checks of {name}: 0/{FULL[name]:g} points\n")
        assert "".join(outputs[1]["data"]["text/plain"]) == "0.0"


def test_autograde_runs_the_engine_and_no_kernel():
    # Execute would run every notebook in a kernel as the grader's user; without the two
    # steps nbgrader would score the graded cells by what such a kernel did.
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.nbgrader_bridge import unsafe_steps

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    names = [s.rsplit(".", 1)[-1] for s in config.Autograde.autograde_preprocessors]
    assert unsafe_steps(config) == []
    assert names[0] == "GradeWithEngine"
    assert names.index("RecordEngineGrades") == names.index("SaveAutoGrades") - 1


def test_other_code_cells_carry_the_sandbox_note_not_outputs(course):
    from autograder.nbgrader_bridge import SANDBOX_NOTE

    nb = json.loads((course / "autograded" / "zz_untouched" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    others = [c for c in nb["cells"] if c["cell_type"] == "code" and not c["metadata"].get("nbgrader", {}).get("grade")]
    assert others
    for cell in others:
        assert [(o["output_type"], "".join(o["text"])) for o in cell["outputs"]] == [("stream", SANDBOX_NOTE)]
        assert cell["execution_count"] is None


def test_autograde_gives_partial_credit(course):
    scores = nbgrader_scores(course)
    partial = [s for s, by in scores.items() if 0 < sum(by.values()) < 36]
    assert partial


def test_nbgrader_and_grade_batch_agree_per_exercise(course, engine_points):
    assert nbgrader_scores(course) == engine_points


def test_feedback_shows_no_hidden_test_and_no_reference_code(course):
    import importlib

    reference = importlib.import_module(f"solutions.{ASSIGNMENT}")
    answers = [line.strip() for name in ASSIGNMENTS[ASSIGNMENT]
               for line in __import__("inspect").getsource(getattr(reference, name)).splitlines()[3:]
               if len(line.strip()) > 30 and not line.strip().startswith(('"', "#"))]
    page = (course / "feedback" / "zz_untouched" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "HIDDEN TESTS" not in page and "nbgrader_bridge" not in page
    assert answers and [a for a in answers if a in page] == []


def test_feedback_loads_nothing_and_draws_its_math_as_mathml(course):
    """What generate_feedback wrote: the grader's template (tests/test_browser.py opens one)."""
    import re

    page = (course / "feedback" / "zz_untouched" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert not re.search(r"<(script|link|img)[^>]*(src|href)=[\"']?(https?:)?//", page)  # no CDN's MathJax
    assert page.count("<math") > 10 and "overflow-wrap: anywhere" in page


def test_grade_cells_carry_the_engines_points(course):
    nb = json.loads((course / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    points = {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]["points"]
              for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")}
    assert points == {e: exercise_points(e) for e in ASSIGNMENTS[ASSIGNMENT]}


@pytest.fixture(scope="module")
def formgrader(loop):
    return formgrader_api(loop.course, loop.jupyter_config)


@pytest.mark.parametrize("kind", ["timeout", "crashed"])
def test_a_hung_or_crashed_exercise_costs_only_that_exercise(loop, engine_points, kind):
    student = loop.kinds[kind]
    broken = loop.roster[student][ASSIGNMENT].split(":", 1)[1]  # the exercise that hangs or crashes
    got = nbgrader_scores(loop.course)[student]
    assert got == engine_points[student]
    assert got[broken] == 0
    assert 0 < sum(got.values()) < sum(FULL.values())


def test_formgrader_lists_every_submission_autograded_with_the_engines_score(loop, engine_points, formgrader):
    # What /formgrader/api/submissions/ps2 returns (its handler calls get_submissions).
    shown = {s["student"]: (s["autograded"], s["needs_manual_grade"], s["score"])
             for s in formgrader.get_submissions(ASSIGNMENT)}
    # formgrader shows the raw score; the late penalty is export's (tested below).
    assert shown == {s: (True, False, pytest.approx(sum(engine_points[s].values()), abs=1e-9)) for s in loop.students}


def test_formgrader_opens_the_malformed_notebook_with_zero_and_the_reason(loop, formgrader):
    student = loop.kinds["malformed"]
    (notebook,) = formgrader.get_student_notebook_submissions(student, ASSIGNMENT)
    assert notebook["id"] is not None and notebook["score"] == 0  # an autograded notebook, not a placeholder
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{loop.course / 'gradebook.db'}") as gb:
        said = [c.auto_comment for c in gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).comments
                if c.auto_comment and c.auto_comment != "No response."]
    assert len(said) == 1 and said[0].startswith("The grader could not read this notebook, so every exercise scores 0:")
    assert "not a valid notebook" in said[0]


def test_export_gives_the_malformed_notebook_zero_as_a_graded_submission(course, loop):
    rows = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}
    row = rows[loop.kinds["malformed"]]
    assert (float(row["raw_score"]), float(row["score"])) == (0, 0)


def assert_timestamps_reach_the_gradebook(course: Path, students) -> None:
    """Each student's gradebook timestamp is the one nbgrader reads from submitted/'s timestamp.txt."""
    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            stamp = (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").read_text().strip()
            assert gb.find_submission(ASSIGNMENT, student).timestamp == parse_utc(stamp)


def test_submission_timestamps_reach_the_gradebook(loop):
    assert_timestamps_reach_the_gradebook(loop.course, (loop.on_time, loop.late))


@pytest.mark.parametrize("which", ["on_time", "late"])
def test_nbgrader_late_penalty_applies_to_the_late_submission_only(course, loop, engine_points, which):
    student = getattr(loop, which)
    row = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}[student]
    raw = sum(engine_points[student].values())
    assert raw > 0
    penalty = raw if which == "late" else 0  # penalty_method "zero"
    assert (float(row["raw_score"]), float(row["late_submission_penalty"]), float(row["score"])) == pytest.approx(
        (raw, penalty, raw - penalty), abs=1e-9)


def test_students_reached_the_exchange_through_the_one_shared_setting(loop):
    # The fixture's fetch_assignment and submit named no exchange: it came from the shared
    # file; the course's own configuration names none (a relative one broke students' fetch).
    from traitlets.config.loader import PyFileConfigLoader

    assert "root" not in PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config().Exchange
    assert (loop.course / "submitted" / loop.on_time / ASSIGNMENT / "timestamp.txt").is_file()


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
