"""The ``autograder`` command: parse arguments, call the library, choose the exit code."""
from __future__ import annotations

import argparse
import dataclasses
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
    b = sub.add_parser("grade-batch", help="grade every submission under a folder")
    b.add_argument("dir", type=Path,
                   help="nbgrader's submitted/ (or the course folder), or a folder of <student>.py|.ipynb")
    b.add_argument("--assignment", required=True, help=f"one of {', '.join(ASSIGNMENTS)}")
    b.add_argument("--out", required=True, type=Path, help="where results, grades.csv and feedback/ go")
    b.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    b.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                   help=f"seconds per exercise (default {DEFAULT_TIMEOUT:g})")
    b.add_argument("--gradebook", metavar="URL", help="also write the scores into this nbgrader gradebook")
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
    from .errors import GraderError
    from .grade import grade, hidden_paths
    from .names import one_line
    from .results import write_atomic
    from .sandbox import Sandbox

    # lexists, not is_file: a link or a pipe given here is graded as what it is (load() says
    # why it was not read, in the results); only a missing path means nothing to grade.
    if not os.path.lexists(args.submission):
        print(f"autograder: no such file: {one_line(str(args.submission))}", file=sys.stderr)
        return 2
    hide = [args.submission.parent] + ([args.results.parent] if args.results else [])
    try:
        with Sandbox(hide=hidden_paths(*hide)) as sandbox:
            results = grade(args.submission, args.assignment, sandbox=sandbox, timeout=args.timeout)
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
    if args.results:
        write_atomic(args.results, results.to_json() + "\n")
    else:
        sys.stdout.write(results.to_json() + "\n")
    return 0


def _grade_batch(args) -> int:
    from .batch import ClassFolderError, run_batch
    from .names import one_line, readable
    from .report.dashboard import summary_text

    if args.jobs is not None and args.jobs < 1:
        print("autograder: --jobs must be at least 1", file=sys.stderr)
        return 2
    start = time.monotonic()
    try:
        result = run_batch(args.dir, args.assignment, args.out, jobs=args.jobs, timeout=args.timeout)
    except ClassFolderError as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    seconds = time.monotonic() - start
    rows = result.rows
    if args.gradebook:
        from .nbgrader_bridge import write_gradebook

        try:
            write_gradebook(args.gradebook, args.assignment, [dataclasses.asdict(r) for r in rows])
        except Exception as e:  # noqa: BLE001 - any database trouble: say so in one line
            print(f"autograder: graded everything, but could not write the gradebook {args.gradebook}: "
                  f"{type(e).__name__}: {' '.join(str(e).split())[:200]}", file=sys.stderr)
            return 1
    print(summary_text(result.summary))
    print(f"Graded {len(rows)} submissions in {seconds:.1f} s. Results: {args.out}/<student>.json; "
          f"grades: {args.out}/grades.csv; feedback: {args.out}/feedback/; class report: {args.out}/class.html")
    if not result.failures:
        return 0
    # The grader's own failures: to the operator, one line per distinct reason; no grade stored.
    by_reason: dict[str, list[str]] = {}
    for f in result.failures:
        by_reason.setdefault(f.reason, []).append(readable(f.student))
    print(f"NOT GRADED: the grader failed on {len(result.failures)} submission(s); they have no results file "
          "and an empty row in grades.csv. Fix the cause below and run the same command again to grade them.")
    for reason, students in by_reason.items():
        shown = ", ".join(students[:5]) + (f" and {len(students) - 5} more" if len(students) > 5 else "")
        print(f"autograder: grader failure on {len(students)} submission(s) ({shown}): {reason}", file=sys.stderr)
    return 1


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


if __name__ == "__main__":
    sys.exit(main())
