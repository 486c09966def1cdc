"""Where nbgrader meets the grader: the autograde steps that record the engine's points.

nbgrader's own ``Autograde`` runs each submitted notebook in a Jupyter kernel as the user who
runs it (``nbgrader.preprocessors.Execute``) and scores a grade cell by what the cell produced
there. Everything in that kernel is the student's: one extra cell can rebind a name, patch a
module, print a number, or open ``gradebook.db`` and add a trigger that gives everyone full
marks from then on; it can read ``source/`` (the answers) and other students' submissions.
So this course's ``Autograde`` runs no kernel at all (see ``nbgrader_config.py``): student
code runs only in the grader's sandbox, and the autograded notebook (what formgrader and
``generate_feedback`` show) is made from that run:

- ``GradeWithEngine``, first: grades the notebook exactly as nbgrader sanitized it (in
  memory) through the sandboxed engine, in the nbgrader process, with the student's own
  inputs (the same as ``grade-batch``), and keeps the verdict in nbgrader's resources. It
  first checks that every step Autograde runs is one known to execute no notebook code
  (``SAFE_STEPS``), and refuses to grade otherwise.
- ``RecordEngineGrades``, just before ``SaveAutoGrades``: every graded cell's outputs become
  the engine's report and, as the cell's value, its points, so ``SaveAutoGrades`` records the
  engine's number; every other code cell gets one note saying where its code ran (no kernel
  ran it here, so no output of its own).

The graded cells themselves hold only the visible self-checks: nothing there computes
points. When the engine cannot grade a notebook, the submission's autograde fails loudly
and its recorded points are withdrawn; nothing is recorded as if graded.
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# Where GradeWithEngine leaves the engine's verdict for RecordEngineGrades: nbgrader's
# resources dict lives in the nbgrader process, out of the kernel's reach.
RESOURCE_KEY = "autograder_engine"


def student_of(notebook: Path) -> str:
    """The student a notebook belongs to in nbgrader's layout (<dir>/<student>/<assignment>/x.ipynb),
    so nbgrader autograde draws the same inputs as grade-batch for that student."""
    if notebook.parent.parent.parent.name in ("submitted", "autograded"):
        return notebook.parent.parent.name
    return notebook.stem


# ---------------------------------------------------------------- the gradebook, written in bulk

# nbgrader's schema revisions (its alembic heads) whose tables GradebookWriter writes with plain
# SQL. Another revision is refused in one line rather than written blind.
SCHEMA_REVISIONS = ("e43177bfe90b",)  # nbgrader 0.9
MAX_STUDENT_ID = 128  # nbgrader's student.id is a VARCHAR(128)
_CHUNK = 500  # students per `IN (...)` query


class GradebookError(Exception):
    """The gradebook cannot be opened or written. The message is one line for the operator."""


def _db_error(e: BaseException) -> str:
    """The first line of a database error, without SQLAlchemy's wrapping."""
    from .names import one_line

    text = str(getattr(e, "orig", None) or e)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(e).__name__)
    return one_line(first, 200)


def unstorable(student: str) -> str | None:
    """Why nbgrader's gradebook cannot hold this student's name (None: it can)."""
    try:
        student.encode("utf-8")
    except UnicodeEncodeError:
        return "the name is not valid UTF-8"
    if len(student) > MAX_STUDENT_ID:
        return f"the name is longer than {MAX_STUDENT_ID} characters"
    return None


def open_engine(url: str):
    """A SQLAlchemy engine for ``url`` and the URL as it may be shown (no password); one line
    (GradebookError) when the URL is not one, names no known database, or lacks its driver."""
    try:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError
    except ImportError:  # a student's install: the gradebook is the instructor's
        raise GradebookError("--gradebook needs the instructor extra "
                             "(pip install 'attention-autograder[instructor]')") from None

    from .names import one_line

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise GradebookError(f"{one_line(url, 100)} is not a database URL "
                             "(e.g. sqlite:///gradebook.db or postgresql://user@host/db)") from None
    shown = parsed.render_as_string(hide_password=True)
    options = {}
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() in ("psycopg2", "psycopg"):
        options["connect_args"] = {"connect_timeout": 10}  # an unreachable host fails in 10 s, not never
    try:
        engine = create_engine(parsed, **options)
    except NoSuchModuleError:
        raise GradebookError(f"the gradebook URL {shown} names no database SQLAlchemy knows "
                             f"({parsed.drivername!r})") from None
    except ImportError as e:
        extra = " (pip install 'attention-autograder[postgres]')" if parsed.get_backend_name() == "postgresql" else ""
        raise GradebookError(f"the gradebook URL {shown} needs the Python module {e.name or e}, "
                             f"which is not installed{extra}") from None
    return engine, shown


def _schema_revision(conn) -> str | None:
    """The gradebook's nbgrader schema revision; None for a database without nbgrader's tables.
    GradebookError for a revision GradebookWriter does not know."""
    from sqlalchemy import inspect, text

    tables = set(inspect(conn).get_table_names())
    if "grade" not in tables and "alembic_version" not in tables:
        return None
    if "alembic_version" not in tables:
        raise GradebookError("the database has a table 'grade' but no 'alembic_version': "
                             "it is not an nbgrader gradebook")
    revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    if revision not in SCHEMA_REVISIONS:
        raise GradebookError(f"the gradebook's nbgrader schema is revision {revision!r}; this grader writes "
                             f"revision {', '.join(SCHEMA_REVISIONS)} (nbgrader 0.9): use the nbgrader "
                             "version that made it, or `nbgrader db upgrade` it")
    return revision


def check_gradebook(url: str) -> None:
    """Connect once and check the schema, so a wrong URL stops the batch before it grades
    anything. Leaves no connection open (the batch forks its workers next)."""
    engine, shown = open_engine(url)
    try:
        with engine.connect() as conn:
            _schema_revision(conn)
    except GradebookError:
        raise
    except Exception as e:  # noqa: BLE001 - any database trouble: one line
        raise GradebookError(f"cannot open the gradebook {shown}: {_db_error(e)}") from None
    finally:
        engine.dispose()


@lru_cache(maxsize=None)
def _tables():
    """nbgrader's tables, as much of them as GradebookWriter reads and writes (revision
    e43177bfe90b). Plain SQLAlchemy Core: importing nbgrader.api costs seconds (nbformat's
    jsonschema), more than writing a whole class."""
    from types import SimpleNamespace

    from sqlalchemy import Boolean, Column, Float, MetaData, String, Table

    md = MetaData()

    def table(name, *columns):
        return Table(name, md, Column("id", String(128), primary_key=True), *columns)

    return SimpleNamespace(
        alembic=Table("alembic_version", md, Column("version_num", String(32), nullable=False)),
        assignment=table("assignment", Column("name", String(128))),
        notebook=table("notebook", Column("name", String(128)), Column("assignment_id", String(32))),
        base_cell=table("base_cell", Column("name", String(128)), Column("notebook_id", String(32)),
                        Column("type", String(50))),
        grade_cells=table("grade_cells", Column("max_score", Float)),
        student=table("student"),
        submitted_assignment=table("submitted_assignment", Column("assignment_id", String(32)),
                                   Column("student_id", String(128))),
        submitted_notebook=table("submitted_notebook", Column("assignment_id", String(32)),
                                 Column("notebook_id", String(32)), Column("flagged", Boolean)),
        grade=table("grade", Column("notebook_id", String(32)), Column("cell_id", String(32)),
                    Column("auto_score", Float), Column("manual_score", Float),
                    Column("needs_manual_grade", Boolean, nullable=False)),
        comment=table("comment", Column("notebook_id", String(32)), Column("cell_id", String(32))),
    )


def _import_nbgrader_api():
    """nbgrader.api, for its models, once per new gradebook. nbgrader.api imports nbformat, whose
    jsonschema, on its first import, builds a parser for IRI formats from the optional
    rfc3987_syntax package: most of the import's 3 s here, for a check that neither nbgrader's
    schema nor a notebook's uses. When this is jsonschema's first import in the process, that
    optional package is hidden from it (jsonschema then skips the IRI formats, as it does when
    the package is not installed) and shown again right after."""
    import importlib

    if "nbgrader.api" in sys.modules or "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return importlib.import_module("nbgrader.api")
    sys.modules["rfc3987_syntax"] = None  # an import of it raises ImportError, which jsonschema expects
    try:
        return importlib.import_module("nbgrader.api")
    finally:
        if sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]


def _new_id() -> str:
    import uuid

    return uuid.uuid4().hex  # as nbgrader.api.new_uuid


class GradebookWriter:
    """Students' per-exercise points as the auto scores of the notebook's graded cells, in an
    nbgrader gradebook at any SQLAlchemy URL (SQLite, PostgreSQL, ...).

    Opening it creates nbgrader's schema in an empty database (with nbgrader's own models), and
    the assignment, its notebook and its graded cells with the engine's points when the gradebook
    lacks them (with nbgrader's own API). ``write`` then records many students in one
    transaction with a handful of statements, whatever their number: each missing student,
    submission, submitted notebook, grade and comment is created as nbgrader's
    ``add_submission`` would, and only the grades whose value differs are updated. Writing the
    same scores again changes nothing and adds nothing (a re-run never duplicates); a student
    given ``None`` has their auto scores withdrawn (no score, needs a manual grade), as after a
    grader failure.
    """

    def __init__(self, url: str, assignment: str):
        from .assignments import exercise_points, exercises

        self.url, self.assignment = url, assignment
        self.points = {name: float(exercise_points(name)) for name in exercises(assignment)}
        self.engine, self.shown = open_engine(url)
        try:
            with self.engine.connect() as conn:
                revision = _schema_revision(conn)
            if revision is None:
                self._create_schema()
            self.layout = self._read_layout()
            if self.layout is None:
                self._create_assignment()
                self.layout = self._read_layout()
            if self.layout is None:
                raise GradebookError(f"the gradebook {self.shown} does not hold {assignment}'s graded cells "
                                     "as this grader declares them, even after updating them")
        except GradebookError:
            self.engine.dispose()
            raise
        except Exception as e:  # noqa: BLE001 - any database trouble: one line
            self.engine.dispose()
            raise GradebookError(f"cannot open the gradebook {self.shown}: {_db_error(e)}") from None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- setting up (once per gradebook, with nbgrader's own code)

    def _create_schema(self) -> None:
        """nbgrader's tables in an empty database, stamped with nbgrader's schema revision, as
        ``nbgrader.api.Gradebook`` does (its revision read in this process, not by running the
        ``alembic`` command)."""
        from alembic.script import ScriptDirectory

        api = _import_nbgrader_api()
        head = ScriptDirectory(str(Path(api.__file__).parent / "alembic")).get_current_head()
        if head not in SCHEMA_REVISIONS:
            raise GradebookError(f"the installed nbgrader's schema is revision {head!r}; this grader writes "
                                 f"revision {', '.join(SCHEMA_REVISIONS)} (nbgrader 0.9)")
        api.Base.metadata.create_all(bind=self.engine)
        alembic = _tables().alembic
        with self.engine.begin() as conn:
            alembic.create(conn, checkfirst=True)
            if conn.execute(alembic.select()).first() is None:
                conn.execute(alembic.insert().values(version_num=head))

    def _create_assignment(self) -> None:
        api = _import_nbgrader_api()
        Gradebook, MissingEntry = api.Gradebook, api.MissingEntry

        # nbgrader runs its `alembic` script by name: make this interpreter's scripts findable.
        scripts = str(Path(sys.executable).parent)
        if scripts not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
        notebook = self.assignment  # this course has one notebook per assignment, named after it
        with Gradebook(self.url) as gb:
            gb.update_or_create_assignment(self.assignment)
            try:
                gb.find_notebook(notebook, self.assignment)
            except MissingEntry:
                gb.add_notebook(notebook, self.assignment)
            for name, points in self.points.items():
                gb.update_or_create_grade_cell(name, notebook, self.assignment, max_score=points, cell_type="code")

    def _read_layout(self):
        """The assignment's ids: its notebooks and their cells; None when the assignment, its
        notebook or a graded cell is missing or worth other points than declared."""
        from types import SimpleNamespace

        from sqlalchemy import select

        t = _tables()
        with self.engine.connect() as conn:
            assignment = conn.execute(select(t.assignment.c.id).where(t.assignment.c.name == self.assignment)).scalar()
            if assignment is None:
                return None
            notebooks = dict(conn.execute(select(t.notebook.c.id, t.notebook.c.name)
                                          .where(t.notebook.c.assignment_id == assignment)).all())
            ours = next((i for i, name in notebooks.items() if name == self.assignment), None)
            if ours is None:
                return None
            bc = t.base_cell.c
            cells = conn.execute(select(bc.id, bc.name, bc.type, bc.notebook_id)
                                 .where(bc.notebook_id.in_(list(notebooks)))).all()
            graded = [c.id for c in cells if c.type == "GradeCell"]
            maxima = dict(conn.execute(select(t.grade_cells.c.id, t.grade_cells.c.max_score)
                                       .where(t.grade_cells.c.id.in_(graded))).all()) if graded else {}
        by_name = {c.name: c.id for c in cells if c.notebook_id == ours and c.type == "GradeCell"}
        if any(name not in by_name or maxima.get(by_name[name]) != points for name, points in self.points.items()):
            return None
        return SimpleNamespace(
            assignment=assignment, notebook=ours, notebooks=list(notebooks),
            cells={name: by_name[name] for name in self.points},
            graded={nb: [c.id for c in cells if c.notebook_id == nb and c.type in ("GradeCell", "TaskCell")]
                    for nb in notebooks},
            commented={nb: [c.id for c in cells if c.notebook_id == nb and c.type in ("SolutionCell", "TaskCell")]
                       for nb in notebooks})

    # -- writing

    def write(self, scores: dict[str, dict[str, float] | None]) -> None:
        """Record ``scores`` (student -> exercise -> points; None withdraws the student's auto
        scores) in one transaction. Every name must pass ``unstorable``. GradebookError (one
        line) when the database refuses; then nothing of this call is written."""
        from sqlalchemy.exc import IntegrityError

        items = list(scores.items())
        for attempt in (1, 2):
            try:
                with self.engine.begin() as conn:
                    for k in range(0, len(items), _CHUNK):
                        self._write_chunk(conn, dict(items[k:k + _CHUNK]))
                return
            except IntegrityError as e:  # another writer added the same rows meanwhile: read them, try again
                if attempt == 2:
                    raise GradebookError(f"could not write to the gradebook {self.shown}: {_db_error(e)}") from None
            except GradebookError:
                raise
            except Exception as e:  # noqa: BLE001 - any database trouble: one line
                raise GradebookError(f"could not write to the gradebook {self.shown}: {_db_error(e)}") from None

    def _write_chunk(self, conn, chunk: dict[str, dict[str, float] | None]) -> None:
        from sqlalchemy import bindparam, insert, select, update

        t, lay = _tables(), self.layout
        writing = [s for s, points in chunk.items() if points is not None]
        if writing:
            known = set(conn.execute(select(t.student.c.id).where(t.student.c.id.in_(writing))).scalars())
            if len(known) < len(writing):
                conn.execute(insert(t.student), [{"id": s} for s in writing if s not in known])
        sa = t.submitted_assignment.c
        subs = dict(conn.execute(select(sa.student_id, sa.id).where(sa.assignment_id == lay.assignment,
                                                                     sa.student_id.in_(list(chunk)))).all())
        new_subs = {s: _new_id() for s in writing if s not in subs}
        if new_subs:  # as nbgrader's add_submission: every notebook of the assignment, all its cells
            conn.execute(insert(t.submitted_assignment),
                         [{"id": i, "assignment_id": lay.assignment, "student_id": s} for s, i in new_subs.items()])
            self._add_notebooks(conn, [(i, nb) for i in new_subs.values() for nb in lay.notebooks])
            subs.update(new_subs)
        sn = t.submitted_notebook.c
        notebooks = dict(conn.execute(select(sn.assignment_id, sn.id).where(
            sn.notebook_id == lay.notebook, sn.assignment_id.in_(list(subs.values())))).all()) if subs else {}
        lacking = [subs[s] for s in writing if subs[s] not in notebooks]
        if lacking:  # a submission made before this notebook was in the gradebook
            notebooks.update({sub: i for (sub, _), i in self._add_notebooks(conn, [(sub, lay.notebook)
                                                                                    for sub in lacking]).items()})
        g = t.grade.c
        cells = list(lay.cells.values())
        found = {(r.notebook_id, r.cell_id): r for r in conn.execute(
            select(g.id, g.notebook_id, g.cell_id, g.auto_score, g.manual_score, g.needs_manual_grade)
            .where(g.notebook_id.in_(list(notebooks.values())), g.cell_id.in_(cells)))} if notebooks else {}
        missing = [{"id": _new_id(), "notebook_id": notebooks[subs[s]], "cell_id": c, "auto_score": None,
                    "manual_score": None, "needs_manual_grade": True}
                   for s in writing for c in cells if (notebooks[subs[s]], c) not in found]
        if missing:  # a graded cell added to the gradebook after this submission
            conn.execute(insert(t.grade), missing)
            found.update({(m["notebook_id"], m["cell_id"]): _Row(m) for m in missing})
        changes = []
        for student, points in chunk.items():
            notebook = notebooks.get(subs.get(student))
            for name, cell in lay.cells.items():
                row = found.get((notebook, cell))
                if row is None:
                    continue  # withdrawing from a student the gradebook never had
                if points is None:
                    auto, manual_needed = None, True
                else:  # as nbgrader's SaveAutoGrades: a manual score, if any, still needs a look
                    auto, manual_needed = float(points.get(name, 0)), row.manual_score is not None
                if row.auto_score != auto or bool(row.needs_manual_grade) != manual_needed:
                    changes.append({"gid": row.id, "auto": auto, "manual": manual_needed})
        if changes:
            conn.execute(update(t.grade).where(t.grade.c.id == bindparam("gid"))
                         .values(auto_score=bindparam("auto"), needs_manual_grade=bindparam("manual")), changes)

    def _add_notebooks(self, conn, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """Submitted notebooks for (submission, notebook) pairs, each with an empty grade per
        graded cell and an empty comment per solution or task cell, as add_submission makes them."""
        from sqlalchemy import insert

        t, lay = _tables(), self.layout
        made = {pair: _new_id() for pair in pairs}
        conn.execute(insert(t.submitted_notebook), [{"id": i, "assignment_id": sub, "notebook_id": nb, "flagged": False}
                                                    for (sub, nb), i in made.items()])
        grades = [{"id": _new_id(), "notebook_id": i, "cell_id": c, "auto_score": None, "manual_score": None,
                   "needs_manual_grade": True} for (_, nb), i in made.items() for c in lay.graded[nb]]
        comments = [{"id": _new_id(), "notebook_id": i, "cell_id": c}
                    for (_, nb), i in made.items() for c in lay.commented[nb]]
        if grades:
            conn.execute(insert(t.grade), grades)
        if comments:
            conn.execute(insert(t.comment), comments)
        return made


class _Row:
    """A grade row just inserted, read like a selected one."""

    def __init__(self, values: dict):
        self.__dict__.update(values)


def write_gradebook(url: str, assignment: str, rows: list[dict]) -> int:
    """Record each student's per-exercise points (rows of ``{"student": ..., "exercises": {...}}``)
    in an nbgrader gradebook at any SQLAlchemy URL, in one transaction (see GradebookWriter).
    Returns the number of students written; GradebookError (one line) names any student whose
    name the gradebook cannot hold, and writes nothing then."""
    from .names import readable

    scores = {row["student"]: dict(row["exercises"]) for row in rows}
    bad = {s: why for s in scores if (why := unstorable(s))}
    if bad:
        s, why = next(iter(bad.items()))
        raise GradebookError(f"{len(bad)} student name(s) cannot be stored in nbgrader's gradebook "
                             f"({readable(s)[:60]}: {why})")
    with GradebookWriter(url, assignment) as writer:
        writer.write(scores)
    return len(scores)


# ---------------------------------------------------------------- autograde: the engine's points

_sandboxes: dict = {}  # one zygote per hidden-paths set, for the whole nbgrader run
_snapshots: Path | None = None  # where the notebook as sanitized is written for the engine


def _close_sandboxes() -> None:
    for sandbox in _sandboxes.values():
        sandbox.close()
    _sandboxes.clear()
    if _snapshots is not None:
        shutil.rmtree(_snapshots, ignore_errors=True)


def _sandbox(hide: tuple[str, ...]):
    """A sandbox kept for the whole nbgrader run: autograde grades its notebooks one after
    another in one process, so the zygote starts once, not once per notebook."""
    from .sandbox import Sandbox

    if hide not in _sandboxes:
        if not _sandboxes:
            atexit.register(_close_sandboxes)
        _sandboxes[hide] = Sandbox(hide=list(hide))
    return _sandboxes[hide]


def _snapshot_dir() -> Path:
    global _snapshots
    if _snapshots is None:
        _snapshots = Path(tempfile.mkdtemp(prefix="autograder-nbgrader-"))
    return _snapshots


def engine_grade(nb, assignment: str, student: str, notebook: str, course_root: str, timeout: float):
    """Grade the in-memory notebook ``nb`` through the sandbox: the engine's Results.

    The engine reads a snapshot written here (in a folder of mode 700, hidden from the
    sandbox like the course folder), not the submitted file, which nbgrader may rewrite.
    """
    import nbformat

    from .grade import grade, hidden_paths

    folder = _snapshot_dir() / "current"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{notebook}.ipynb"
    try:
        path.write_text(nbformat.writes(nb), encoding="utf-8")
        hide = tuple(sorted(hidden_paths(course_root, _snapshot_dir())))
        return grade(path, assignment, sandbox=_sandbox(hide), student=student, timeout=timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def engine_grade_file(path: Path, assignment: str, student: str, course_root: str, timeout: float):
    """Grade the submitted file itself (a notebook nbgrader could not read), read as grade-batch
    reads it (no link followed, a regular file only): the engine's Results, every exercise 0 and
    the reason among its problems, as grade-batch gives them."""
    from .grade import hidden_paths
    from .graded import grade_snapshot
    from .intake import snapshot

    hide = tuple(sorted(hidden_paths(course_root, _snapshot_dir())))  # engine_grade's: the same zygote
    results, _ = grade_snapshot(snapshot(path), assignment, sandbox=_sandbox(hide), student=student,
                                timeout=timeout)
    return results


@dataclass(frozen=True)
class Verdict:
    """The engine's grade of one notebook, as the autograded notebook shows it: per exercise its
    points, what it is worth, the report of its checks; and what is said of the notebook as a
    whole (shown under the first graded cell)."""
    points: dict[str, float]
    max: dict[str, float]
    feedback: dict[str, str]
    about: str
    problems: tuple[str, ...]


def verdict_of(results, assignment: str) -> Verdict:
    """The engine's Results of one notebook of ``assignment`` as a Verdict."""
    from .assignments import ASSIGNMENTS

    by_exercise = {name: [t for t in results.tests if t.exercise == name] for name in ASSIGNMENTS[assignment]}
    return Verdict(points={name: float(sum(t.score for t in tests)) for name, tests in by_exercise.items()},
                   max={name: float(sum(t.max_score for t in tests)) for name, tests in by_exercise.items()},
                   feedback={name: cell_feedback(name, tests) for name, tests in by_exercise.items()},
                   about=about_the_notebook(results),
                   problems=tuple(p for p in results.problems if p.strip()))


def fill_engine_outputs(nb, verdict: Verdict, log=None) -> None:
    """Every graded cell's outputs become the engine's report of its exercise and, as the cell's
    value, its points (what SaveAutoGrades and formgrader read, nbgrader.utils.determine_grade);
    every other code cell's outputs become SANDBOX_NOTE. GraderError when a graded cell is not
    an exercise, is worth other points, or an exercise has no graded cell."""
    import logging

    from nbformat.v4 import new_output
    from nbgrader import utils

    from .errors import GraderError

    seen = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if not utils.is_grade(cell) or utils.is_solution(cell):
            cell.outputs = [new_output("stream", name="stdout", text=SANDBOX_NOTE)]
            cell.execution_count = None
            continue
        name = cell.metadata.nbgrader.get("grade_id")
        if name not in verdict.points:
            raise GraderError(f"grade cell {name!r} is not an exercise of this assignment")
        if float(cell.metadata.nbgrader["points"]) != verdict.max[name]:
            raise GraderError(f"grade cell {name!r} is worth {cell.metadata.nbgrader['points']} "
                              f"points, the grader's checks {verdict.max[name]:g}: regenerate the notebooks")
        text = verdict.feedback[name]
        if not seen and verdict.about:
            text += "\n" + verdict.about
        cell.execution_count = None
        cell.outputs = [
            new_output("stream", name="stdout", text=text),
            new_output("execute_result", data={"text/plain": repr(verdict.points[name])}, execution_count=None),
        ]
        # What SaveAutoGrades will read back: must be the engine's number, exactly.
        if utils.determine_grade(cell, log or logging.getLogger(__name__))[0] != verdict.points[name]:
            raise GraderError(f"nbgrader would not record the grader's points for {name!r}")
        seen.add(name)
    if seen != set(verdict.points):
        raise GraderError(f"no grade cell for {sorted(set(verdict.points) - seen)}")


def cell_feedback(exercise: str, tests) -> str:
    """What a graded cell shows after autograde: the engine's checks of one exercise."""
    from .selfcheck import Shown, check_lines

    got, worth = sum(t.score for t in tests), sum(t.max_score for t in tests)
    shown = [Shown(t.name, t.status == "passed", t.output, t.misconception, t.finding, f"{t.score:g}/{t.max_score:g}")
             for t in tests]
    # Each diagnosis once, as the check cell shows it.
    lines = [f"The grader's checks of {exercise}: {got:g}/{worth:g} points", *check_lines(shown)]
    return "\n".join(lines) + "\n"


def about_the_notebook(results) -> str:
    """What the first graded cell adds after its checks, from the results' fields: the
    notebook's problems as a whole, then, apart, the last of what its code printed in the
    sandbox (no kernel ran its cells, so no cell shows output of its own). '' when neither."""
    parts = []
    problems = [p for p in results.problems if p.strip()]
    if problems:
        parts.append("About the notebook as a whole:\n" + "\n".join(problems) + "\n")
    if results.printed:
        cut = f" (the last {len(results.printed)} characters)" if results.printed_cut else ""
        shown = results.printed_text()
        parts.append(f"What the notebook's code printed in the grader's sandbox{cut}:\n"
                     + shown + ("" if shown.endswith("\n") else "\n"))
    return "\n".join(parts)


def withdraw_points(resources) -> None:
    """A notebook the engine could not grade keeps no points from an earlier autograde:
    its grade cells go back to "no auto score, needs a grader" in the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    info = resources["nbgrader"]
    with Gradebook(info["db_url"]) as gb:
        try:
            graded = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
        except MissingEntry:
            return
        for g in graded.grades:
            g.auto_score = None
            g.needs_manual_grade = True
        gb.db.commit()


# Every step nbgrader may run on a student's notebook when it autogrades or makes feedback,
# each read (nbgrader 0.9.6, nbconvert 7) and known to execute none of its code: they clear
# outputs and metadata, copy the instructor's cells back in, check ids and metadata, cap or
# hide outputs, add CSS, and read or write the gradebook. Exactly these classes, not
# subclasses (which could override anything). Any other step (nbgrader's Execute above all:
# a kernel run as the grader's user) makes GradeWithEngine refuse to grade, before
# SaveAutoGrades records anything, and ScrubGradedTracebacks refuse to write feedback.
SAFE_STEPS = frozenset({
    "nbgrader.preprocessors.clearoutput.ClearOutput",
    "nbgrader.preprocessors.deduplicateids.DeduplicateIds",
    "nbgrader.preprocessors.overwritekernelspec.OverwriteKernelspec",
    "nbgrader.preprocessors.overwritecells.OverwriteCells",
    "nbgrader.preprocessors.checkcellmetadata.CheckCellMetadata",
    "nbgrader.preprocessors.ignorepattern.IgnorePattern",
    "nbconvert.preprocessors.clearmetadata.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.limitoutput.LimitOutput",
    "nbgrader.preprocessors.saveautogrades.SaveAutoGrades",
    "nbgrader.preprocessors.latesubmissions.AssignLatePenalties",
    "nbgrader.preprocessors.getgrades.GetGrades",
    "nbgrader.preprocessors.clearhiddentests.ClearHiddenTests",
    "nbconvert.preprocessors.csshtmlheader.CSSHTMLHeaderPreprocessor",
    # HTMLExporter's own configuration turns these three on: they drop cells or outputs by tag
    # or by pattern and mark magics for highlighting.
    "nbconvert.preprocessors.tagremove.TagRemovePreprocessor",
    "nbconvert.preprocessors.regexremove.RegexRemovePreprocessor",
    "nbconvert.preprocessors.highlightmagics.HighlightMagicsPreprocessor",
    f"{__name__}.GradeWithEngine",
    f"{__name__}.RecordEngineGrades",
    f"{__name__}.RecordEngineComment",
    f"{__name__}.ScrubGradedTracebacks",
    f"{__name__}.RenderMathOffline",
})
# Where each command's steps come from. Autograde empties its exporter's steps and registers
# its two lists alone (nbgrader 0.9's Autograde._init_preprocessors); GenerateFeedback keeps
# its HTMLExporter's own: nbconvert's defaults (ExecutePreprocessor among them, off unless
# configured ``enabled``) and any configured on the exporter classes.
STEP_LISTS = ("sanitize_preprocessors", "autograde_preprocessors")
FEEDBACK_EXPORTERS = ("Exporter", "TemplateExporter", "HTMLExporter")

# What a code cell other than a graded one shows after autograde: no kernel ran it here.
SANDBOX_NOTE = ("[No output here: this cell was not run in a Jupyter kernel. The grader ran the "
                "notebook's code in its sandbox; what the code printed and the grader's checks "
                "are in the graded cells.]\n")


def _qualified(step) -> str:
    return f"{step.__module__}.{step.__qualname__}" if isinstance(step, type) else str(step)


def _configured(config, cls, name: str) -> list:
    section = config[cls.__name__]
    return list(section[name]) if name in section else list(cls.class_traits()[name].default())


def _unsafe(steps) -> list[str]:
    from traitlets.utils.importstring import import_item

    unsafe = []
    for step in steps:
        try:
            cls = import_item(step) if isinstance(step, str) else step
        except Exception:  # noqa: BLE001 - nbgrader would fail on it too; name it as given
            cls = step
        if _qualified(cls) not in SAFE_STEPS:
            unsafe.append(_qualified(cls))
    return unsafe


def unsafe_steps(config) -> list[str]:
    """The steps of nbgrader's Autograde under ``config`` (its two lists, configured or
    nbgrader's defaults) that are not in SAFE_STEPS, by qualified class name."""
    from nbgrader.converters import Autograde

    return _unsafe(step for name in STEP_LISTS for step in _configured(config, Autograde, name))


def unsafe_feedback_steps(config) -> list[str]:
    """The same for GenerateFeedback: its list, the steps configured on its exporter, and
    every nbconvert default step that ``config`` turns on."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters import GenerateFeedback

    steps = _configured(config, GenerateFeedback, "preprocessors")
    steps += [s for name in FEEDBACK_EXPORTERS for s in config[name].get("preprocessors", [])]
    steps += [s for s in _configured(config, HTMLExporter, "default_preprocessors") if _enabled(config, s)]
    return _unsafe(steps)


def _enabled(config, step) -> bool:
    """Whether ``config`` turns a default (disabled) step on: the ``enabled`` of the most
    derived class in its MRO that configures one (``c.Preprocessor.enabled`` turns on all)."""
    from traitlets.utils.importstring import import_item

    try:
        cls = import_item(step) if isinstance(step, str) else step
    except Exception:  # noqa: BLE001 - a default nbconvert cannot import is one that does not run
        return False
    for klass in cls.__mro__:
        if klass.__name__ in config and "enabled" in config[klass.__name__]:
            return bool(config[klass.__name__]["enabled"])
    return False


# Notebooks nbgrader could not read in this process, by (assignment, student, notebook): the
# submitted file. Kept in the nbgrader process's memory (no student code runs in it), never in
# the notebook, which is the student's to write.
_unreadable: dict[tuple[str, str, str], Path] = {}

# What the comment of the notebook's first answer cell says when nbgrader could not read it.
UNREADABLE_COMMENT = "The grader could not read this notebook, so every exercise scores 0: {why}"
# nbgrader shows a comment as markdown, whose raw HTML it passes through (nbconvert's
# markdown2html): a reason quoting the submission is written as text, each character markdown
# or HTML would read as markup a character reference or escaped.
_MARKUP = {"&": "&amp;", "<": "&lt;", ">": "&gt;", **{c: "\\" + c for c in "\\`*_{}[]()#+-.!|$~"}}


def markdown_text(text: str) -> str:
    """``text`` as markdown that shows exactly it."""
    return "".join(_MARKUP.get(c, c) for c in text)


def comment_unreadable(nb, info: dict, verdict: Verdict) -> None:
    """Write why the notebook could not be read (the engine's problems) into the auto comment
    of its first answer cell in the gradebook (``info``: nbgrader's resources["nbgrader"])."""
    from nbgrader.api import Gradebook

    from .errors import GraderError

    why = " ".join(verdict.problems) or "no reason given"
    with Gradebook(info["db_url"]) as gb:
        graded = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
        by_name = {c.cell.name: c for c in graded.comments}
        names = [cell.metadata.nbgrader["grade_id"] for cell in nb.cells
                 if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in by_name]
        if not names:
            raise GraderError(f"the notebook {info['notebook']} has no answer cell to comment on")
        by_name[names[0]].auto_comment = UNREADABLE_COMMENT.format(why=markdown_text(why))
        gb.db.commit()


def _key(resources) -> tuple[str, str, str]:
    info = resources["nbgrader"]
    return info["assignment"], info["student"], info["notebook"]


@lru_cache(maxsize=None)  # one class each, so nbgrader_config.py can configure them by name
def _preprocessors() -> dict[str, type]:
    import nbformat
    from nbconvert.exporters import NotebookExporter
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import NbGraderPreprocessor
    from traitlets import Float

    from .assignments import ASSIGNMENTS
    from .errors import GraderError
    from .grade import DEFAULT_TIMEOUT

    class ReadOrStandIn(NotebookExporter):
        """Autograde's exporter: a submitted notebook nbgrader cannot read (cut off mid-JSON,
        not a notebook, invalid) is replaced by the notebook released to the students, so the
        submission is autograded (formgrader lists it, export has its zeros) instead of failing
        and staying "needs autograding"; GradeWithEngine then grades the submitted file itself,
        which scores 0 with the reason, and RecordEngineComment writes the reason into the
        comment. A notebook it can read goes on as nbgrader reads it."""

        def from_filename(self, filename, resources=None, **kw):
            if resources is None or "nbgrader" not in resources:
                return super().from_filename(filename, resources, **kw)
            key, coursedir = _key(resources), CourseDirectory(config=self.config)
            submitted = coursedir.format_path(coursedir.submitted_directory, key[1], key[0])
            if os.path.dirname(os.path.abspath(filename)) != os.path.abspath(submitted):
                return super().from_filename(filename, resources, **kw)  # the second pass: its own copy
            _unreadable.pop(key, None)
            try:
                with open(filename, encoding="utf-8") as f:
                    nbformat.validate(nbformat.read(f, as_version=4))
            except OSError:
                raise
            except Exception:  # noqa: BLE001 - whatever nbformat refuses: the engine says why
                released = Path(coursedir.format_path(coursedir.release_directory, ".", key[0])) / f"{key[2]}.ipynb"
                if not released.is_file():
                    raise GraderError(f"{filename} cannot be read and there is no released notebook "
                                      f"{released} to autograde in its place") from None
                _unreadable[key] = Path(filename)
                self.log.warning("%s cannot be read; autograding the released notebook in its place", filename)
                return super().from_filename(str(released), resources, **kw)
            return super().from_filename(filename, resources, **kw)

    class GradeWithEngine(NbGraderPreprocessor):
        """Autograde, first: grade the sanitized notebook through the sandboxed engine and keep
        the verdict in nbgrader's resources (the nbgrader process's memory, out of any student
        code's reach) for RecordEngineGrades. A notebook nbgrader could not read (ReadOrStandIn)
        is graded from the submitted file, as grade-batch grades it.

        Refuses (a grader failure) when Autograde is configured with a step that could run the
        notebook's code (see SAFE_STEPS). A grader failure fails this submission's autograde
        (nbgrader logs it, removes the autograded copy, and exits non-zero) and withdraws the
        submission's earlier auto scores."""

        timeout = Float(DEFAULT_TIMEOUT,
                        help="Wall-clock limit for each exercise's calls, as grade-batch's --timeout.").tag(config=True)

        def preprocess(self, nb, resources):
            info = resources["nbgrader"]
            assignment, student = info["assignment"], info["student"]
            try:
                unsafe = unsafe_steps(self.config)
                if unsafe:
                    raise GraderError(f"Autograde is configured to run {', '.join(unsafe)}, which this grader does "
                                      "not know to run no student code; remove it from "
                                      "c.Autograde.sanitize_preprocessors/autograde_preprocessors")
                if assignment not in ASSIGNMENTS:
                    raise GraderError(f"the grader has no assignment {assignment!r}")
                root = CourseDirectory(config=self.config).root
                unreadable = _unreadable.get(_key(resources))
                if unreadable is not None:
                    results = engine_grade_file(unreadable, assignment, student, root, self.timeout)
                else:
                    results = engine_grade(nb, assignment, student, info["notebook"], root, self.timeout)
                verdict = verdict_of(results, assignment)
            except Exception as e:
                withdraw_points(resources)
                raise GraderError(f"the grader could not grade {assignment} of {student!r} "
                                  f"({type(e).__name__}: {e}); no points were recorded for it") from e
            resources[RESOURCE_KEY] = verdict
            self.log.info("The grader gives %s %g/%g on %s", student, results.score, results.max_score, assignment)
            return nb, resources

    class RecordEngineGrades(NbGraderPreprocessor):
        """Autograde, just before SaveAutoGrades: each grade cell's outputs become the engine's
        feedback and, as the cell's value, the engine's points, which SaveAutoGrades reads
        (nbgrader.utils.determine_grade); every other code cell's outputs become SANDBOX_NOTE.
        Every output of the autograded notebook is then the grader's."""

        def preprocess(self, nb, resources):
            try:
                verdict = resources.get(RESOURCE_KEY)
                if verdict is None:
                    raise GraderError("RecordEngineGrades found no verdict: GradeWithEngine must come "
                                      "before it in Autograde.autograde_preprocessors")
                fill_engine_outputs(nb, verdict, self.log)
            except Exception:
                withdraw_points(resources)
                raise
            return nb, resources

    class RecordEngineComment(NbGraderPreprocessor):
        """Autograde, after SaveAutoGrades (which writes its own comments): for a notebook
        nbgrader could not read, the reason goes into the auto comment of its first answer cell,
        which formgrader and the feedback show. Other notebooks keep SaveAutoGrades' comments."""

        def preprocess(self, nb, resources):
            if _key(resources) not in _unreadable:
                return nb, resources
            verdict = resources.get(RESOURCE_KEY)
            if verdict is None:
                raise GraderError("RecordEngineComment found no verdict: GradeWithEngine must come before it")
            comment_unreadable(nb, resources["nbgrader"], verdict)
            return nb, resources

    class ScrubGradedTracebacks(NbGraderPreprocessor):
        """Feedback step: a traceback in a graded cell would quote the cell's source, so keep
        only its last line ("NotImplementedError: ..."). Graded cells carry the engine's
        output after autograde; this guards notebooks autograded any other way. Refuses (a
        grader failure) when GenerateFeedback is configured with a step that could run the
        notebook's code (see SAFE_STEPS)."""

        def preprocess(self, nb, resources):
            unsafe = unsafe_feedback_steps(self.config)
            if unsafe:
                raise GraderError(f"GenerateFeedback is configured to run {', '.join(unsafe)}, which this grader "
                                  "does not know to run no student code; remove it from the feedback steps")
            return super().preprocess(nb, resources)

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
                for output in cell.get("outputs", []):
                    if output.get("output_type") == "error":
                        output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
            return cell, resources

    class RenderMathOffline(NbGraderPreprocessor):
        """Feedback step: the LaTeX of every markdown cell becomes MathML (report/mathml.py), which
        the browser draws with no script; the feedback template (report/nbconvert/) loads no
        MathJax from a CDN, so the page reads the same offline."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "markdown":
                from .report.mathml import markdown_with_mathml

                cell.source = markdown_with_mathml(cell.source)
            return cell, resources

    classes = (ReadOrStandIn, GradeWithEngine, RecordEngineGrades, RecordEngineComment, ScrubGradedTracebacks,
               RenderMathOffline)
    for c in classes:  # named as nbgrader_config.py names them (the module's __getattr__ serves them)
        c.__qualname__ = c.__name__
    return {c.__name__: c for c in classes}


def __getattr__(name):
    # nbgrader is imported only when its config asks for these classes, never by the grader itself.
    if name in ("ReadOrStandIn", "GradeWithEngine", "RecordEngineGrades", "RecordEngineComment",
                "ScrubGradedTracebacks", "RenderMathOffline"):
        return _preprocessors()[name]
    raise AttributeError(name)
