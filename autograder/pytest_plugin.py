"""pytest as the grader's face: every check of an assignment one pytest test.

    pytest --submission FILE --assignment ps2 [--student NAME] [--timeout S] [--visible]

collects one item per check, node ids ``ps2/<exercise>::<check title>`` in the order the
results list them, grades the submission once (``graded.grade_file``: the sandbox and inputs
of ``autograder grade``; no student code runs in this process) and reports each item
passed or failed with the engine's message as the failure text. Each test case's JUnit XML
properties hold its points, score, visibility and tags; the output ends with ``N/M points``.

Registered with the ``pytest11`` entry point and inert without ``--submission``: every
other pytest run sees five more options and nothing else. The grader's own failure is an
ERROR (setup), never a FAILED check, and no points line is printed for it.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path

import pytest

# pytest-timeout owns --timeout where it is installed; --autograder-timeout always works.
_TIMEOUT_NAMES = ("--autograder-timeout",) + (() if importlib.util.find_spec("pytest_timeout") else ("--timeout",))
_OURS = ("submission", "assignment", "student", "autograder_timeout", "autograder_visible")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder", "grading a submission with the attention autograder")
    group.addoption("--submission", metavar="FILE", help="grade this notebook or .py file: one test per check")
    group.addoption("--assignment", metavar="NAME", help="the problem set it answers (ps1, ps2, ...)")
    group.addoption("--student", metavar="NAME", type=_name,
                    help="draw the inputs grade-batch draws for NAME (default: the file's stem)")
    group.addoption(*_TIMEOUT_NAMES, dest="autograder_timeout", metavar="S", type=_positive, default=None,
                    help="seconds per exercise, as for `autograder grade` (default 10)")
    group.addoption("--visible", dest="autograder_visible", action="store_true",
                    help="the notebook's visible checks only, judged without the hidden reference")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # A grading run reads no conftest.py: one in the folder pytest starts from (a class
    # folder, a student's repository) would run in the grader's process.
    if getattr(early_config.known_args_namespace, "submission", None):
        early_config.known_args_namespace.noconftest = True


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("submission") is None:
        given = [o for o in _OURS[1:] if config.getoption(o) not in (None, False)]
        if given:
            raise pytest.UsageError(f"--{given[0].replace('autograder_', '')} needs --submission FILE")
        return
    from .graded import Request
    from .grade import DEFAULT_TIMEOUT
    from .names import one_line

    path = Path(config.getoption("submission"))
    assignment = config.getoption("assignment")
    request = Request(path, _assignment(assignment), config.getoption("student"),
                      config.getoption("autograder_timeout") or DEFAULT_TIMEOUT,
                      bool(config.getoption("autograder_visible")))
    if not os.path.lexists(path):  # as `autograder grade`: a link or a pipe is graded as what it is
        raise pytest.UsageError(f"no such file: {one_line(str(path))}")
    config.pluginmanager.register(Grading(config, request), "autograder-grading")


def _assignment(name: str | None) -> str:
    from .assignments import ASSIGNMENTS

    if name not in ASSIGNMENTS:
        what = "--submission needs --assignment" if name is None else f"unknown assignment {name!r}"
        raise pytest.UsageError(f"{what}; choose one of {', '.join(ASSIGNMENTS)}")
    return name


class Grading:
    """One grading session: the items, the one grade, the score line."""

    def __init__(self, config: pytest.Config, request):
        self.config = config
        self.request = request
        self.results = None
        self.failure: str | None = None  # why the grader could not grade: never a student's grade
        self.run: dict[str, object] = {}  # node id -> the TestResult of each item that ran
        self.collected = 0  # the assignment's checks (before -k and the like)

    def graded(self, session: pytest.Session):
        """The results, graded on first use (a --collect-only run grades nothing)."""
        if self.results is None and self.failure is None:
            from .batch import failure_text
            from .graded import grade_file

            try:
                self.results = grade_file(self.request, hide=self._written_by_pytest())
            except Exception as e:  # the grader's own failure (raised again, re-reported, by every setup)
                if os.environ.get("AUTOGRADER_DEBUG"):
                    raise
                self.failure = failure_text(e)
        if self.failure is not None:
            session.shouldstop = "the grader failed"
            pytest.fail(f"the grader failed, not the submission; nothing was graded: {self.failure}", pytrace=False)
        return self.results

    def _written_by_pytest(self) -> tuple[str, ...]:
        """Folders this pytest run writes to or reads back (the XML report, the cache)."""
        folders = {self.config.rootpath, self.config.invocation_params.dir}
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
        # Outermost, so this line follows the terminal reporter's own summary and stats line.
        yield
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(self.score_line())

    def score_line(self) -> str:
        if self.failure is not None:
            return f"not graded: the grader failed ({self.failure})"
        if self.results is None:  # every check deselected, or stopped before grading ended
            return "not graded: no check ran"
        ran = list(self.run.values())
        score = sum(t.score for t in ran if _passed(t))
        most = sum(t.max_score for t in ran)
        line = f"{_number(score)}/{_number(most)} points"
        if len(ran) < len(self.results.tests):  # -k, --lf, -x: a part of the grade
            line = f"{len(ran)} of {self.collected} checks run: {line}"
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
        self.user_properties.append(("points", _number(spec.points)))
        self.user_properties.append(("visibility", "visible" if spec.visible else "after_due_date"))

    def setup(self) -> None:
        self.grading.graded(self.session)

    def runtest(self) -> None:
        from .graded import by_check

        test = by_check(self.grading.graded(self.session)).get((self.exercise, self.spec.title))
        if test is None:  # the declarations and the results disagree: the grader's bug
            raise AssertionError(f"the grader's results have no test {self.nodeid!r}")
        self.grading.run[self.nodeid] = test
        self.user_properties.append(("score", _number(test.score)))
        self.user_properties.extend(("tag", tag) for tag in test.tags)
        if not _passed(test):
            pytest.fail(_printable(test.output) or f"{test.name} failed.", pytrace=False)

    def reportinfo(self):
        # The results' test name heads a failure; not the node id, whose dots pytest would
        # print as "::" ("scale 0::5").
        return self.path, None, f"{self.exercise}: {self.spec.title}"


def visible_check(notebook: str | Path, assignment: str, exercise: str, title: str) -> None:
    """What the classroom's generated test file calls: one visible check of ``notebook``,
    graded (once per process, all visible checks together) through the sandbox."""
    from .graded import Request, by_check, grade_file

    key = (str(Path(notebook).resolve()), assignment)
    if key not in _VISIBLE:
        try:
            _VISIBLE[key] = grade_file(Request(Path(key[0]), assignment, visible_only=True),
                                       hide=(str(Path.cwd()),))
        except Exception as e:  # noqa: BLE001 - said as the grader's failure, never as the student's mistake
            from .batch import failure_text

            _VISIBLE[key] = f"the grader failed, not your notebook; nothing was checked: {failure_text(e)}"
    results = _VISIBLE[key]
    if isinstance(results, str):
        pytest.fail(results, pytrace=False)
    test = by_check(results).get((exercise, title))
    if test is None:
        pytest.fail(f"{assignment} has no visible check {exercise}: {title!r} in this version of the grader; "
                    "regenerate the test file with `autograder classroom`.", pytrace=False)
    if not _passed(test):
        pytest.fail(_printable(test.output) or f"{test.name} failed.", pytrace=False)


_VISIBLE: dict[tuple[str, str], object] = {}


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


def _name(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value
