"""Issue 11, the gradebook on a real database: `grade-batch --gradebook URL` on PostgreSQL and
SQLite alike, written in bulk as students finish, idempotent, identical after a kill and a resume.

The PostgreSQL server is Debian's (`make test` installs it), started here as the `postgres`
user (initdb refuses root) in a temporary folder, on a free port of 127.0.0.1, and stopped by
its pid at the end. If it cannot start, every test here fails with the reason: a skipped test
would pass for nothing.
"""
from __future__ import annotations

import csv
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from autograder.assignments import ASSIGNMENTS
from test_batch import CLASS as KILL_CLASS
from test_batch import write_student

pytestmark = pytest.mark.slow  # a database server, and a class graded per backend

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "submissions" / "ps2"
EXERCISES = ASSIGNMENTS["ps2"]
CLASS = {"ada": "correct_straightforward.py", "ben": "mc_scale_by_dk.py",
         "dee": "missing_mask:scaled_dot_product_attention", "eve": "correct_slicing"}
TABLES = ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")


# ---------------------------------------------------------------- a PostgreSQL server of our own

def pg_binary(name: str) -> str | None:
    """Debian's server binaries (newest version first), else whatever PATH has."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0, reverse=True)
    return found[0] if found else shutil.which(name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """initdb and postgres in a temporary folder, as the postgres user when run as root."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.folder: str | None = None
        self.port = 0

    def start(self) -> PostgresServer:
        initdb, postgres = pg_binary("initdb"), pg_binary("postgres")
        if not (initdb and postgres):
            raise RuntimeError("no PostgreSQL server binaries (initdb, postgres): `make test` installs "
                               "Debian's postgresql (apt-get install postgresql)")
        user = {}
        self.folder = tempfile.mkdtemp(prefix="autograder-pg-")
        if os.geteuid() == 0:  # initdb refuses root
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and there is no postgres user to run the server as") from None
            os.chown(self.folder, pw.pw_uid, pw.pw_gid)
            user = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        data = os.path.join(self.folder, "data")
        done = subprocess.run([initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C",
                               "--no-sync"], cwd=self.folder, capture_output=True, text=True, timeout=180, **user)
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip()[-500:]}")
        for _ in range(3):  # another process may take the free port first
            self.port = free_port()
            log = open(os.path.join(self.folder, "log"), "w")  # the server writes it until stopped
            self.proc = subprocess.Popen(
                [postgres, "-D", data, "-p", str(self.port), "-h", "127.0.0.1", "-k", self.folder,
                 "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                cwd=self.folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **user)
            log.close()
            if self._ready():
                return self
        raise RuntimeError(f"postgres did not start: {self._log_tail()}")

    def _ready(self, seconds: float = 60) -> bool:
        import psycopg

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                psycopg.connect(self.dsn("postgres"), connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"postgres did not accept connections in {seconds:g} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return " | ".join(Path(self.folder, "log").read_text().strip().splitlines()[-3:])
        except OSError:
            return "(no log)"

    def dsn(self, database: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def database(self) -> str:
        """A new, empty database: its URL."""
        import psycopg

        name = f"gb_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown, by the postmaster's pid
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


@pytest.fixture(scope="module")
def postgres():
    server = PostgresServer()
    try:
        server.start()
    except Exception as e:  # noqa: BLE001 - any reason: the tests fail with it, never skip
        server.stop()
        pytest.fail(f"the PostgreSQL server for the gradebook tests could not start: {e}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def gradebook_url(request, tmp_path):
    """A new, empty gradebook of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'gradebook.db'}"
    return request.getfixturevalue("postgres").database()


# ---------------------------------------------------------------- helpers

@pytest.fixture(scope="module")
def flat_class(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class") / "class"
    folder.mkdir()
    for student, source in CLASS.items():
        write_student(folder, student, source)
    (folder / "zed.ipynb").write_text('{"cells": [')  # a malformed notebook: a grade of 0
    return folder


def grade_batch(folder: Path, out: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "grade-batch", str(folder), "--assignment", "ps2",
                           "--out", str(out), "--jobs", "2", "--timeout", "2", "--gradebook", url, *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def grades(out: Path) -> dict[str, dict[str, str]]:
    return {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}


def dump(url: str) -> tuple:
    """Everything the batch writes, in a comparable form: each grade row, and each table's size."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT sa.student_id, bc.name, g.auto_score, g.manual_score, g.needs_manual_grade FROM grade g "
                "JOIN submitted_notebook sn ON g.notebook_id = sn.id "
                "JOIN submitted_assignment sa ON sn.assignment_id = sa.id "
                "JOIN base_cell bc ON g.cell_id = bc.id ORDER BY 1, 2")).all()
            counts = {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar() for t in TABLES}
    finally:
        engine.dispose()
    return [tuple(r) for r in rows], counts


# ---------------------------------------------------------------- the tests

def test_scores_read_back_through_nbgrader_equal_grades_csv(flat_class, tmp_path, gradebook_url):
    from nbgrader.api import Gradebook

    done = grade_batch(flat_class, tmp_path / "out", gradebook_url)
    assert done.returncode == 0, done.stderr
    table = grades(tmp_path / "out")
    assert sorted(table) == sorted([*CLASS, "zed"])
    with Gradebook(gradebook_url) as gb:
        for student, row in table.items():
            assert gb.find_submission("ps2", student).score == float(row["score"])
            for name in EXERCISES:
                grade = gb.find_grade(name, "ps2", "ps2", student)
                assert (grade.score, grade.needs_manual_grade) == (float(row[name]), False)


def test_a_rerun_duplicates_nothing(flat_class, tmp_path, gradebook_url):
    assert grade_batch(flat_class, tmp_path / "out", gradebook_url).returncode == 0
    first = dump(gradebook_url)
    assert first[1]["student"] == len(CLASS) + 1 and first[1]["grade"] == (len(CLASS) + 1) * len(EXERCISES)
    assert grade_batch(flat_class, tmp_path / "out", gradebook_url).returncode == 0  # every student up to date
    assert grade_batch(flat_class, tmp_path / "out", gradebook_url, "--force").returncode == 0  # all regraded
    assert dump(gradebook_url) == first


def test_a_regrade_updates_the_students_scores(flat_class, tmp_path, gradebook_url):
    from nbgrader.api import Gradebook

    folder = tmp_path / "class"
    shutil.copytree(flat_class, folder)
    assert grade_batch(folder, tmp_path / "out", gradebook_url).returncode == 0
    shutil.copy(CORPUS / "mc_scale_by_dk.py", folder / "ada.py")
    done = grade_batch(folder, tmp_path / "out", gradebook_url)
    assert done.returncode == 0 and "1 regraded" in done.stdout
    with Gradebook(gradebook_url) as gb:
        assert gb.find_submission("ps2", "ada").score == float(grades(tmp_path / "out")["ada"]["score"])
        assert gb.find_submission("ps2", "ada").score == gb.find_submission("ps2", "ben").score


def test_a_killed_and_resumed_batch_ends_identical(tmp_path_factory, tmp_path, gradebook_url, request):
    folder = tmp_path_factory.mktemp("kill") / "class"
    folder.mkdir()
    for student, source in KILL_CLASS.items():  # ivy hangs for --timeout: the batch is still running when killed
        write_student(folder, student, source)
    reference_url = (f"sqlite:///{tmp_path / 'reference.db'}" if gradebook_url.startswith("sqlite")
                     else request.getfixturevalue("postgres").database())
    assert grade_batch(folder, tmp_path / "reference", reference_url).returncode == 0
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade-batch", str(folder), "--assignment", "ps2",
                             "--out", str(out), "--jobs", "2", "--timeout", "2", "--gradebook", gradebook_url],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(list(out.glob("*.json"))) < 3 and time.monotonic() < deadline:  # some written to the gradebook
        time.sleep(0.01)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert len(list(out.glob("*.json"))) < len(KILL_CLASS), "the batch finished before it could be killed"
    done = grade_batch(folder, out, gradebook_url)
    assert done.returncode == 0, done.stderr
    assert (out / "grades.csv").read_text() == (tmp_path / "reference" / "grades.csv").read_text()
    assert dump(gradebook_url) == dump(reference_url)


@pytest.mark.parametrize("bad", ["not a url", "nosuch://host/db", "sqlite:////no/such/folder/gradebook.db",
                                 "closed port", "no such database"])
def test_a_bad_url_gives_one_line_and_grades_nothing(flat_class, tmp_path, bad, request):
    if bad in ("closed port", "no such database"):
        server = request.getfixturevalue("postgres")
        port = free_port() if bad == "closed port" else server.port
        bad = f"postgresql://postgres@127.0.0.1:{port}/{'x' if bad == 'closed port' else 'no_such_db'}"
    done = grade_batch(flat_class, tmp_path / "out", bad)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("autograder: nothing was graded: ")
    assert not (tmp_path / "out").exists()


def test_a_gradebook_of_another_nbgrader_schema_gives_one_line(flat_class, tmp_path, gradebook_url):
    from sqlalchemy import create_engine, text

    engine = create_engine(gradebook_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('0123456789ab')"))
    engine.dispose()
    done = grade_batch(flat_class, tmp_path / "out", gradebook_url)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "'0123456789ab'" in done.stderr


def test_a_gradebook_nbgrader_made_is_written_into_without_duplicates(flat_class, tmp_path, gradebook_url,
                                                                     monkeypatch):
    """The course's own gradebook, with the assignment and students nbgrader added first."""
    from nbgrader.api import Gradebook

    # nbgrader creates a gradebook by running its `alembic` script by name
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    with Gradebook(gradebook_url) as gb:
        gb.add_assignment("ps2")
        gb.add_notebook("ps2", "ps2")
        for name in EXERCISES:
            gb.add_grade_cell(name, "ps2", "ps2", max_score=1, cell_type="code")  # to be corrected
        gb.add_solution_cell("causal_mask_code", "ps2", "ps2")
        gb.add_student("ada", first_name="Ada")
        gb.add_submission("ps2", "ada")
    assert grade_batch(flat_class, tmp_path / "out", gradebook_url).returncode == 0
    rows, counts = dump(gradebook_url)
    assert counts["student"] == len(CLASS) + 1 and counts["comment"] == len(CLASS) + 1  # one solution cell each
    with Gradebook(gradebook_url) as gb:
        assert gb.find_student("ada").first_name == "Ada"
        assert gb.find_submission("ps2", "ada").score == float(grades(tmp_path / "out")["ada"]["score"])


def test_a_grader_failure_withdraws_the_students_auto_scores(flat_class, tmp_path, gradebook_url, monkeypatch):
    import autograder.grade
    from autograder.batch import run_batch
    from autograder.errors import GraderError
    from nbgrader.api import Gradebook

    folder = tmp_path / "class"
    shutil.copytree(flat_class, folder)
    run_batch(folder, "ps2", tmp_path / "out", jobs=2, timeout=2, progress=False, gradebook=gradebook_url)
    shutil.copy(CORPUS / "mc_scale_by_dk.py", folder / "ada.py")

    def judge_bug(*args, **kwargs):
        raise GraderError("the judge has a bug")

    monkeypatch.setattr(autograder.grade, "run_judge", judge_bug)  # workers are forked: they inherit it
    result = run_batch(folder, "ps2", tmp_path / "out", jobs=2, timeout=2, progress=False, gradebook=gradebook_url)
    assert [f.student for f in result.failures] == ["ada"] and result.gradebook.withdrawn == 1
    with Gradebook(gradebook_url) as gb:
        grade = gb.find_grade("causal_mask", "ps2", "ps2", "ada")
        assert (grade.auto_score, grade.needs_manual_grade) == (None, True)  # not the earlier 4, not 0
        assert gb.find_grade("causal_mask", "ps2", "ps2", "ben").auto_score == 4


def test_names_nbgrader_cannot_store_are_left_out_in_one_line(tmp_path, gradebook_url):
    from nbgrader.api import Gradebook

    folder = tmp_path / "class"
    folder.mkdir()
    right = (CORPUS / "correct_straightforward.py").read_bytes()
    for name in (b"ada", b"jos\xe9", b"x" * 200):  # a Latin-1 byte; longer than student.id's 128
        (folder / os.fsdecode(name + b".py")).write_bytes(right)
    done = grade_batch(folder, tmp_path / "out", gradebook_url)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert "2 student(s) not written to the gradebook" in line and "jos\\xe9" in line
    with Gradebook(gradebook_url) as gb:
        assert [s.id for s in gb.students] == ["ada"]
