"""The ``autograder`` command: parse arguments, call the library, choose the exit code."""
from __future__ import annotations

import argparse
import sys
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
    g.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT, help="seconds per exercise (default 10)")
    args = parser.parse_args(argv)
    try:
        return _grade(args)
    except KeyboardInterrupt:
        print("autograder: interrupted", file=sys.stderr)
        return 130


def _grade(args) -> int:
    from .grade import grade, hidden_paths
    from .results import write_atomic
    from .sandbox import Sandbox

    if args.assignment not in ASSIGNMENTS:
        print(f"autograder: unknown assignment {args.assignment!r}; choose one of {', '.join(ASSIGNMENTS)}",
              file=sys.stderr)
        return 2
    if not args.submission.is_file():
        print(f"autograder: no such file: {args.submission}", file=sys.stderr)
        return 2
    hide = [args.submission.parent] + ([args.results.parent] if args.results else [])
    try:
        with Sandbox(hide=hidden_paths(*hide)) as sandbox:
            results = grade(args.submission, args.assignment, sandbox=sandbox, timeout=args.timeout)
    except (OSError, RuntimeError) as e:
        print(f"autograder: could not grade {args.submission}: {e}", file=sys.stderr)
        return 1
    if args.results:
        write_atomic(args.results, results.to_json() + "\n")
    else:
        sys.stdout.write(results.to_json() + "\n")
    return 0


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


if __name__ == "__main__":
    sys.exit(main())
