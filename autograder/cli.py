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
    c = b.add_argument_group("on a Dask cluster (the cluster extra)")
    c.add_argument("--scheduler", metavar="ADDRESS",
                   help="grade on this Dask scheduler's workers: tls://HOST:PORT (mutual TLS), or tcp://HOST:PORT "
                        "on loopback only unless --insecure")
    c.add_argument("--tls-ca-file", type=Path, metavar="PEM", help="the cluster's CA certificate (tls://)")
    c.add_argument("--tls-cert", type=Path, metavar="PEM", help="this client's certificate, signed by that CA")
    c.add_argument("--tls-key", type=Path, metavar="PEM", help="this client's private key")
    c.add_argument("--insecure", action="store_true",
                   help="allow a plain tcp:// scheduler off this machine: whoever reaches it owns every worker")
    args = parser.parse_args(argv)
    if args.assignment not in ASSIGNMENTS:
        print(f"autograder: unknown assignment {args.assignment!r}; choose one of {', '.join(ASSIGNMENTS)}",
              file=sys.stderr)
        return 2
    try:
        return _grade(args) if args.command == "grade" else _grade_batch(args)
    except KeyboardInterrupt:
        again = "; run the same command again to finish the rest" if args.command == "grade-batch" else ""
        print(f"autograder: interrupted{again}", file=sys.stderr)
        sys.stderr.flush()
        # Exit now rather than wait for the workers' current submissions: they die with us,
        # and every file already on disk is whole (atomic writes).
        os._exit(130)


def _grade(args) -> int:
    import shutil
    import tempfile

    from .batch import grade_submission
    from .errors import GraderError
    from .grade import hidden_paths
    from .names import one_line
    from .results import write_atomic
    from .sandbox import Sandbox

    # lexists, not is_file: a link or a pipe given here is graded as what it is (load() says
    # why it was not read, in the results); only a missing path means nothing to grade.
    if not os.path.lexists(args.submission):
        print(f"autograder: no such file: {one_line(str(args.submission))}", file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="autograder-grade-"))  # the copy graded; hidden from the sandbox
    hide = [args.submission.parent, scratch] + ([args.results.parent] if args.results else [])
    try:
        with Sandbox(hide=hidden_paths(*hide)) as sandbox:
            results, _, other = grade_submission(args.submission, args.assignment, sandbox=sandbox,
                                                 student=args.student, timeout=args.timeout, scratch=scratch)
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
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
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
