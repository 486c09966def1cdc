"""One submission in, one Results out: load → sandboxed run → trusted judging."""
from __future__ import annotations

import dataclasses
import hashlib
import time
from pathlib import Path

import numpy as np

from . import crashes, misconceptions, reference, submission, worked_examples
from .assignments import exercise, exercises
from .checks import Call, Check, Spec, Verdict, run_judge, test_name
from .names import cap, cap_lines, one_line, raw_bytes
from .prestart import hidden_paths  # noqa: F401 - where every face has found it
from .results import Finding, Kind, Results, TestResult
from .sandbox import ExerciseRun, Sandbox, frames
from .sandbox.handle import Status

DEFAULT_TIMEOUT = 10.0
# Text stored in a results file is capped here, on the grader's side, whatever the sandbox
# or a judge handed over: a submission that prints or returns 64 MiB of "<" must not make a
# 64 MB results file (nor a 256 MB feedback page once escaped).
MAX_TEST_OUTPUT = 4000  # characters of one test's output
MAX_PRINTED = 2000  # characters of the submission's own printing shown (the last ones)
MAX_OUTPUT = 8000  # characters of the results' top-level output in all


def seed_for(assignment: str, student: str) -> int:
    """Reproducible for a student, different between students (outputs cannot be shared)."""
    # A name that is not UTF-8 (a Latin-1 byte left by unzip) is hashed as its bytes on disk.
    return int.from_bytes(hashlib.sha256(raw_bytes(f"{assignment}/{student}")).digest()[:8], "big")


def plan(assignment: str, student: str) -> dict[str, list[Check]]:
    """Every exercise's checks, with inputs drawn for this student."""
    seed = seed_for(assignment, student)
    return {name: exercise(name).checks(np.random.default_rng([seed, i]))
            for i, name in enumerate(exercises(assignment))}


def load_for(assignment: str) -> None:
    """Load now what grading the first student of ``assignment`` loads: its exercises' modules
    (drawing a plan imports them), the reference answers and the worked examples' table.
    grade-batch calls it before it forks its workers, which then share them (some 20 ms each)."""
    plan(assignment, "")
    reference.load()
    worked_examples.load()


def visible_plan(assignment: str) -> dict[str, list[Check]]:
    """Every exercise's visible checks, on the notebook's own inputs: what a student's
    environment, which holds no reference, can judge."""
    from .selfcheck import visible_checks

    return {name: visible_checks(name) for name in exercises(assignment)}


def grade(path: str | Path, assignment: str, *, sandbox: Sandbox, student: str | None = None,
          timeout: float = DEFAULT_TIMEOUT, memory: int | None = None, base: str | Path | None = None,
          visible_only: bool = False) -> Results:
    """Grade one file. Whatever is wrong with the file is in the Results; only the grader's
    own failure raises (GraderError from the sandbox or a judge, or a bug). ``memory``: bytes
    per process (default: the sandbox's own limit). ``visible_only``: the visible checks alone
    (``visible_plan``), judged without the reference."""
    started = time.monotonic()
    return grade_loaded(submission.load(path, base=base), assignment, sandbox=sandbox, student=student,
                        timeout=timeout, memory=memory, started=started, visible_only=visible_only)


def grade_loaded(sub: submission.Submission, assignment: str, *, sandbox: Sandbox, student: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, memory: int | None = None,
                 started: float | None = None, visible_only: bool = False) -> Results:
    """Grade a loaded submission (``grade`` without the reading: a file another machine read
    and could not, say); the student defaults to the file's stem. ``started``: when the
    grading began (its reading included), for ``execution_time``."""
    started = time.monotonic() if started is None else started
    checks = visible_plan(assignment) if visible_only else plan(assignment, student or sub.path.stem)
    calls = {name: distinct_calls(cs) for name, cs in checks.items()}
    jobs = [(name, [call.as_job() for call in cs]) for name, cs in calls.items()]
    # Before the run: a sandbox launched early (Sandbox.launch) is still starting meanwhile.
    ref = None if visible_only else reference.Answers(reference.load())
    worked_examples.load()  # the visible checks' table
    if sub.cells:
        run = sandbox.run(sub.code, jobs, timeout, memory)
        cells = [dataclasses.replace(p, label=sub.labels[p.cell], error=one_line(p.error), message=one_line(p.message))
                 for p in run.cell_problems]
        problems = sub.all_problems() + [p.line() for p in cells]
        runs, printed = run.exercises, run.outputs
    else:
        runs = {name: ExerciseRun("empty") for name in checks}
        problems, printed, cells = sub.all_problems() or ["the submission has no code"], (), []
    tests = []
    for name, cs in checks.items():
        tests += _judge_exercise(name, cs, calls[name], runs[name], ref, timeout)
    problems = cap_lines(problems, MAX_OUTPUT - MAX_PRINTED - 100)
    shown = set(problems)  # a cell's problem cut from the lines is cut from the typed ones too
    return Results(
        score=sum(t.score for t in tests), max_score=sum(t.max_score for t in tests),
        execution_time=round(time.monotonic() - started, 4),
        problems=problems, tests=tests, cell_problems=[p for p in cells if p.line() in shown],
        extra_data={"isolation": getattr(sandbox, "level", "none"),
                    "isolation_layers": list(getattr(sandbox, "layers", []))},
        **Results.printed_by(printed, MAX_PRINTED))


def distinct_calls(checks: list[Check]) -> list[Call]:
    """Each call once, however many checks read its outcome (a check shares a call by
    holding the same Call object)."""
    seen: dict[int, Call] = {}
    for check in checks:
        for call in check.calls:
            seen.setdefault(id(call), call)
    return list(seen.values())


def _judge_exercise(name: str, checks: list[Check], calls: list[Call], run: ExerciseRun, ref,
                    timeout: float) -> list[TestResult]:
    where = {id(call): i for i, call in enumerate(calls)}
    outcomes, malformed = (), ""
    if run.status == Status.OK:
        try:
            outcomes = frames.match(run.outcomes, [call.echo for call in calls])
        except frames.Malformed as e:  # as many results as calls, or it is not this job's
            malformed = f"{name} {frames.NOT_A_RESULT} ({e}), so {crashes.UNTRUSTED}."
    out = []
    for check in checks:
        if run.status == Status.OK and not malformed:
            verdict = run_judge(check, [outcomes[where[id(call)]] for call in check.calls], ref)
            if (ref is not None and verdict.misconception and verdict.finding is not None
                    and ref.inherited(name, verdict.misconception)):
                verdict = dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, inherited=True))
        elif run.status in (Status.OK, Status.MALFORMED):
            verdict = Verdict(False, malformed or crashes.sentence(name, run.detail, None), "crashed",
                              finding=Finding(Kind.UNTRUSTED))
        elif run.status == Status.TIMEOUT:
            said = misconceptions.explain("timeout", func=name, limit=timeout)
            verdict = Verdict(False, said, "timeout", finding=Finding(Kind.TIMEOUT, said, "", {"limit": timeout}))
        elif run.status == Status.EMPTY:
            verdict = Verdict(False, "nothing in the submission could be run (see the problems above).",
                              finding=Finding(Kind.NOT_RUN))
        else:
            verdict = Verdict(False, crashes.sentence(name, run.detail or f"failed, so {crashes.NO_RESULT}", run.ended),
                              "crashed", finding=Finding(Kind.CRASHED, ended=run.ended.kind if run.ended else ""))
        out.append(to_test_result(name, check.spec, verdict))
    return out


def to_test_result(exercise_name: str, spec: Spec, verdict: Verdict) -> TestResult:
    tags = [f"exercise:{exercise_name}"] + ([f"misconception:{verdict.misconception}"] if verdict.misconception else [])
    extra = {}
    if verdict.heatmap is not None:
        expected, got = verdict.heatmap
        got = np.round(np.asarray(got, float), 4)
        if not np.isfinite(got).all():  # the common all-finite map skips nan_to_num's several passes
            got = np.nan_to_num(got, nan=-1.0)
        extra["heatmap"] = {"expected": np.round(np.asarray(expected, float), 4).tolist(), "got": got.tolist()}
    return TestResult(
        name=test_name(exercise_name, spec), score=spec.points if verdict.passed else 0,
        max_score=spec.points, status="passed" if verdict.passed else "failed",
        output=cap(verdict.message, MAX_TEST_OUTPUT),
        visibility="visible" if spec.visible else "after_due_date", tags=tags, extra_data=extra,
        finding=_stored(verdict.finding))


def _stored(finding: Finding | None) -> Finding | None:
    """A finding as a results file keeps it: its texts capped as the output is (a judge's words
    may quote what a submission sent), its numbers as JSON's."""
    if finding is None:
        return None
    texts = {k: cap(getattr(finding, k), MAX_TEST_OUTPUT) for k in ("explanation", "ended", "error")}
    detail = None if finding.detail is None else cap(finding.detail, MAX_TEST_OUTPUT)
    numbers = {str(k): _plain_number(v) for k, v in finding.numbers.items()}
    return dataclasses.replace(finding, detail=detail, numbers=numbers, **texts)


def _plain_number(v):
    """A number an explanation quotes, as JSON holds it (numpy's as Python's; anything else as text)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and np.isfinite(v):
        return float(v)
    return str(v)


def ungraded(assignment: str, student: str, reason: str) -> Results:
    """Every check failed with ``reason``: the record of a submission that could not be graded.
    (The declarations suffice: no inputs are drawn.)"""
    tests = [to_test_result(name, spec, Verdict(False, reason, finding=Finding(Kind.NOT_RUN)))
             for name in exercises(assignment) for spec in exercise(name).specs]
    return Results(score=0, max_score=sum(t.max_score for t in tests), execution_time=0.0, problems=[reason],
                   tests=tests)
