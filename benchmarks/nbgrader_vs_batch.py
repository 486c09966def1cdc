"""nbgrader autograde against grade-batch on the same N notebooks, on this machine.

    .venv/bin/python benchmarks/nbgrader_vs_batch.py --n 200 [--batch-also 2000] [--jobs 2]

Builds N filled-in ps2 notebooks (examples/make_class.py: right answers in several styles,
unfinished exercises, catalogued mistakes; the hang, crash and broken-file archetypes are left
out, since nbgrader cannot grade those right), grades them with `nbgrader autograde` (one
notebook at a time, as nbgrader does) and with `autograder grade-batch --jobs J`, checks that
the per-exercise scores agree, and prints milliseconds per submission for each, the ratio,
and grade-batch's peak memory (all its processes together). grade-batch's time is the median of
--rounds runs with nothing watching them (the memory watch, a look at every process every
50 ms, takes CPU from a batch that keeps every core busy), half before nbgrader's run and half
after (the machine's speed drifts over minutes). --batch-also times grade-batch
alone on more submissions, to show its memory stays flat as N grows. `nbgrader autograde`
runs with the course's nbgrader_config.py (the engine grades each notebook in its sandbox; no
kernel runs student code), or with ``--stock`` with nbgrader's own defaults: a kernel per
notebook executing every cell, the grade cells scored by whether they raise. Stock scores are
not the engine's (its grade cells only print what the visible checks say), so only the times
are compared then. benchmarks/nbgrader_demo_class.py compares two checkouts.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import proc_stat  # noqa: E402
from make_class import make_class  # noqa: E402

ASSIGNMENT = "ps2"
DISHONEST = ("timeout", "crashed", "malformed")


def honest_class(folder: Path, n: int) -> list[str]:
    """At least ``n`` honest students in folder/submitted; returns the first ``n`` names, the rest removed."""
    roster = make_class(folder, assignments=(ASSIGNMENT,), students=n + 20, seed=1)
    honest = sorted(s for s, a in roster.items() if not a[ASSIGNMENT].startswith(DISHONEST))[:n]
    for student in roster:
        if student not in honest:
            shutil.rmtree(folder / "submitted" / student)
    return honest


def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants, from /proc."""
    stats = proc_stat.every()
    return sum(int(stats[p][21]) * proc_stat.PAGE_KIB for p in proc_stat.family(pid, stats))


def run_measured(cmd: list[str], cwd: Path, env=None, check: bool = True) -> tuple[float, int]:
    """Wall seconds and peak resident KiB of the whole process tree. ``check``: a non-zero exit stops the
    benchmark (off where some submissions are expected to fail their own step, as a broken notebook in nbgrader)."""
    with tempfile.TemporaryFile("w+") as log:  # a file, not a pipe: nbgrader logs more than a pipe holds
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss_kib(proc.pid))
            time.sleep(0.05)
        seconds = time.monotonic() - start
        if check and proc.returncode != 0:
            log.seek(0)
            raise SystemExit(f"{cmd[2:4]} failed: {log.read()[-2000:]}")
    return seconds, peak


def batch_command(folder: Path, out: Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "autograder.cli", "grade-batch", str(folder / "submitted"), "--assignment",
            ASSIGNMENT, "--out", str(out), "--jobs", str(jobs)]


def batch(folder: Path, out: Path, jobs: int) -> tuple[float, int]:
    return run_measured(batch_command(folder, out, jobs), ROOT)


def batch_timed(folder: Path, out: Path, jobs: int) -> float:
    """Wall seconds of one grade-batch with nothing watching it: run_measured's look at every
    process every 50 ms takes CPU from a batch that keeps both cores busy (not from nbgrader,
    which keeps one)."""
    start = time.monotonic()
    subprocess.run(batch_command(folder, out, jobs), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.monotonic() - start


def batch_scores(out: Path) -> dict:
    import csv

    return {r["student"]: {k: float(v) for k, v in r.items() if k not in ("student", "score", "max_score")}
            for r in csv.DictReader((out / "grades.csv").open())}


def nbgrader_scores(course: Path) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: {g.name: float(g.score) for g in s.notebooks[0].grades if g.cell_type == "code"
                               and g.name in ("causal_mask", "scaled_dot_product_attention", "attention_shapes",
                                              "fused_self_attention", "attention_with_biases")}
                for s in gb.assignment_submissions(ASSIGNMENT)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="submissions graded both ways")
    parser.add_argument("--batch-also", type=int, nargs="*", default=[], help="more sizes for grade-batch alone")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5,
                        help="grade-batch runs timed with nothing watching them, after the one whose memory "
                             "is watched; their median is its time")
    parser.add_argument("--stock", action="store_true",
                        help="nbgrader's own autograde (a kernel per notebook), not the course's configuration")
    args = parser.parse_args()
    # Both graders as an instructor's shell runs them: bytecode cached. With it off (some CI
    # shells set it), every nbgrader kernel and every grade-batch worker compiles what it
    # imports from source again, and each side's time says more about that than about grading.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    os.environ["PATH"] = env["PATH"]  # nbgrader's Gradebook runs its alembic script by name
    with tempfile.TemporaryDirectory() as tmp:
        course = Path(tmp) / "course"
        honest_class(course, args.n)
        shutil.copytree(ROOT / "source", course / "source")
        shutil.copy(ROOT / "nbgrader_config.py", course)
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"],
                       cwd=course, env=env, check=True, capture_output=True)
        if args.stock:  # generated with the course's config (the same released notebook); graded with nbgrader's
            (course / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821 - nbgrader's defaults\n")
        # grade-batch's timed runs straddle nbgrader's minutes, half before and half after: this
        # machine's speed drifts by several percent over minutes, and then it falls on both.
        runs = [batch_timed(course, Path(tmp) / f"out-{r}", args.jobs) for r in range((args.rounds + 1) // 2)]
        nb_s, nb_kib = run_measured([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT], course, env,
                                    check=not args.stock)
        watched_s, b_kib = batch(course, Path(tmp) / "out", args.jobs)
        runs += [batch_timed(course, Path(tmp) / f"out-{r}", args.jobs) for r in range(len(runs), args.rounds)]
        b_s = statistics.median(runs) if runs else watched_s
        a, b = nbgrader_scores(course), batch_scores(Path(tmp) / "out")
        agree = sum(a.get(s) == b.get(s) for s in b)
        n = args.n
        print(f"N = {n} ps2 notebooks, {os.cpu_count()} cores")
        which = "nbgrader autograde (stock)" if args.stock else "nbgrader autograde:"
        print(f"{which:28s} {nb_s:7.1f} s  {1000 * nb_s / n:7.1f} ms/submission  "
              f"peak {nb_kib // 1024} MiB")
        print(f"grade-batch --jobs {args.jobs}:       {b_s:7.2f} s  {1000 * b_s / n:7.1f} ms/submission  "
              f"peak {b_kib // 1024} MiB")
        if runs:
            print(f"  (median of {len(runs)} runs: {', '.join(f'{r:.2f}' for r in runs)} s; "
                  f"{watched_s:.2f} s the run whose memory was watched)")
        agreement = ("stock scores are not the engine's: times only" if args.stock else
                     f"per-exercise scores agree for {agree}/{len(b)} students")
        print(f"ratio: grade-batch is {nb_s / b_s:.0f}x faster; {agreement}")
        for extra in args.batch_also:
            folder = Path(tmp) / f"class{extra}"
            honest_class(folder, extra)
            s, kib = batch(folder, Path(tmp) / f"out{extra}", args.jobs)
            print(f"grade-batch --jobs {args.jobs}, N = {extra}: {s:7.1f} s  {1000 * s / extra:7.1f} ms/submission  "
                  f"peak {kib // 1024} MiB")
        if agree != len(b) and not args.stock:
            raise SystemExit("the two graders disagree")


if __name__ == "__main__":
    main()
