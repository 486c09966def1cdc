"""LocalPool: forked workers told their students on a pipe, answering on another. Every student
comes back exactly once; a worker that dies costs only the student it was grading (the others
go to the workers left); Ctrl-C ends the workers at once; no worker outlives close()."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from autograder import pools
from autograder.discovery import Entry
from autograder.tasks import Job, Outcome, RunSettings

STUDENTS = [f"s{i}" for i in range(9)]


def _todo() -> list[Job]:
    return [Job(Entry(s, Path(f"/nowhere/{s}.ipynb")), "new", None) for s in STUDENTS]


@pytest.fixture
def graded_by(monkeypatch, tmp_path):
    """A pool whose workers grade with ``grade`` (student -> Outcome), run in the worker process,
    with no sandbox: what is tested is the pool, not grading."""
    monkeypatch.setattr(pools.prestart, "sandboxes", lambda n, hide: [])
    monkeypatch.setattr(pools, "_worker_sandbox", lambda: None)

    def run(grade, jobs: int):
        monkeypatch.setattr(pools, "_grade_one", lambda job, settings: grade(job.entry.student))
        pool = pools.LocalPool(jobs)
        pool.start(_todo(), RunSettings("ps2", str(tmp_path), 10.0, 0))
        try:
            return {job.entry.student: outcome for job, outcome in pool.outcomes()}, pool
        finally:
            pool.close()
    return run


def _mine(student: str) -> Outcome:
    return Outcome(student, other_set=f"from {os.getpid()}")


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_every_student_comes_back_once_graded_in_a_worker(graded_by, jobs):
    got, _ = graded_by(_mine, jobs)
    assert sorted(got) == STUDENTS
    workers = {o.other_set for o in got.values()}
    assert f"from {os.getpid()}" not in workers and len(workers) <= jobs


def _dies_on(victim: str):
    def grade(student: str) -> Outcome:
        if student == victim:
            os.kill(os.getpid(), signal.SIGKILL)
        return _mine(student)
    return grade


@pytest.mark.parametrize("victim", ["s0", "s4", "s8"])
def test_a_worker_that_dies_costs_only_the_student_it_was_grading(graded_by, victim):
    got, _ = graded_by(_dies_on(victim), 2)
    assert sorted(got) == STUDENTS
    assert got[victim].failure == "a grading worker died (killed by SIGKILL)"
    assert all(o.failure is None for s, o in got.items() if s != victim)


def test_with_no_worker_left_the_rest_are_the_graders_failures(graded_by):
    got, _ = graded_by(_dies_on("s3"), 1)
    assert sorted(got) == STUDENTS
    assert [s for s, o in got.items() if o.failure is None] == ["s0", "s1", "s2"]
    assert {o.failure for s, o in got.items() if s >= "s3"} == {"a grading worker died (killed by SIGKILL)"}


def _pipes_held() -> str:
    """The pipes this process holds, as their inode numbers."""
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("pipe:["):
            held.add(int(target[6:-1]))
    return " ".join(map(str, sorted(held)))


def test_each_worker_holds_its_own_pipes_only(monkeypatch, tmp_path):
    """A worker holding another's end would keep that one from seeing its pipe end, and the
    batch from seeing it die."""
    monkeypatch.setattr(pools.prestart, "sandboxes", lambda n, hide: [])
    monkeypatch.setattr(pools, "_worker_sandbox", lambda: None)
    monkeypatch.setattr(pools, "_grade_one", lambda job, settings: Outcome(str(os.getpid()), other_set=_pipes_held()))
    pool = pools.LocalPool(3)
    pool.start(_todo(), RunSettings("ps2", str(tmp_path), 10.0, 0))
    try:
        own = {w.pid: {os.fstat(w.to).st_ino, os.fstat(w.back.fd).st_ino} for w in pool.workers}
        held = {int(o.student): {int(i) for i in o.other_set.split()} for _, o in pool.outcomes()}
    finally:
        pool.close()
    pool_pipes = set().union(*own.values())
    assert held and all(pipes & pool_pipes == own[pid] for pid, pipes in held.items()), (held, own)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_no_worker_outlives_close(graded_by):
    _, pool = graded_by(_mine, 3)
    assert pool.workers == []
    assert not [p for p in _children() if _alive(p)]


def _children() -> list[int]:
    """This process's children, from /proc (the workers, were any left)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        try:
            line = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and line.rpartition(")")[2].split()[1] == me:
            found.append(int(entry))
    return found


def test_cancel_ends_the_workers_at_once(monkeypatch, tmp_path):
    monkeypatch.setattr(pools.prestart, "sandboxes", lambda n, hide: [])
    monkeypatch.setattr(pools, "_worker_sandbox", lambda: None)
    monkeypatch.setattr(pools, "_grade_one", lambda job, settings: time.sleep(3600))
    pool = pools.LocalPool(2)
    pool.start(_todo(), RunSettings("ps2", str(tmp_path), 10.0, 0))
    pids = [w.pid for w in pool.workers]
    started = time.monotonic()
    pool.close(cancel=True)
    assert time.monotonic() - started < 5
    assert not any(_alive(p) for p in pids)


def test_the_workers_end_once_every_student_is_back_before_close(monkeypatch, tmp_path):
    """The batch writes the class's reports after the last student, and the workers end
    meanwhile: close() then only waits."""
    monkeypatch.setattr(pools.prestart, "sandboxes", lambda n, hide: [])
    monkeypatch.setattr(pools, "_worker_sandbox", lambda: None)
    monkeypatch.setattr(pools, "_grade_one", lambda job, settings: _mine(job.entry.student))
    pool = pools.LocalPool(2)
    pool.start(_todo(), RunSettings("ps2", str(tmp_path), 10.0, 0))
    try:
        assert len(list(pool.outcomes())) == len(STUDENTS)
        ended = [_ends_within(w.pid, 10) for w in pool.workers]
    finally:
        pool.close()
    assert ended == [True, True]


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether the child ``pid`` ends within ``seconds``, left unreaped for close()."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
            return True
        time.sleep(0.01)
    return False
