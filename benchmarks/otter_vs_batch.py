"""otter-grader's `otter run` against grade-batch on the same N ps2 notebooks, on this machine.

    .venv/bin/python benchmarks/otter_vs_batch.py --n 60 [--jobs 2] [--venv DIR]

A benchmark, not a test. otter-grader 7 lives in a venv of its own (default
~/.cache/autograder-benchmarks/otter-venv, or $XDG_CACHE_HOME's), made on the first run with
otter-grader, ipykernel and the course's own dependencies from pyproject.toml (40 s to two
minutes here, from PyPI), never in the project's .venv; the course itself comes from this
checkout on PYTHONPATH, so the notebooks' imports (attention_course, autograder.selfcheck)
are this checkout's.

The otter assignment: one OK-format test file per ps2 exercise, one case per check of the
engine's plan for one fixed student (``autograder.grade.plan``), worth that check's points,
reading that check's calls on the plan's inputs (each distinct call made once, as the engine
makes it: the same number of calls as grade-batch's); a case passes when each of its calls
on the student's function ends as the reference's (solutions/ps2.py, run here; the tests
load its outcomes from a pickle and never import solutions/) did: close values, the same
exception, the inputs left as they were (benchmarks/otter_cases.py). Otter's inputs are
fixed for the class where grade-batch draws each student's own, and a case compares the
whole outcome where an engine judge may read a part (the weights alone) or test a property
(finite scores); and a doctest fails on anything printed, so a right answer that prints
loses points under otter. Those are the disagreements the benchmark lists.

The class: N filled-in ps2 notebooks from examples/make_class.py (right answers in several
styles, unfinished exercises, catalogued mistakes; no hangs, crashes or broken files:
nbgrader_vs_batch.honest_class). `otter run` (otter's grading without a container) grades
each notebook in a kernel of its own, executing every cell, J at a time (xargs -P J); then
`autograder grade-batch --jobs J` grades the same folder. Prints milliseconds per submission
for each, the ratio, peak memory (all of a command's processes together), and the agreement
of the scores: per student the fraction of grade-batch's points that otter gives, and how many
students the two give full marks on the same exercises.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import pprint
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from nbgrader_vs_batch import ASSIGNMENT, batch, batch_scores, honest_class, run_measured  # noqa: E402

from autograder import grade, reference, wire  # noqa: E402
from autograder.closeness import tolerance  # noqa: E402

OTTER = "otter-grader>=7,<8"
SUPPORT = Path(__file__).with_name("otter_cases.py")  # what the OK tests call, copied into the zip
FIXED_STUDENT = "otter"  # whose plan gives the inputs every otter test uses
EXACT = 1e-9  # points equal up to float sums


def default_venv() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "autograder-benchmarks" / "otter-venv"


def ensure_venv(venv: Path) -> Path:
    """The venv's otter command; the venv is made, or brought to these requirements, when it lacks them."""
    course = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    wanted = "\n".join([OTTER, "ipykernel", *course]) + "\n"
    stamp = venv / "requirements.txt"
    if not (stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted):
        started = time.monotonic()
        print(f"installing otter-grader into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *wanted.split("\n")[:-1]]
        done = subprocess.run(pip, capture_output=True, text=True)
        if done.returncode != 0:  # pip's warnings are its own business unless it fails
            raise SystemExit(f"pip could not install otter-grader into {venv}:\n{done.stderr[-3000:]}")
        stamp.write_text(wanted, encoding="utf-8")
        print(f"  done in {time.monotonic() - started:.0f} s", flush=True)
    return venv / "bin" / "otter"


def outcome(func, call) -> dict:
    """What the reference does on ``call``'s inputs, as otter_cases.agrees reads it."""
    args, kwargs = wire.materialize(call.args), wire.materialize(call.kwargs)
    try:
        returned, raised = func(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - inputs the exercise must refuse: their exception is the outcome
        returned, raised = None, type(e)
    arrays = [*args, *kwargs.values(), *(returned if isinstance(returned, tuple) else (returned,))]
    return {"func": call.func, "args": args, "kwargs": kwargs, "echo": call.echo, "returns": returned,
            "raises": raised, "tolerance": tolerance(*arrays)}


def ok_case(exercise: str, index: int, check) -> dict:
    """An OK test case: the check's points, the doctest of otter_cases.agrees on the student's functions."""
    functions = ", ".join(f"{f!r}: {f}" for f in sorted({call.func for call in check.calls}))
    return {"name": f"{exercise}: {check.title}", "points": check.points, "hidden": not check.visible,
            "code": f">>> import otter_cases\n>>> otter_cases.agrees({{{functions}}}, {exercise!r}, {index})\nTrue"}


def otter_assignment(folder: Path, otter: Path) -> tuple[Path, dict[str, int]]:
    """The autograder zip (tests from the engine's plan, outcomes from the reference) and the
    calls each exercise's cases make."""
    functions = reference.load().functions
    cases, calls = {}, {}
    tests = folder / "tests"
    tests.mkdir(parents=True)
    for exercise, checks in grade.plan(ASSIGNMENT, FIXED_STUDENT).items():
        distinct = grade.distinct_calls(checks)
        where = {id(call): i for i, call in enumerate(distinct)}
        cases[exercise] = {"calls": [outcome(functions[call.func], call) for call in distinct],
                           "cases": [[where[id(call)] for call in c.calls] for c in checks]}
        calls[exercise] = len(distinct)
        suite = {"type": "doctest", "scored": True, "setup": "", "teardown": "",
                 "cases": [ok_case(exercise, i, c) for i, c in enumerate(checks)]}
        test = {"name": exercise, "points": None, "suites": [suite]}  # None: each case's own points
        spec = pprint.pformat(test, width=110, sort_dicts=False)
        (tests / f"{exercise}.py").write_text(f"OK_FORMAT = True\n\ntest = {spec}\n", encoding="utf-8")
    with open(folder / "otter_cases.pkl", "wb") as f:
        pickle.dump(cases, f)
    shutil.copy(SUPPORT, folder / SUPPORT.name)
    subprocess.run([str(otter), "generate", "-t", "tests", "-o", "autograder.zip", "--no-config", "--no-requirements",
                    "--no-environment", SUPPORT.name, "otter_cases.pkl"], cwd=folder, check=True, capture_output=True)
    return folder / "autograder.zip", calls


def otter_env(folder: Path) -> dict:
    """otter's environment: this checkout on the path (the notebooks import the course and
    the self-checks), a Jupyter data folder of its own (no kernel of another install)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, JUPYTER_DATA_DIR=str(folder / "jupyter"))


def otter_run(class_dir: Path, autograder_zip: Path, otter: Path, jobs: int, env: dict) -> tuple[float, int]:
    """`otter run` on every notebook, ``jobs`` at a time, each one's results.json beside it."""
    notebooks = sorted((class_dir / "submitted").glob(f"*/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"))
    listing = class_dir / "notebooks.txt"
    listing.write_text("".join(f"{nb}\n" for nb in notebooks), encoding="utf-8")
    one = 'exec "$1" run --no-logo -a "$2" -o "$(dirname "$3")" "$3"'  # xargs appends the notebook: $3
    return run_measured(["xargs", "-a", str(listing), "-d", "\n", "-P", str(jobs), "-n", "1",
                         "sh", "-c", one, "otter-run", str(otter), str(autograder_zip)], class_dir, env)


def otter_scores(class_dir: Path, maxima: dict[str, float]) -> dict[str, dict[str, float]]:
    """student -> exercise -> points, from each notebook's results.json (Gradescope's format:
    one entry per test file, beside a summary of the public cases)."""
    scores = {}
    for result in sorted((class_dir / "submitted").glob(f"*/{ASSIGNMENT}/results.json")):
        student = result.parent.parent.name
        tests = json.loads(result.read_text(encoding="utf-8"))["tests"]
        if any(t["name"].startswith("Autograder") for t in tests):  # its failure to grade, not a score
            raise SystemExit(f"otter could not grade {student}: {tests[-1]['output'][-2000:]}")
        worth = {t["name"]: float(t["max_score"]) for t in tests if "max_score" in t}
        if worth != maxima:
            raise SystemExit(f"otter's points for {student} are {worth}, not the engine's {maxima}")
        scores[student] = {t["name"]: float(t["score"]) for t in tests if "max_score" in t}
    return scores


def full_marks(scores: dict[str, float], maxima: dict[str, float]) -> set[str]:
    return {e for e, s in scores.items() if abs(s - maxima[e]) < EXACT}


def agreement(o: dict, b: dict, maxima: dict[str, float], roster: dict) -> list[str]:
    """The scores' agreement, then one line per student the two graders score differently."""
    students = sorted(b)
    total = {s: (sum(o[s].values()), sum(b[s].values())) for s in students}
    fractions = sorted(t[0] / t[1] for t in total.values() if t[1] > 0)
    same_total = sum(abs(t[0] - t[1]) < EXACT for t in total.values())
    same_full = sum(full_marks(o[s], maxima) == full_marks(b[s], maxima) for s in students)
    class_fraction = sum(t[0] for t in total.values()) / sum(t[1] for t in total.values())
    lines = [f"agreement: the same total for {same_total}/{len(students)} students, full marks on the same "
             f"exercises for {same_full}/{len(students)}; otter's points / grade-batch's {class_fraction:.3f} over "
             f"the class, per student from {fractions[0]:.2f} to {fractions[-1]:.2f} "
             f"(median {fractions[len(fractions) // 2]:.2f}, {len(fractions)} students with points)"]
    for s in students:
        differ = [f"{e} {o[s][e]:g}/{b[s][e]:g}" for e in b[s] if abs(o[s][e] - b[s][e]) >= EXACT]
        if differ:
            lines.append(f"  {s} ({roster[s][ASSIGNMENT]}): otter/grade-batch {', '.join(differ)}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="submissions graded both ways")
    parser.add_argument("--jobs", type=int, default=2, help="otter runs at once, and grade-batch's --jobs")
    parser.add_argument("--venv", type=Path, default=default_venv(), help="otter-grader's own venv")
    args = parser.parse_args()
    otter = ensure_venv(args.venv)
    with tempfile.TemporaryDirectory(prefix="otter-vs-batch-") as tmp:
        tmp = Path(tmp)
        students = honest_class(tmp / "class", args.n)
        roster = json.loads((tmp / "class" / "roster.json").read_text(encoding="utf-8"))
        autograder_zip, calls = otter_assignment(tmp / "otter", otter)
        plan = grade.plan(ASSIGNMENT, students[0])
        engine_calls = {e: len(grade.distinct_calls(cs)) for e, cs in plan.items()}
        maxima = {e: float(sum(c.points for c in cs)) for e, cs in plan.items()}
        load_before = os.getloadavg()[0]
        o_s, o_kib = otter_run(tmp / "class", autograder_zip, otter, args.jobs, otter_env(tmp))
        b_s, b_kib = batch(tmp / "class", tmp / "out", args.jobs)
        o, b = otter_scores(tmp / "class", maxima), batch_scores(tmp / "out")
        if set(o) != set(students) or set(b) != set(students):
            raise SystemExit(f"graded {len(o)} by otter and {len(b)} by grade-batch of {len(students)} students")
        n = args.n
        print(f"N = {n} ps2 notebooks, {os.cpu_count()} cores, load average (1 min) {load_before:.2f} before "
              f"and {os.getloadavg()[0]:.2f} after")
        print("calls per exercise, otter's / grade-batch's: "
              + ", ".join(f"{e} {calls[e]}/{engine_calls[e]}" for e in calls))
        print(f"otter run, {args.jobs} at a time: {o_s:7.1f} s  {1000 * o_s / n:7.1f} ms/submission  "
              f"peak {o_kib // 1024} MiB")
        print(f"grade-batch --jobs {args.jobs}:     {b_s:7.1f} s  {1000 * b_s / n:7.1f} ms/submission  "
              f"peak {b_kib // 1024} MiB")
        print(f"ratio: grade-batch is {o_s / b_s:.0f}x faster")
        print("\n".join(agreement(o, b, maxima, roster)))


if __name__ == "__main__":
    main()
