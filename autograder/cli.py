"""The ``autograder`` command: parse arguments, call the library, choose the exit code."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .assignments import ASSIGNMENTS
from .grade import DEFAULT_TIMEOUT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograder", description="Grade attention problem sets.")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission (.ipynb or .py)")
    g.add_argument("submission", type=Path)
    g.add_argument("--assignment", required=True, help=f"one of {', '.join(ASSIGNMENTS)}")
    g.add_argument("--results", type=Path, help="write results.json here (default: standard output)")
    g.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                   help=f"seconds per exercise (default {DEFAULT_TIMEOUT:g})")
    g.add_argument("--student", type=_name, metavar="NAME",
                   help="grade as this student: the inputs grade-batch draws for NAME (default: the file's stem)")
    b = sub.add_parser("grade-batch", help="grade every submission under a folder")
    b.add_argument("dir", type=Path,
                   help="nbgrader's submitted/ (or the course folder), or a folder of <student>.py|.ipynb")
    b.add_argument("--assignment", required=True, help=f"one of {', '.join(ASSIGNMENTS)}")
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
    c.add_argument("assignment", help=f"one of {', '.join(ASSIGNMENTS)}")
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
    _add_gradescope_and_export(sub)
    args = parser.parse_args(argv)
    if args.command in ("gradescope", "export"):
        return args.run(args)
    if args.assignment not in ASSIGNMENTS:
        print(f"autograder: unknown assignment {args.assignment!r}; choose one of {', '.join(ASSIGNMENTS)}",
              file=sys.stderr)
        return 2
    if getattr(args, "allow_unisolated", False):
        from .sandbox.handle import ALLOW_UNISOLATED

        os.environ[ALLOW_UNISOLATED] = "1"  # for every sandbox of this run, the workers' too
    try:
        return args.run(args)
    except KeyboardInterrupt:
        again = "; run the same command again to finish the rest" if args.command == "grade-batch" else ""
        print(f"autograder: interrupted{again}", file=sys.stderr)
        sys.stderr.flush()
        # Exit now rather than wait for the workers' current submissions: they die with us,
        # and every file already on disk is whole (atomic writes).
        os._exit(130)


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
    try:
        results, other = grade_file_and_set(Request(args.submission, args.assignment, args.student, args.timeout),
                                            hide=(args.results.parent,) if args.results else ())
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
        from .batch import failure_text

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
    from .batch import ClassFolderError, run_batch
    from .names import one_line, readable
    from .nbgrader_bridge import GradebookError
    from .report.dashboard import summary_text
    from .report.index import file_uri

    if args.jobs is not None and args.jobs < 1:
        print("autograder: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.scheduler is None and (refused := _refusal()):
        print(f"autograder: refusing to grade: {refused}", file=sys.stderr)
        return 2
    pool, cluster_errors = None, ()
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


def _add_gradescope_and_export(sub) -> None:
    from .gradescope.spec import VISIBILITIES

    gs = sub.add_parser("gradescope", help="build Gradescope's autograder zip for one problem set")
    gs.add_argument("assignment", help=f"one of {', '.join(ASSIGNMENTS)}")
    gs.add_argument("--out", required=True, type=Path, help="the zip to write")
    gs.add_argument("--visibility", choices=VISIBILITIES, default=None,
                    help="every test's visibility on Gradescope (default: each test's own: self-checks "
                         "visible, hidden checks after the due date)")
    gs.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                    help=f"seconds per exercise (default {DEFAULT_TIMEOUT:g})")
    gs.add_argument("--wheel", type=Path, help="the package's wheel, when already built (default: built now)")
    gs.set_defaults(run=_gradescope)
    ex = sub.add_parser("export", help="grades for a learning management system")
    lms = ex.add_subparsers(dest="lms", required=True)
    cv = lms.add_parser("canvas", help="Canvas's gradebook import CSV")
    cv.add_argument("--assignment", dest="assignments", action="append", required=True, metavar="A",
                    help="an assignment's name (repeatable, one per --grades, in the same order)")
    cv.add_argument("--grades", action="append", required=True, type=Path, metavar="GRADES.csv",
                    help="that assignment's grades.csv from grade-batch")
    cv.add_argument("--out", required=True, type=Path, help="the CSV to import into Canvas")
    cv.add_argument("--roster", type=Path, metavar="ROSTER.csv", help="the gradebook exported from Canvas")
    cv.set_defaults(run=_export_canvas)
    lt = lms.add_parser("lti-scores", help="LTI Advantage AGS Score objects (JSON lines), optionally posted")
    lt.add_argument("--assignment", required=True)
    lt.add_argument("--grades", required=True, type=Path, metavar="GRADES.csv", help="its grades.csv")
    lt.add_argument("--users", type=Path, metavar="USERS.csv",
                    help="student,user_id rows: each student's LTI user id (default: the student's name)")
    lt.add_argument("--out", type=Path, help="write the JSON lines here (default: standard output)")
    lt.add_argument("--post", metavar="LINEITEM_URL", help="POST each score to this line item's /scores")
    lt.add_argument("--token-file", type=Path, help="the bearer token for --post, in a file")
    lt.set_defaults(run=_export_lti)


def _gradescope(args) -> int:
    from .gradescope.bundle import build
    from .names import one_line

    if args.assignment not in ASSIGNMENTS:
        print(f"autograder: unknown assignment {args.assignment!r}; choose one of {', '.join(ASSIGNMENTS)}",
              file=sys.stderr)
        return 2
    try:
        bundle = build(args.assignment, args.out, visibility=args.visibility, timeout=args.timeout, wheel=args.wheel)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"autograder: no zip written: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    print(f"{bundle.path}: Gradescope autograder for {args.assignment} ({len(bundle.entries)} files; "
          f"pinned {', '.join(bundle.pins)}). Upload it under Configure Autograder.")
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
    result = canvas.export(grades, roster)
    write_atomic(args.out, result.text)
    for name, students in result.not_in_roster.items():
        print(f"autograder: {name}: {len(students)} graded student(s) not in the roster, left out: {_some(students)}",
              file=sys.stderr)
    for name, students in result.not_graded.items():
        print(f"autograder: {name}: {len(students)} student(s) with no grade (blank, Canvas keeps what it has): "
              f"{_some(students)}", file=sys.stderr)
    for name in result.new_columns:
        print(f"autograder: {name}: no Canvas id (not in a --roster), so Canvas will make a new assignment",
              file=sys.stderr)
    print(f"{args.out}: {len(grades)} assignment(s) for Canvas's gradebook import")
    return 0


def _export_lti(args) -> int:
    import json

    from .lms import lti
    from .lms.grades import GradesError, read
    from .names import one_line

    if args.post and not args.token_file:
        print("autograder: --post needs --token-file", file=sys.stderr)
        return 2
    try:
        grades = read(args.grades, args.assignment)
        users = lti.read_users(args.users) if args.users else None
        url = lti.scores_url(args.post) if args.post else None
        token = args.token_file.read_text().strip() if args.token_file else ""
    except (GradesError, OSError) as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    if args.post and not token:
        print(f"autograder: {args.token_file} holds no token", file=sys.stderr)
        return 2
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
    if not url:
        return 0
    failed = lti.post(result.lines, args.post, token)
    for user, why in failed:
        print(f"autograder: score for {one_line(user)} not accepted by {url}: {one_line(why)}", file=sys.stderr)
    print(f"posted {len(result.lines) - len(failed)} of {len(result.lines)} scores to {url}", file=sys.stderr)
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
    sys.exit(main())
