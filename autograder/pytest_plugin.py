"""pytest as the grader's face: every check of an assignment one pytest test.

    autograder pytest FILE --assignment ps2 [--student NAME] [--timeout S] [--visible]

(``pytest_face.py``) starts pytest in a fresh isolated interpreter with this plugin and
``--submission COPY``; a plain ``pytest --submission FILE --assignment ps2`` run works where
nothing of the submission's can reach the pytest process, and is refused otherwise
(``unsafe_reason``). It collects one item per check, node ids ``ps2/<exercise>::<check title>`` in the order the
results list them, grades the submission once (``graded.grade_file``: the sandbox and inputs
of ``autograder grade``; no student code runs in this process) and reports each item
passed or failed with the engine's message as the failure text; the output ends with ``N/M
points``. The JUnit XML carries the points where the xunit2 schema allows properties, on the
``<testsuite>`` (``junit_properties``): a ``<testcase>`` may hold none.

Registered with the ``pytest11`` entry point and inert without ``--submission``: every
other pytest run sees a few more options and nothing else. The grader's own failure is an
ERROR (setup), never a FAILED check, and no points line is printed for it.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from .names import nonempty_name as _name
from .names import positive_seconds as _positive

# pytest-timeout owns --timeout where it is installed; --autograder-timeout always works.
_TIMEOUT_NAMES = ("--autograder-timeout",) + (() if importlib.util.find_spec("pytest_timeout") else ("--timeout",))
_OURS = ("submission", "assignment", "student", "autograder_timeout", "autograder_visible", "autograder_hide",
         "autograder_origin", "autograder_unreadable", "autograder_course")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder", "grading a submission with the autograder")
    group.addoption("--submission", metavar="FILE", help="grade this notebook or .py file: one test per check")
    group.addoption("--assignment", metavar="NAME", help="the problem set it answers (one of the course's)")
    group.addoption("--student", metavar="NAME", type=_name,
                    help="draw the inputs grade-batch draws for NAME (default: the file's stem)")
    group.addoption(*_TIMEOUT_NAMES, dest="autograder_timeout", metavar="S", type=_positive, default=None,
                    help="seconds per exercise, as for `autograder grade` (default 10)")
    group.addoption("--autograder-course", dest="autograder_course", metavar="DIR",
                    help="the course folder to grade for (default: $AUTOGRADER_COURSE, else the installed course; "
                         "never one found where pytest started)")
    group.addoption("--visible", dest="autograder_visible", action="store_true",
                    help="the notebook's visible checks only, judged without the hidden reference")
    # Set by `autograder pytest` (pytest_face.py), which grades a private copy: the original's
    # folders (hidden from the sandbox, and no module may come from them), other folders the
    # sandbox must not see (where it started, where the report goes), and why the original
    # could not be read (a link, a pipe, too big): graded as that, as `grade` does.
    group.addoption("--autograder-origin", dest="autograder_origin", action="append", default=[], metavar="DIR",
                    help=argparse.SUPPRESS)
    group.addoption("--autograder-hide", dest="autograder_hide", action="append", default=[], metavar="DIR",
                    help=argparse.SUPPRESS)
    group.addoption("--autograder-unreadable", dest="autograder_unreadable", metavar="WHY", help=argparse.SUPPRESS)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # A grading run reads no conftest.py: one in the folder pytest starts from (a class
    # folder, a student's repository) would run in the grader's process.
    if getattr(early_config.known_args_namespace, "submission", None):
        early_config.known_args_namespace.noconftest = True


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("submission") is None:
        given = [o for o in _OURS[1:] if config.getoption(o) not in (None, False, [])]
        if given:
            raise pytest.UsageError(f"--{given[0].replace('autograder_', '')} needs --submission FILE")
        return
    from . import course
    from .graded import Request
    from .grade import DEFAULT_TIMEOUT
    from .names import one_line

    try:
        if config.getoption("autograder_course"):
            course.use(Path(config.getoption("autograder_course")))
        # Never the course a course.toml where pytest started names: it may be the student's.
        course.current(from_cwd=False)
    except course.CourseError as e:
        raise pytest.UsageError(str(e)) from None
    path = Path(config.getoption("submission"))
    assignment = config.getoption("assignment")
    # Below the folder pytest started from (a student's repository), no link is followed on
    # the way to the file, as grade-batch reads a class folder.
    start, whole = config.invocation_params.dir, Path(os.path.abspath(path))
    request = Request(whole, _assignment(assignment), config.getoption("student"),
                      config.getoption("autograder_timeout") or DEFAULT_TIMEOUT,
                      bool(config.getoption("autograder_visible")),
                      base=start if whole.is_relative_to(start) and whole != start else None)
    unreadable = config.getoption("autograder_unreadable")
    if unreadable is None and not os.path.lexists(path):  # as `grade`: a link or a pipe is graded as what it is
        raise pytest.UsageError(f"no such file: {one_line(str(path))}")
    origin = tuple(Path(h) for h in config.getoption("autograder_origin"))
    hidden = origin + tuple(Path(h) for h in config.getoption("autograder_hide"))
    why = unsafe_reason(config, path, origin)
    if why is not None:
        raise pytest.UsageError(f"refusing to grade: {why}; run `autograder pytest {one_line(str(path))} "
                                f"--assignment {assignment}` instead (docs/pytest-classroom.md)")
    if not request.visible_only and _student_install():
        raise pytest.UsageError(f"no reference solutions here: course {course.current().name} is installed "
                                "without its folder, as in a student's environment; add --visible to run the "
                                "notebook's visible checks (the hidden ones need the instructor's course folder)")
    config.pluginmanager.register(Grading(config, request, hidden, unreadable), "autograder-grading")


def unsafe_reason(config: pytest.Config, submission: Path, origin: tuple[Path, ...] = ()) -> str | None:
    """Why this pytest process may already run, or later import, code from the submission's
    folder (None when it cannot): the facts of this process, checked after pytest read its
    configuration and loaded its plugins, before anything is graded.

    The submission's own folders are the file's folder, the folders ``origin`` names (the
    original's, under `autograder pytest`), and the folder pytest started from when the
    file lies in it (a student's repository). Refused: a module already imported from one of
    them, one of them (or ``''``, the current folder) on ``sys.path``, a conftest.py loaded
    at all, and an ini file read from one of them or from a folder above the submission
    (pytest's discovery walks up from where it starts). The installation (this package's
    folder, the interpreter's prefixes) is never the submission's, wherever it lies."""
    own = Path(__file__).resolve().parent  # the autograder package: the installed grader
    installed = {own, *(Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})}
    start = config.invocation_params.dir.resolve()
    sub_folder = Path(os.path.abspath(submission)).parent.resolve()
    theirs = {sub_folder, *(Path(h).resolve() for h in origin)}
    for folder in [sub_folder, *theirs]:
        if folder.is_relative_to(start):
            theirs.add(start)

    def inside(path: Path) -> Path | None:
        return next((t for t in theirs if path == t or path.is_relative_to(t)), None)

    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not (isinstance(file, str) and os.path.isabs(file)):
            continue  # an import from a folder records its absolute path; a relative name
            # (torch's `ops` and `classes` say "_ops.py") names no file of any folder
        where = Path(file).resolve()
        if any(where.is_relative_to(i) for i in installed):
            continue
        folder = inside(where)
        if folder is not None:
            return f"module {name!r} was imported from {folder} (the submission's folder)"
    for entry in sys.path:
        if entry == "":
            return "the current folder is on sys.path (`python -m pytest` puts it there)"
        where = Path(os.path.abspath(entry)).resolve()
        if where == own.parent or any(where.is_relative_to(i) for i in installed):
            continue  # the installation, or where this package is installed from (an editable checkout)
        folder = inside(where)
        if folder is not None:
            within = "" if where == folder else f", inside {folder}"
            return f"{entry} is on sys.path{within} (the submission's folder; `python -m` puts the current one there)"
    for plugin in config.pluginmanager.get_plugins():
        if Path(str(getattr(plugin, "__file__", ""))).name == "conftest.py":
            return f"a conftest.py was loaded ({plugin.__file__})"
    if config.inipath is not None:
        ini = config.inipath.resolve()
        if inside(ini) is not None or sub_folder.is_relative_to(ini.parent):
            return f"pytest read its configuration from {ini}, beside or above the submission"
    xml = config.getoption("xmlpath", None)
    if xml:  # pytest writes the report through any link on its way: none below where it started
        whole = Path(os.path.abspath(os.path.join(config.invocation_params.dir, xml)))
        below = [whole]
        if whole.is_relative_to(start):
            below += [p for p in whole.parents if p.is_relative_to(start) and p != start]
        link = next((p for p in below if p.is_symlink()), None)
        if link is not None:
            return f"the report's path goes through a symbolic link ({link})"
    return None


def _student_install() -> bool:
    """Whether the course is installed without its folder, so without the reference that
    every check but the visible ones is judged by."""
    from . import course, reference

    try:
        reference.solutions_dir()
    except course.CourseError:
        return True
    return False


def _assignment(name: str | None) -> str:
    from .assignments import ASSIGNMENTS

    if name not in ASSIGNMENTS:
        what = "--submission needs --assignment" if name is None else f"unknown assignment {name!r}"
        raise pytest.UsageError(f"{what}; choose one of {', '.join(ASSIGNMENTS)}")
    return name


class Grading:
    """One grading session: the items, the one grade, the score line."""

    def __init__(self, config: pytest.Config, request, hidden: tuple[Path, ...] = (), unreadable: str | None = None):
        self.config = config
        self.request = request
        self.hidden = hidden  # more folders the sandbox must not see
        self.unreadable = unreadable  # why the original was not read: graded as that, without a sandbox
        self.results = None
        self.failure: str | None = None  # why the grader could not grade: never a student's grade
        self.run: dict[str, object] = {}  # node id -> the TestResult of each item that ran
        self.collected = 0  # the assignment's checks (before -k and the like)

    def graded(self, session: pytest.Session):
        """The results, graded on first use (a --collect-only run grades nothing)."""
        if self.results is None and self.failure is None:
            from .errors import failure_text
            from .graded import grade_file

            try:
                self.results = self._unreadable() if self.unreadable is not None else \
                    grade_file(self.request, hide=self._written_by_pytest())
            except Exception as e:  # the grader's own failure (raised again, re-reported, by every setup)
                if os.environ.get("AUTOGRADER_DEBUG"):
                    raise
                self.failure = failure_text(e)
        if self.failure is not None:
            session.shouldstop = "the grader failed"
            pytest.fail(f"the grader failed, not the submission; nothing was graded: {self.failure}", pytrace=False)
        return self.results

    def _unreadable(self):
        """The results of a submission that could not be read: every check failed, the
        reason in the output; no code, so no sandbox."""
        import hashlib

        from .graded import grade_snapshot
        from .intake import Snapshot

        digest = "unreadable:" + hashlib.sha256(self.unreadable.encode("utf-8", "surrogateescape")).hexdigest()
        snap = Snapshot(self.request.submission.name, None, self.unreadable, digest)
        return grade_snapshot(snap, self.request.assignment, sandbox=None,
                              student=self.request.student or self.request.submission.stem,
                              timeout=self.request.timeout, visible_only=self.request.visible_only)[0]

    def _written_by_pytest(self) -> tuple[str, ...]:
        """Folders this pytest run writes to or reads back (the XML report, the cache), and
        the original's (under `autograder pytest`)."""
        folders = {self.config.rootpath, self.config.invocation_params.dir, *self.hidden}
        xml = self.config.getoption("xmlpath", None)
        if xml:
            folders.add(Path(xml).resolve().parent)
        return tuple(str(f) for f in folders)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool:
        """The assignment's checks from their declarations (no inputs drawn, nothing run),
        reported to pytest as its own collection would be, so -k, -m, --lf and --deselect apply."""
        from .assignments import exercise, exercises

        hook = session.ihook
        wanted = self._selectors(session.config.args)
        items = []
        for name in exercises(self.request.assignment):
            node = ExerciseFile.from_parent(session, path=self.request.submission.resolve(),
                                            name=f"{self.request.assignment}/{name}",
                                            nodeid=f"{self.request.assignment}/{name}")
            node.specs = [s for s in exercise(name).specs if s.visible or not self.request.visible_only]
            node.grading = self
            self.collected += len(node.specs)
            hook.pytest_collectstart(collector=node)
            children = [i for i in node.collect() if _selected(i.nodeid, wanted)]
            hook.pytest_collectreport(report=pytest.CollectReport(node.nodeid, "passed", None, children))
            items.extend(children)
        session.items = items
        hook.pytest_collection_modifyitems(session=session, config=session.config, items=items)
        hook.pytest_collection_finish(session=session)
        session.testscollected = len(items)
        return True

    def _selectors(self, args: list[str]) -> list[str]:
        """Positional node ids (``ps2/causal_mask`` or ``ps2/causal_mask::T = 3``) select checks;
        other arguments are paths, and a grading run collects no files."""
        from .assignments import exercise, exercises

        prefix = f"{self.request.assignment}/"
        known = {f"{prefix}{n}" for n in exercises(self.request.assignment)}
        known |= {f"{prefix}{n}::{s.title}" for n in exercises(self.request.assignment) for s in exercise(n).specs}
        wanted = [a for a in args if a.startswith(prefix)]
        for a in wanted:
            if a not in known:
                raise pytest.UsageError(f"no check {a!r} in {self.request.assignment}; `--collect-only -q` lists them")
        return wanted

    def pytest_terminal_summary(self, terminalreporter) -> None:
        # What the results say about the file as a whole (unreadable cells, what it printed),
        # which no single check's message repeats.
        if self.results is not None and self.results.output.strip():
            terminalreporter.write_sep("-", f"about {self.request.submission.name}")
            terminalreporter.write_line(_printable(self.results.output.rstrip()))

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session):
        # Outermost: the properties are in before the JUnit plugin writes its file, and the
        # score line follows the terminal reporter's own summary and stats line.
        from _pytest.junitxml import xml_key  # what record_testsuite_property writes through

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            for name, value in self.junit_properties():
                xml.add_global_property(name, value)
        yield
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(self.score_line())

    def points(self) -> tuple[float, float] | None:
        """(score, most) over the checks that ran; None when nothing was graded."""
        if self.failure is not None or self.results is None:
            return None
        ran = list(self.run.values())
        return sum(t.score for t in ran if _passed(t)), sum(t.max_score for t in ran)

    def junit_properties(self) -> list[tuple[str, str]]:
        """The ``<testsuite>``'s properties: ``score`` and ``max_score`` (the score line's, when
        there is one), then for each check that ran ``points:<node id>`` (what it is worth; it
        earned that when its test case passed, else 0) and, for a recognised mistake,
        ``misconception:<node id>``. A check's node id is its test case's ``classname`` with
        the first ``.`` as ``/``, then ``::`` and its ``name``."""
        out = []
        totals = self.points()
        if totals is not None:
            out += [("score", _number(totals[0])), ("max_score", _number(totals[1]))]
        for nodeid, test in self.run.items():
            out.append((f"points:{nodeid}", _number(test.max_score)))
            if test.misconception is not None:
                out.append((f"misconception:{nodeid}", test.misconception))
        return out

    def score_line(self) -> str:
        if self.failure is not None:
            return f"not graded: the grader failed ({self.failure})"
        totals = self.points()
        if totals is None:  # every check deselected, or stopped before grading ended
            return "not graded: no check ran"
        line = f"{_number(totals[0])}/{_number(totals[1])} points"
        if len(self.run) < len(self.results.tests):  # -k, --lf, -x: a part of the grade
            line = f"{len(self.run)} of {self.collected} checks run: {line}"
        return line


class ExerciseFile(pytest.File):
    """One exercise of the assignment; its path is the submission, its id ``ps2/<exercise>``."""

    specs: list = []
    grading: Grading | None = None

    def collect(self):
        exercise = self.name.split("/", 1)[1]
        return [CheckItem.from_parent(self, name=spec.title, spec=spec, exercise=exercise) for spec in self.specs]


class CheckItem(pytest.Item):
    """One declared check: passes exactly when the engine's test of that name passed."""

    def __init__(self, *, spec, exercise: str, **kwargs):
        super().__init__(**kwargs)
        self.spec, self.exercise = spec, exercise
        self.grading: Grading = self.parent.grading

    def setup(self) -> None:
        self.grading.graded(self.session)

    def runtest(self) -> None:
        from .graded import by_check

        test = by_check(self.grading.graded(self.session)).get((self.exercise, self.spec.title))
        if test is None:  # the declarations and the results disagree: the grader's bug
            raise AssertionError(f"the grader's results have no test {self.nodeid!r}")
        self.grading.run[self.nodeid] = test
        if not _passed(test):
            pytest.fail(_printable(test.output) or f"{test.name} failed.", pytrace=False)

    def reportinfo(self):
        # The results' test name heads a failure; not the node id, whose dots pytest would
        # print as "::" ("scale 0::5").
        return self.path, None, f"{self.exercise}: {self.spec.title}"


def _printable(text: str) -> str:
    """Text a submission influenced (what it printed, its exceptions' messages), safe for a
    terminal and an XML report: control characters escaped (an ESC could rewrite the score
    line on screen), line breaks kept. Unchanged when there is nothing to escape."""
    from .names import readable

    return "\n".join(readable(line, backslash=False) for line in text.split("\n"))


def _passed(test) -> bool:
    return test.status == "passed" and test.score == test.max_score


def _selected(nodeid: str, wanted: list[str]) -> bool:
    return not wanted or any(nodeid == w or nodeid.startswith(w + "::") for w in wanted)


def _number(x: float) -> str:
    return f"{x:g}"

