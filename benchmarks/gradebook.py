"""What `grade-batch --gradebook URL` costs over grading, per student, on this machine.

    .venv/bin/python benchmarks/gradebook.py [--n 200] [--reps 3] [--jobs 2]

Builds N filled-in ps2 notebooks (as benchmarks/nbgrader_vs_batch.py does), starts a PostgreSQL
server of its own (as tests/test_gradebook_postgres.py does: Debian's, as the postgres user, on a
free port of 127.0.0.1, stopped at the end), and times whole `grade-batch` commands, wall clock,
start-up included:

- a first grading of the class into a fresh OUTDIR: without a gradebook; into a gradebook
  that already has nbgrader's schema and the assignment (the usual case: nbgrader made it);
  and into an empty database (the schema is created first, with nbgrader's own models);
- a `--force` regrade of everyone into the same OUTDIR and gradebook (every row updated).

The configurations alternate within each repetition; the medians are printed, and the cost
per student over the same command without a gradebook. It also times the writer alone
(GradebookWriter.write of N students at once) for reference.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]
from nbgrader_vs_batch import ASSIGNMENT, honest_class  # noqa: E402
from test_gradebook_postgres import PostgresServer  # noqa: E402


def batch(folder: Path, out: Path, jobs: int, *extra: str) -> tuple[float, float]:
    """Wall-clock seconds and CPU seconds (all the command's processes) of one grade-batch."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade-batch", str(folder / "submitted"),
                           "--assignment", ASSIGNMENT, "--out", str(out), "--jobs", str(jobs), *extra],
                          cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"grade-batch {' '.join(extra)} failed: {done.stderr[-2000:]}")
    return seconds, (after.ru_utime + after.ru_stime) - (cpu.ru_utime + cpu.ru_stime)


def prepared(url: str) -> str:
    """A gradebook with nbgrader's schema and the assignment, as nbgrader leaves it."""
    from autograder.nbgrader_bridge import GradebookWriter

    GradebookWriter(url, ASSIGNMENT).close()
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-gradebook-"))
    server = PostgresServer().start()
    try:
        honest_class(work / "course", args.n)
        folder = work / "course"
        times: dict[str, list[tuple[float, float]]] = {}
        runs = 0

        def url_for(kind: str, empty: bool) -> str:
            nonlocal runs
            runs += 1
            url = server.database() if kind == "postgresql" else f"sqlite:///{work / f'gb{runs}.db'}"
            return url if empty else prepared(url)

        for rep in range(args.reps):
            for name, kind, empty in [("none", None, False), ("sqlite", "sqlite", False),
                                      ("postgresql", "postgresql", False), ("sqlite, empty database", "sqlite", True),
                                      ("postgresql, empty database", "postgresql", True)]:
                out = work / f"out-{rep}-{name.replace(' ', '').replace(',', '-')}"
                extra = ("--gradebook", url_for(kind, empty)) if kind else ()
                times.setdefault(f"first grading: {name}", []).append(batch(folder, out, args.jobs, *extra))
                if not empty:
                    times.setdefault(f"--force regrade: {name}", []).append(
                        batch(folder, out, args.jobs, "--force", *extra))
                shutil.rmtree(out)
        n = args.n
        print(f"N = {n} {ASSIGNMENT} notebooks, --jobs {args.jobs}, median of {args.reps} "
              "(wall clock, start-up included; CPU: user + system time of all the command's processes)")
        print(f"{'':<45} {'wall':>8} {'per student':>12} {'over grading':>13}   {'CPU':>7} {'over grading':>13}")
        for mode in ("first grading", "--force regrade"):
            wall0 = statistics.median(w for w, _ in times[f"{mode}: none"])
            cpu0 = statistics.median(c for _, c in times[f"{mode}: none"])
            for key, values in times.items():
                if not key.startswith(mode):
                    continue
                wall, cpu = statistics.median(w for w, _ in values), statistics.median(c for _, c in values)
                over = ("", "") if key.endswith("none") else (f"{1000 * (wall - wall0) / n:+8.1f} ms",
                                                              f"{1000 * (cpu - cpu0) / n:+8.1f} ms")
                print(f"{key:<45} {wall:6.2f} s {1000 * wall / n:9.1f} ms {over[0]:>13}   {cpu:5.1f} s {over[1]:>13}")
        from autograder.nbgrader_bridge import GradebookWriter

        scores = {f"s{i:04d}": {"causal_mask": 4.0, "scaled_dot_product_attention": float(i % 14)} for i in range(n)}
        for kind in ("sqlite", "postgresql"):
            with GradebookWriter(url_for(kind, False), ASSIGNMENT) as writer:
                start = time.perf_counter()
                writer.write(scores)
                first = time.perf_counter() - start
                scores = {s: {**p, "causal_mask": 0.0} for s, p in scores.items()}
                start = time.perf_counter()
                writer.write(scores)
                again = time.perf_counter() - start
            print(f"writer alone, {kind:<10}: {n} new students {1000 * first / n:5.2f} ms/student, "
                  f"{n} updated {1000 * again / n:5.2f} ms/student")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
