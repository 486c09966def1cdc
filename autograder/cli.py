"""The ``autograder`` command: parse arguments, call the library, choose the exit code."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import course
from .assignments import ASSIGNMENTS  # a view of the course's sets: importing it imports no declaration

COURSE_HELP = ("the course folder (holding course.toml) to grade for; default: the one the current "
               "folder lies in, else $AUTOGRADER_COURSE's, else the installed course")


def _sets() -> str:
    """The course's problem sets, for a help text: before any course is found, none."""
    try:
        return "one of " + ", ".join(ASSIGNMENTS)
    except course.CourseError:
        return "a problem set of the course (--course DIR)"


def _course_and_rest(argv: list[str], exit_on_error: bool = True) -> tuple[Path | None, list[str]]:
    """``--course DIR`` (anywhere on the line) and the rest of the line, the command's."""
    pre = argparse.ArgumentParser(add_help=False, exit_on_error=exit_on_error)
    pre.add_argument("--course", type=Path)
    known, rest = pre.parse_known_args(argv)
    return known.course, rest


def _command(argv: list[str]) -> str:
    """The command a line runs, whatever --course DIR stands before it."""
    try:
        rest = _course_and_rest(argv, exit_on_error=False)[1]
    except (argparse.ArgumentError, SystemExit):  # main has said what is wrong with the line
        return ""
    return rest[0] if rest else ""


def choose_course(argv: list[str]) -> list[str]:
    """Take ``--course DIR`` (anywhere on the line, for every command) and grade for that
    course from here on; the rest of the line is the command's. A folder that is not a
    course is a one-line error (SystemExit 2)."""
    chosen, rest = _course_and_rest(argv)
    if chosen is not None:
        try:
            course.use(chosen)
        except course.CourseError as e:
            print(f"autograder: --course {chosen}: {e}", file=sys.stderr)
            raise SystemExit(2) from None
    return rest


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    early = None
    try:
        rest = choose_course(argv)
        early = _prestart(rest)
        return _main(rest, early)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    except course.CourseError as e:  # no course here, or a course folder that says too little
        print(f"autograder: {e}", file=sys.stderr)
        return 2
    finally:
        if early is not None:
            early.close()  # graded, or a line refused before grading: the zygote is ended either way


def console() -> None:
    """The `autograder` command. After `grade`, and after `grade-batch` on this machine's
    processes with no gradebook, which leave no thread, no child and no file open, the process
    ends without tearing down its interpreter (numpy, the course, the reference, the pages'
    templates): a tenth of what a cold grade costs a student waiting at the command line, 30 ms
    of every batch. A cluster's client and a gradebook's database connection close as usual."""
    code = main()
    if _ends_clean(sys.argv[1:]):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _ends_clean(argv: list[str]) -> bool:
    """Whether the line's command leaves nothing to close at exit (see console). An argument
    that merely looks like --scheduler or --gradebook (a folder so named) only costs the fast end."""
    command = _command(argv)
    if command == "grade-batch":
        return not any(a.split("=", 1)[0] in ("--scheduler", "--gradebook") for a in argv)
    return command == "grade"


def _prestart(argv: list[str]):
    """For `grade`: its sandbox, launched before this process imports numpy and the course's
    checks (prestart.py), so that both start at once; for `grade-batch`, its workers' (see
    _prestart_batch). None for any other command, and for a line the full parser will refuse
    with its own message."""
    if argv[:1] == ["grade-batch"] and not {"-h", "--help"} & set(argv):
        return _prestart_batch(argv)
    if argv[:1] != ["grade"] or {"-h", "--help"} & set(argv):
        return None
    known = _first_look(argv[1:], ("submission", Path), ("--results", Path))
    if known is None or not os.path.lexists(known.submission):
        return None
    if known.allow_unisolated:
        from .sandbox.launch import ALLOW_UNISOLATED

        os.environ[ALLOW_UNISOLATED] = "1"
    from . import prestart

    try:
        started = prestart.start(known.submission, _results_hidden(known))
    except Exception:  # noqa: BLE001 - `grade` starts it again, and says why in its own words
        return None
    return prestart.Request(known.submission, known.results, started)


def _first_look(argv: list[str], *arguments: tuple[str, type]):
    """The line as a first look reads it, before the full parser (which says what is wrong with
    a line): ``arguments`` and --allow-unisolated, the rest left alone; None where it cannot."""
    pre = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    for name, kind in arguments:
        pre.add_argument(name, type=kind)
    pre.add_argument("--allow-unisolated", action="store_true")
    try:
        return pre.parse_known_args(argv)[0]
    except (argparse.ArgumentError, SystemExit):
        return None


def _prestart_batch(argv: list[str]):
    """For `grade-batch` on this machine, as root, on a class graded for the first time (no
    grades.csv in --out yet): a sandbox per worker, launched before this process imports the
    grader, which then hands one to each worker. Not as another user (refusing or not is
    asked of a sandbox of its own there, _refusal), nor on a re-run: who needs grading is
    known only once the results are read, and often no one does, when zygotes started for
    nothing would only slow the run."""
    if os.geteuid() != 0:
        return None
    known = _first_look(argv[1:], ("dir", Path), ("--out", Path), ("--jobs", int), ("--assignment", str),
                        ("--timeout", str), ("--scheduler", str))
    if known is None or known.out is None or known.scheduler is not None or (known.jobs is not None and known.jobs < 1):
        return None
    out = known.out
    if (out / "grades.csv").exists():
        return None
    if known.allow_unisolated:
        from .sandbox.launch import ALLOW_UNISOLATED

        os.environ[ALLOW_UNISOLATED] = "1"
    from . import prestart

    launched = prestart.sandboxes(known.jobs or os.cpu_count() or 1, prestart.hidden_paths(known.dir, out))
    return prestart.Batch(known.dir, out, known.jobs, launched)


def _results_hidden(args) -> tuple[Path, ...]:
    """The folder `grade --results` writes into: out of the sandbox's sight."""
    return (args.results.parent,) if args.results else ()


def _main(argv: list[str], early=None) -> int:
    if argv[:1] == ["notebooks"]:  # the course author's: no grading, its own short line
        return _notebooks(argv[1:])
    if argv[:1] == ["adequacy"]:  # the course author's too
        return _adequacy(argv[1:])
    if argv[:1] == ["pytest"]:  # its own parser: node ids may follow the options, as for pytest
        from .pytest_face import main as pytest_main

        return pytest_main(argv[1:])
    from .grade import DEFAULT_TIMEOUT

    parser = argparse.ArgumentParser(prog="autograder", description="Grade a course's problem sets.")
    parser.add_argument("--course", type=Path, metavar="DIR", help=COURSE_HELP)  # taken by choose_course
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission (.ipynb or .py)")
    g.add_argument("submission", type=Path)
    g.add_argument("--assignment", required=True, help=_sets())
    g.add_argument("--results", type=Path, help="write results.json here (default: standard output)")
    g.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                   help=f"seconds per exercise (default {DEFAULT_TIMEOUT:g})")
    g.add_argument("--student", type=_name, metavar="NAME",
                   help="grade as this student: the inputs grade-batch draws for NAME (default: the file's stem)")
    b = sub.add_parser("grade-batch", help="grade every submission under a folder")
    b.add_argument("dir", type=Path,
                   help="nbgrader's submitted/ (or the course folder), or a folder of <student>.py|.ipynb")
    b.add_argument("--assignment", required=True, help=_sets())
    b.add_argument("--out", required=True, type=Path, help="where results, grades.csv and feedback/ go")
    b.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    b.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                   help=f"seconds per exercise (default {DEFAULT_TIMEOUT:g})")
    b.add_argument("--gradebook", metavar="URL",
                   help="also write the scores into this nbgrader gradebook (any SQLAlchemy URL: "
                        "sqlite:///gradebook.db, postgresql://user@host/db with the postgres extra)")
    b.add_argument("--force", action="store_true", help="regrade every student, changed or not")
    b.add_argument("--student", dest="students", action="append", type=_name, metavar="NAME",
                   help="grade only this student (repeatable); the others are left as they are")
    cluster = b.add_argument_group("on a Dask cluster (the cluster extra)")
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                   help="grade on this Dask scheduler's workers: tls://HOST:PORT (mutual TLS), or tcp://HOST:PORT "
                        "on loopback only unless --insecure")
    cluster.add_argument("--tls-ca-file", type=Path, metavar="PEM", help="the cluster's CA certificate (tls://)")
    cluster.add_argument("--tls-cert", type=Path, metavar="PEM", help="this client's certificate, signed by that CA")
    cluster.add_argument("--tls-key", type=Path, metavar="PEM", help="this client's private key")
    cluster.add_argument("--insecure", action="store_true",
                   help="allow a plain tcp:// scheduler off this machine: whoever reaches it owns every worker")
    c = sub.add_parser("classroom", help="a GitHub Classroom starter repository: notebook, workflow, README")
    c.add_argument("assignment", help=_sets())
    c.add_argument("--out", required=True, type=Path, help="a new (or empty) folder for the repository")
    c.add_argument("--package", required=True, metavar="REQUIREMENT",
                   help="what the workflow pip-installs the grader from: a wheel URL, a package name, "
                        "or attention-autograder@git+https://...")
    c.add_argument("--notebook", type=Path, help="the released notebook (default: assignments/NAME/NAME.ipynb)")
    for p in (g, b):
        p.add_argument("--allow-unisolated", action="store_true",
                       help="grade even where the kernel allows no isolation at all (not root, no user "
                            "namespaces, no Landlock): submissions then run as your own user")
    g.set_defaults(run=_grade)
    b.set_defaults(run=_grade_batch)
    c.set_defaults(run=_classroom)
    _add_gradescope_and_export(sub, argv[0] if argv else "")
    _add_integrity(sub, argv[0] if argv else "")
    from .pytest_face import add_parser as add_pytest  # `autograder pytest`, for the help; parsed above

    add_pytest(sub)
    sub.add_parser("notebooks", help="(course authors) build source/ and the worked examples from templates/; "
                   "--release also assignments/")
    sub.add_parser("adequacy", help="(course authors) which checks, visible and hidden, fail and name each "
                   "catalogued mistake; --out DIR also writes adequacy.csv and adequacy.html")
    args = parser.parse_args(argv)
    if args.command in ("gradescope", "export", "lti"):
        try:
            return args.run(args)
        except ModuleNotFoundError as e:
            if e.name not in ("jwt", "cryptography"):
                raise
            print("autograder: the LTI tool needs PyJWT and cryptography: pip install 'attention-autograder[lti]'",
                  file=sys.stderr)
            return 2
    if args.assignment not in ASSIGNMENTS:
        print(f"autograder: unknown assignment {args.assignment!r}; choose one of {', '.join(ASSIGNMENTS)}",
              file=sys.stderr)
        return 2
    if getattr(args, "allow_unisolated", False):
        from .sandbox.launch import ALLOW_UNISOLATED

        os.environ[ALLOW_UNISOLATED] = "1"  # for every sandbox of this run, the workers' too
    if args.command in ("grade", "grade-batch"):
        args.early = early
    try:
        return args.run(args)
    except KeyboardInterrupt:
        again = "; run the same command again to finish the rest" if args.command == "grade-batch" else ""
        print(f"autograder: interrupted{again}", file=sys.stderr)
        sys.stderr.flush()
        # Exit now rather than wait for the workers' current submissions: they die with us,
        # and every file already on disk is whole (atomic writes).
        os._exit(130)


def _adequacy(argv: list[str]) -> int:
    from . import adequacy

    parser = argparse.ArgumentParser(prog="autograder adequacy", description=adequacy.__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=adequacy.STUDENTS,
                        help=f"students' draws per hidden check (default {adequacy.STUDENTS})")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="also write adequacy.csv and adequacy.html here (a grade-batch's --out, say: "
                             "beside class.html)")
    args = parser.parse_args(argv)
    if args.students < 1:
        print("autograder: --students must be at least 1", file=sys.stderr)
        return 2
    from .errors import GraderError

    try:
        matrix = adequacy.compute(args.students)
    except GraderError as e:
        print(f"autograder: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(adequacy.text(matrix))
    if args.out is not None:
        from .report.adequacy import csv_text, html
        from .results import write_atomic

        write_atomic(args.out / "adequacy.csv", csv_text(matrix))
        write_atomic(args.out / "adequacy.html", html(matrix))
        print(f"Written: {args.out}/adequacy.csv, {args.out}/adequacy.html")
    owed = [r for r in matrix.blind if not r.blind_reason]
    if owed or matrix.unstable:
        print(f"autograder: {len(owed)} mistake(s) pass every visible check with no reason given, "
              f"{len(matrix.unstable)} lose points that depend on the draw", file=sys.stderr)
        return 1
    return 0


def _notebooks(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="autograder notebooks",
                                     description="Build the course's source notebooks and worked examples.")
    parser.add_argument("--release", action="store_true", help="also regenerate assignments/ (nbgrader)")
    args = parser.parse_args(argv)
    try:
        from . import notebooks
    except ModuleNotFoundError as e:
        print(f"autograder: building notebooks needs {e.name}: pip install 'attention-autograder[instructor]'",
              file=sys.stderr)
        return 2
    try:
        notebooks.build(release_too=args.release)
    except course.CourseError as e:
        print(f"autograder: {e}", file=sys.stderr)
        return 2
    return 0


def _grade(args) -> int:
    from .errors import GraderError
    from .graded import Request, grade_file_and_set
    from .sandbox import Unisolated
    from .names import one_line
    from .results import write_atomic

    # lexists, not is_file: a link or a pipe given here is graded as what it is (load() says
    # why it was not read, in the results); only a missing path means nothing to grade.
    if not os.path.lexists(args.submission):
        print(f"autograder: no such file: {one_line(str(args.submission))}", file=sys.stderr)
        return 2
    early = getattr(args, "early", None)
    started = early.started if early is not None and early.matches(args.submission, args.results) else None
    try:
        results, other = grade_file_and_set(Request(args.submission, args.assignment, args.student, args.timeout),
                                            hide=_results_hidden(args), started=started)
    except Unisolated as e:
        print(f"autograder: refusing to grade: {one_line(str(e))}", file=sys.stderr)
        return 2
    except GraderError as e:
        print(f"autograder: the grader failed, not the submission; nothing was graded: {one_line(str(e))}",
              file=sys.stderr)
        return 1
    except Exception as e:  # a bug in the grader: one line, and no grade
        if os.environ.get("AUTOGRADER_DEBUG"):
            raise
        from .errors import failure_text

        print(f"autograder: could not grade {one_line(str(args.submission))}: {failure_text(e)}", file=sys.stderr)
        return 1
    if other is not None:
        print(f"autograder: {one_line(str(args.submission))} looks like a {other} submission, not {args.assignment}; "
              f"it was graded as {args.assignment} (the results say so)", file=sys.stderr)
    if args.results:
        write_atomic(args.results, results.to_json() + "\n")
    else:
        sys.stdout.write(results.to_json() + "\n")
    return 0


def _grade_batch(args) -> int:
    refused = _refusal() if args.scheduler is None else ""
    early = getattr(args, "early", None)
    # The workers' sandboxes, where the first look at the line launched them (_prestart_batch).
    launched = early.take(args.dir, args.out, args.jobs) if early is not None and args.scheduler is None else []
    # On any exception (Ctrl-C included) this process exits at once: the zygotes see their
    # sockets close with it and end, as the workers do. Else they are reaped here, where the
    # pool has not (a line refused, nothing to grade).
    code = _grade_batch_launched(args, launched, refused)
    for sandbox in launched:
        sandbox.close()
    return code


def _grade_batch_launched(args, launched: list, refused: str) -> int:
    from .batch import run_batch
    from .discovery import ClassFolderError
    from .names import one_line, readable
    from .nbgrader_bridge import GradebookError
    from .report.dashboard import summary_text
    from .report.index import file_uri

    if args.jobs is not None and args.jobs < 1:
        print("autograder: --jobs must be at least 1", file=sys.stderr)
        return 2
    if refused:
        print(f"autograder: refusing to grade: {refused}", file=sys.stderr)
        return 2
    pool, cluster_errors = None, ()
    if args.scheduler is None:
        from .pools import LocalPool

        pool = LocalPool(args.jobs, launched)
    if args.scheduler is None and (args.tls_ca_file or args.tls_cert or args.tls_key or args.insecure):
        print("autograder: --tls-ca-file, --tls-cert, --tls-key and --insecure go with --scheduler", file=sys.stderr)
        return 2
    if args.scheduler is not None:
        if args.jobs is not None:
            print("autograder: --jobs is for this machine's processes; with --scheduler the workers decide",
                  file=sys.stderr)
            return 2
        try:
            from .cluster import ClusterError, DaskPool, TLSFiles
        except ImportError as e:
            print(f"autograder: --scheduler needs the cluster extra (pip install 'attention-autograder[cluster]'): "
                  f"{one_line(str(e), 200)}", file=sys.stderr)
            return 2
        cluster_errors = (ClusterError,)
        try:
            pool = DaskPool(args.scheduler, tls=TLSFiles(args.tls_ca_file, args.tls_cert, args.tls_key),
                            insecure=args.insecure)
        except ClusterError as e:
            print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
            return 2
    start = time.monotonic()
    try:
        result = run_batch(args.dir, args.assignment, args.out, jobs=args.jobs, timeout=args.timeout,
                           force=args.force, students=args.students, gradebook=args.gradebook, pool=pool)
    except ClassFolderError as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    except GradebookError as e:
        print(f"autograder: nothing was graded: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    except cluster_errors as e:  # the cluster could not be used: before any student was sent
        print(f"autograder: nothing was graded: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    seconds = time.monotonic() - start
    print(summary_text(result.summary))
    if result.summary.changes:
        print(changes_text(result.summary.changes))
    counts = (f"{len(result.new)} new, {len(result.up_to_date)} up to date, {len(result.regraded)} regraded, "
              f"{len(result.failures)} failed")
    if result.not_selected:
        counts += f", {len(result.not_selected)} not selected"
    total = len(result.rows) + len(result.failures)
    print(f"{total} submissions in {seconds:.1f} s: {counts}. Results: {args.out}/<student>.json; "
          f"grades: {args.out}/grades.csv; changes: {args.out}/changes.csv; feedback: {args.out}/feedback/; "
          f"class dashboard: {args.out}/class.html")
    print(f"Open {file_uri(Path(args.out) / 'index.html')}")
    code = 0
    by_set: dict[str, list[str]] = {}
    for student, other in result.other_sets.items():
        by_set.setdefault(other, []).append(readable(student))
    for other, students in sorted(by_set.items()):
        print(f"autograder: {len(students)} submission(s) look like {other}, not {args.assignment} "
              f"({_some(students)}); graded as {args.assignment}, and their results say so", file=sys.stderr)
    book = result.gradebook
    if book is not None:
        if book.error:
            print(f"autograder: the gradebook is incomplete ({book.written} students written): "
                  f"{one_line(book.error, 500)}; run the same command again to write it", file=sys.stderr)
            code = 1
        if book.left_out:
            why = sorted(set(book.left_out.values()))
            print(f"autograder: {len(book.left_out)} student(s) not written to the gradebook, whose names nbgrader "
                  f"cannot store ({_some([readable(s) for s in sorted(book.left_out)])}): {'; '.join(why)}",
                  file=sys.stderr)
            code = 1
    if not result.failures:
        return code
    # The grader's own failures: to the operator, one line per distinct reason; no grade stored.
    by_reason: dict[str, list[str]] = {}
    for f in result.failures:
        by_reason.setdefault(f.reason, []).append(readable(f.student))
    print(f"NOT GRADED: the grader failed on {len(result.failures)} submission(s); they have no results file "
          "and an empty row in grades.csv. Fix the cause below and run the same command again to grade them.")
    for reason, students in by_reason.items():
        print(f"autograder: grader failure on {len(students)} submission(s) ({_some(students)}): {reason}",
              file=sys.stderr)
    return 1


def _refusal() -> str:
    """Why the sandbox would refuse on this machine, asked once before the workers start (each
    would refuse every submission); empty where it grades. As root it always isolates."""
    if os.geteuid() == 0:
        return ""
    from .names import one_line
    from .sandbox import Sandbox, Unisolated

    try:
        with Sandbox():
            return ""
    except Unisolated as e:
        return one_line(str(e))


def _classroom(args) -> int:
    from .classroom import ClassroomError, write_starter
    from .names import one_line

    try:
        files = write_starter(args.assignment, args.out, args.package, args.notebook)
    except ClassroomError as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    print(f"GitHub Classroom starter for {args.assignment} in {args.out}: "
          + ", ".join(str(f.relative_to(args.out)) for f in files))
    print("Use it as the assignment's template repository; grade the collected repositories with grade-batch.")
    return 0


def _add_gradescope_and_export(sub, command: str) -> None:
    """The gradescope, export and lti commands; their arguments (and the modules their defaults
    come from) only for a line that runs one of them: `grade` waits for every import."""
    gs = sub.add_parser("gradescope", help="build Gradescope's autograder zip for one problem set")
    ex = sub.add_parser("export", help="grades for a learning management system")
    tool = sub.add_parser("lti", help="the LTI 1.3 tool: its keys, and its login, launch and JWKS endpoints")
    if command not in ("gradescope", "export", "lti"):
        return
    from .grade import DEFAULT_TIMEOUT
    from .gradescope.bundle import DEFAULT_PYTHON, PYTHONS
    from .gradescope.spec import VISIBILITIES

    gs.add_argument("assignment", help=_sets())
    gs.add_argument("--out", required=True, type=Path, help="the zip to write")
    gs.add_argument("--visibility", choices=VISIBILITIES, default=None,
                    help="every test's visibility on Gradescope (default: each test's own: self-checks "
                         "visible, hidden checks after the due date)")
    gs.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                    help=f"seconds per exercise (default {DEFAULT_TIMEOUT:g})")
    gs.add_argument("--wheel", type=Path, help="the package's wheel, when already built (default: built now)")
    gs.add_argument("--python", choices=PYTHONS, default=DEFAULT_PYTHON,
                    help=f"the python3 of the base image chosen on Gradescope (default {DEFAULT_PYTHON}: Ubuntu "
                         "22.04, Gradescope's default; 3.12: Ubuntu 24.04): requirements with wheels for it")
    gs.set_defaults(run=_gradescope)
    lms = ex.add_subparsers(dest="lms", required=True)
    cv = lms.add_parser("canvas", help="Canvas's gradebook import CSV")
    cv.add_argument("--assignment", dest="assignments", action="append", required=True, metavar="A",
                    help="an assignment's name (repeatable, one per --grades, in the same order)")
    cv.add_argument("--grades", action="append", required=True, type=Path, metavar="GRADES.csv",
                    help="that assignment's grades.csv from grade-batch")
    cv.add_argument("--out", required=True, type=Path, help="the CSV to import into Canvas")
    cv.add_argument("--roster", type=Path, metavar="ROSTER.csv",
                    help="the gradebook exported from Canvas (Grades, Export), just before the import: needed")
    cv.set_defaults(run=_export_canvas)
    lt = lms.add_parser("lti-scores", help="LTI Advantage AGS scores: posted through the LTI tool (--config), "
                                           "or as JSON lines")
    lt.add_argument("--assignment", required=True)
    lt.add_argument("--grades", required=True, type=Path, metavar="GRADES.csv", help="its grades.csv")
    lt.add_argument("--config", type=Path, metavar="TOOL.json",
                    help="the LTI tool's configuration (see `autograder lti serve`): get a token by the "
                         "client-credentials grant, find or make the line item, map students by the course's "
                         "names and roles, post one score each")
    lt.add_argument("--context", help="the course's id on the platform (needed when the tool knows several)")
    lt.add_argument("--users", type=Path, metavar="USERS.csv",
                    help="without --config: student,user_id rows, each student's LTI user id (default: the name)")
    lt.add_argument("--out", type=Path, help="write the JSON lines here (default: standard output)")
    lt.set_defaults(run=_export_lti)
    verbs = tool.add_subparsers(dest="verb", required=True)
    keys = verbs.add_parser("keys", help="make the tool's RSA key pair (private.pem, jwks.json)")
    keys.add_argument("--out", required=True, type=Path, help="a folder for the keys (an existing key is kept)")
    keys.set_defaults(run=_lti_keys)
    srv = verbs.add_parser("serve", help="serve /login, /launch and /jwks.json")
    srv.add_argument("--config", required=True, type=Path, metavar="TOOL.json")
    srv.set_defaults(run=_lti_serve)


def _lti_keys(args) -> int:
    from .lms.grades import GradesError
    from .lms.lti_tool import make_keys
    from .names import one_line

    try:
        key = make_keys(args.out)
    except (GradesError, OSError) as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    print(f"{args.out}: private.pem (keep it; mode 600) and jwks.json (key id {key.kid}): give the platform "
          "the tool's /jwks.json URL")
    return 0


def _lti_serve(args) -> int:
    from .lms.grades import GradesError
    from .lms.lti_server import serve
    from .lms.lti_tool import read_config
    from .names import one_line

    try:
        serve(read_config(args.config))
    except (GradesError, OSError, ValueError) as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


def _gradescope(args) -> int:
    from .gradescope.bundle import build
    from .names import one_line

    if args.assignment not in ASSIGNMENTS:
        print(f"autograder: unknown assignment {args.assignment!r}; choose one of {', '.join(ASSIGNMENTS)}",
              file=sys.stderr)
        return 2
    try:
        bundle = build(args.assignment, args.out, visibility=args.visibility, timeout=args.timeout, wheel=args.wheel,
                       python=args.python)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"autograder: no zip written: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    print(f"{bundle.path}: Gradescope autograder for {args.assignment} ({len(bundle.entries)} files, "
          f"{bundle.path.stat().st_size // 1000} kB; for Python {args.python}: {', '.join(bundle.pins)}). "
          f"Upload it under Configure Autograder, with a base image whose python3 is {args.python}.")
    return 0


def _export_canvas(args) -> int:
    from .lms import canvas
    from .lms.grades import GradesError, read
    from .names import one_line
    from .results import write_atomic

    if len(args.assignments) != len(args.grades):
        print("autograder: give one --grades per --assignment, in the same order", file=sys.stderr)
        return 2
    try:
        grades = [read(path, name) for name, path in zip(args.assignments, args.grades, strict=True)]
        roster = canvas.read_roster(args.roster) if args.roster else None
    except GradesError as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    try:
        result = canvas.export(grades, roster)
    except GradesError as e:
        print(f"autograder: no CSV written: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    write_atomic(args.out, result.text)
    for name, students in result.not_in_roster.items():
        print(f"autograder: {name}: {len(students)} graded student(s) not in the roster, left out: {_some(students)}",
              file=sys.stderr)
    for name, students in result.kept.items():
        print(f"autograder: {name}: {len(students)} student(s) with no grade from the grader: their cell is what "
              f"the roster says Canvas holds, so the import leaves it as it is (export the roster again if "
              f"Canvas changed since): {_some(students)}", file=sys.stderr)
    for name, replaced in result.replaced.items():
        print(f"autograder: {name}: {len(replaced)} score(s) in Canvas that the import replaces: "
              f"{_some([f'{r.student} {r.canvas} -> {r.graded}' for r in replaced])}", file=sys.stderr)
    for name, (held, graded) in result.points_differ.items():
        print(f"autograder: {name}: Canvas has {held} points possible, grades.csv {graded}; the import keeps "
              f"Canvas's", file=sys.stderr)
    for name in result.new_columns:
        print(f"autograder: {name}: no assignment of that title in the roster, so Canvas will make a new one",
              file=sys.stderr)
    print(f"{args.out}: {len(grades)} assignment(s) for Canvas's gradebook import")
    return 0


def _export_lti(args) -> int:
    import json

    from .lms import lti
    from .lms.grades import GradesError, read
    from .names import one_line

    if args.config and args.users:
        print("autograder: --users is for the JSON lines; with --config the course's names and roles map students",
              file=sys.stderr)
        return 2
    try:
        grades = read(args.grades, args.assignment)
        users = lti.read_users(args.users) if args.users else None
    except (GradesError, OSError) as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    if args.config:
        return _post_lti(args, grades)
    result = lti.scores(grades, users)
    text = "".join(json.dumps(line) + "\n" for line in result.lines)
    if args.out:
        from .results import write_atomic

        write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    if result.not_graded:
        print(f"autograder: {len(result.not_graded)} student(s) not graded, no score: {_some(result.not_graded)}",
              file=sys.stderr)
    if result.no_user_id:
        print(f"autograder: {len(result.no_user_id)} student(s) not in {args.users}, no score: "
              f"{_some(result.no_user_id)}", file=sys.stderr)
    return 0


def _post_lti(args, grades) -> int:
    from .lms import lti, lti_services as svc
    from .lms.grades import GradesError
    from .lms.lti_tool import LtiError, load_keys, read_config, read_context
    from .names import one_line

    try:
        config = read_config(args.config)
        key = load_keys(config.keys)
        context, endpoints = read_context(config, args.context)
        if not endpoints.get("lineitems") or not endpoints.get("memberships"):
            raise GradesError(f"course {context}'s launch granted no line items or names and roles service")
        tok = svc.token(config, key, [svc.SCOPE_LINEITEM, svc.SCOPE_SCORE, svc.SCOPE_MEMBERSHIPS])
        people = svc.members(endpoints["memberships"], tok)
        lineitem, made = svc.line_item(endpoints["lineitems"], tok, grades.assignment, grades.assignment,
                                       grades.max_score)
    except (GradesError, LtiError, OSError) as e:
        print(f"autograder: no score posted: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    result = lti.scores(grades, svc.user_ids(people))
    print(f"autograder: {grades.assignment}: line item {lineitem} ({'made now' if made else 'found'})",
          file=sys.stderr)
    if result.not_graded:
        print(f"autograder: {len(result.not_graded)} student(s) not graded, no score sent (the platform keeps "
              f"what it has): {_some(result.not_graded)}", file=sys.stderr)
    if result.no_user_id:
        print(f"autograder: {len(result.no_user_id)} student(s) not among the course's learners, no score: "
              f"{_some(result.no_user_id)}", file=sys.stderr)
    failed = svc.post_scores(lineitem, tok, result.lines)
    for user, why in failed:
        print(f"autograder: score for {one_line(user)} not accepted: {one_line(why)}", file=sys.stderr)
    print(f"posted {len(result.lines) - len(failed)} of {len(result.lines)} scores to {lineitem}")
    return 1 if failed else 0


def changes_text(changes, limit: int = 20) -> str:
    """The changes section of the printed summary: the regraded students whose score moved."""
    from .names import readable

    moved = [c for c in changes if c.new_score != c.old_score]
    up = sum(c.new_score is not None and c.new_score > c.old_score for c in changes)
    down = sum(c.new_score is not None and c.new_score < c.old_score for c in changes)
    lost = sum(c.new_score is None for c in changes)
    lines = [f"Changes: {len(changes)} regraded since the last complete run: {up} up, {down} down, "
             f"{len(changes) - up - down - lost} unchanged" + (f", {lost} not graded now" if lost else "")]
    for c in moved[:limit]:
        new = "not graded" if c.new_score is None else f"{c.new_score:g}"
        lines.append(f"  {readable(c.student)[:40]:<40} {c.old_score:g} -> {new} / {c.max_score:g}  ({c.why})")
    if len(moved) > limit:
        lines.append(f"  ... and {len(moved) - limit} more in changes.csv")
    return "\n".join(lines)


def _add_integrity(sub, command: str) -> None:
    """``autograder integrity``: which pairs of a class look copied (autograder/integrity/); its
    arguments only for a line that runs it (their default is the checker's, which imports it)."""
    i = sub.add_parser("integrity", help="which pairs of a class's submissions look copied (instructor only)",
                       description="Compare a class's submissions and write OUT/integrity.csv and "
                                   "OUT/integrity.html (docs/integrity.md). A flag is a reason to look, never proof.")
    if command != "integrity":
        return
    from .integrity.run import DEFAULT_THRESHOLD

    i.add_argument("dir", type=Path,
                   help="nbgrader's submitted/ (or the course folder), or a folder of <student>.py|.ipynb")
    i.add_argument("--assignment", required=True, help=_sets())
    i.add_argument("--out", required=True, type=Path, help="where integrity.csv and integrity.html go")
    i.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                   help=f"flag pairs scoring at least this, in (0, 1] (default {DEFAULT_THRESHOLD:g})")
    i.set_defaults(run=_integrity)


def _integrity(args) -> int:
    from .discovery import ClassFolderError
    from .integrity.run import IntegrityError, run_integrity
    from .names import readable
    from .report.index import file_uri

    try:
        result = run_integrity(args.dir, args.assignment, args.out, threshold=args.threshold)
    except (ClassFolderError, IntegrityError) as e:
        print(f"autograder: {e}", file=sys.stderr)
        return 2
    for u in result.unread:
        print(f"not compared: {readable(u.student)}: {u.reason}")
    print(f"{args.assignment}: {result.students} submissions compared in {result.seconds:.1f} s, "
          f"{len(result.pairs)} pairs reported, {len(result.flagged)} flagged (score >= {result.threshold:g})")
    for p in result.flagged[:10]:
        print(f"  {p.score:.2f}  {readable(p.a.work.student)}  {readable(p.b.work.student)}")
    print(f"wrote {result.csv} and {file_uri(result.html)}")
    return 0


def _some(names: list[str], limit: int = 5) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _name(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


if __name__ == "__main__":
    console()
