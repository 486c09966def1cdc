"""Which kind of crash: when a submission's process ends with no result, the grader says how
(exit code, memory, a crash of Python itself, a signal), from the zygote's wait status."""
from __future__ import annotations

import os
import signal

import pytest

from autograder.crashes import NO_RESULT, Ended, clause, sentence
from autograder.results import CellEnd
from autograder.sandbox import Limits, Sandbox

TIMEOUT = 5.0
EXERCISES = [("first", [("first", (), {})]), ("second", [("second", (), {})])]
SECOND_IS_FINE = "def second():\n    return 2\n"


def _run(sandbox: Sandbox, first: str, memory: int | None = None):
    cells = [first, SECOND_IS_FINE]
    if memory is None:
        return sandbox.run(cells, EXERCISES, TIMEOUT)
    return sandbox.run(cells, EXERCISES, TIMEOUT, memory)


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as sb:
        yield sb


# ---------------------------------------------------------------- the status, as data

def _exited(code: int) -> int:
    return code << 8  # a wait status as waitpid gives it


@pytest.mark.parametrize(("status", "oom", "kind", "code"), [
    (_exited(0), False, "exit", 0),
    (_exited(3), False, "exit", 3),
    (signal.SIGSEGV, False, "crash", signal.SIGSEGV),
    (signal.SIGABRT, False, "crash", signal.SIGABRT),
    (signal.SIGKILL, True, "memory", signal.SIGKILL),
    (signal.SIGXCPU, False, "cpu", signal.SIGXCPU),
    (signal.SIGKILL, False, "signal", signal.SIGKILL),
    (None, False, "unknown", 0),
], ids=["exit-0", "exit-3", "segv", "abort", "oom", "xcpu", "kill", "unknown"])
def test_a_wait_status_names_its_kind(status, oom, kind, code):
    ended = Ended.from_status(status, oom, 1 << 30)
    assert (ended.kind, ended.code) == (kind, code)


@pytest.mark.parametrize("doc", [{}, {"kind": "rm -rf"}, {"kind": None}, {"kind": "exit", "code": "x"[:0]}])
def test_an_odd_answer_from_the_zygote_is_unknown_or_plain(doc):
    assert Ended.from_dict(doc).kind in ("unknown", "exit")


def test_the_words_name_the_kind_and_the_limit():
    assert "exit code 3" in clause(Ended("exit", 3))
    assert "(512 MiB)" in clause(Ended("memory", signal.SIGKILL, 512 << 20))
    assert "segmentation fault" in clause(Ended("crash", signal.SIGSEGV))
    message = sentence("softmax", f"{clause(Ended('exit', 3))}, so {NO_RESULT}", Ended("exit", 3))
    assert message.startswith("softmax ended the Python process") and "os._exit" in message


# ---------------------------------------------------------------- in the sandbox

def test_an_exercise_that_exits_is_reported_with_its_exit_code(sandbox):
    run = _run(sandbox, "import os\ndef first():\n    os._exit(3)\n")
    assert run.exercises["first"].status == "crashed"
    assert run.exercises["first"].ended == Ended("exit", 3)
    assert "exit code 3" in run.exercises["first"].detail
    assert run.exercises["second"].status == "ok"  # a fresh child ran the rest


def test_an_exercise_that_crashes_python_is_reported_as_a_crash(sandbox):
    run = _run(sandbox, "import ctypes\ndef first():\n    ctypes.string_at(0)\n")
    assert run.exercises["first"].ended == Ended("crash", signal.SIGSEGV)
    assert "segmentation fault" in run.exercises["first"].detail
    assert run.exercises["second"].status == "ok"


def test_a_cell_that_raises_says_what_it_raised_in_fields(sandbox):
    run = _run(sandbox, "raise ValueError('cell 2 ran past the 5 s time limit')\n")
    (problem,) = run.cell_problems
    assert (problem.cell, problem.ending, problem.error) == (0, CellEnd.RAISED, "ValueError")
    assert problem.message == "ValueError: cell 2 ran past the 5 s time limit"


def test_a_cell_that_exits_is_skipped_with_its_exit_code(sandbox):
    run = _run(sandbox, "import os\nos._exit(5)\n")
    (problem,) = run.cell_problems
    assert (problem.cell, problem.ending) == (0, CellEnd.ENDED) and "exit code 5" in problem.message
    assert run.exercises["second"].status == "ok"


def test_a_child_that_closes_its_results_pipe_and_goes_on_is_unknown_and_ended(sandbox):
    # The grader waits a moment for it to end, then ends it; what it was doing is unknown.
    code = ("import os, time\ndef first():\n    for fd in range(3, 256):\n        try:\n            os.close(fd)\n"
            "        except OSError:\n            pass\n    time.sleep(60)\n")
    run = _run(sandbox, code)
    assert run.exercises["first"].status == "crashed"
    assert run.exercises["first"].ended == Ended("unknown")
    assert run.exercises["second"].status == "ok"


def test_an_exercise_killed_by_the_memory_cgroup_is_reported_as_memory():
    # One process cannot reach the cgroup's limit under the same RLIMIT_AS (it gets a
    # MemoryError first); a submission's processes together can. Here the child's own
    # address-space limit is raised above the cgroup's to reach it with one process.
    limit = 256 << 20
    with Sandbox(limits=Limits(memory=limit)) as sb:
        if "cgroup" not in sb.layers:
            pytest.skip(f"no memory cgroup at this isolation level ({sb.level}: {', '.join(sb.layers)})")
        code = "import numpy as np\ndef first():\n    return float(np.ones(128 << 20).sum())\n"  # 1 GiB, touched
        run = _run(sb, code, memory=8 << 30)
    assert run.exercises["first"].ended == Ended("memory", signal.SIGKILL, limit)
    assert f"({limit >> 20} MiB)" in run.exercises["first"].detail
    assert run.exercises["second"].status == "ok"


def test_the_zygote_never_signals_a_reaped_childs_pid_again(monkeypatch):
    # Once a child's status is read, its pid may be another process's: ending the child
    # afterwards must not kill by that pid (an unreaped one is killed as before).
    from autograder.sandbox.zygote import Child, Zygote

    z = Zygote(Limits(), [])
    z.root, z.namespaces = False, True  # no uid sweep, no orphan hunt: the kills by pid alone
    killed: list[int] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: killed.append(pid))
    monkeypatch.setattr(os, "killpg", lambda pid, sig: killed.append(pid))
    monkeypatch.setattr(z, "finish", lambda c: None)
    z.end(Child(1, 4_000_001, 0, 0, None, (-1, -1, -1), None, status=0))
    assert killed == []
    z.end(Child(2, 4_000_002, 0, 0, None, (-1, -1, -1), None, status=None))
    assert killed == [4_000_002, 4_000_002]


def test_a_sandbox_with_a_smaller_memory_limit_applies_it_to_every_process():
    # Without a per-run memory, the sandbox's own Limits bound each process (RLIMIT_AS): an
    # allocation over it fails inside the submission (MemoryError) instead of being allowed
    # up to the 2 GiB default.
    with Sandbox(limits=Limits(memory=320 << 20)) as sb:
        run = sb.run(["import numpy as np\ndef first():\n    return float(np.ones(64 << 20).sum())\n",
                      SECOND_IS_FINE], EXERCISES, TIMEOUT)  # 512 MiB
    (outcome,) = run.exercises["first"].outcomes
    assert outcome.error == "MemoryError", outcome
