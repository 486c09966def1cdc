"""An end the student did not cause is not a grade (issue 20, item 7; docs/grader-failures.md).

A sandbox child killed from outside (SIGKILL by its pid, as another root process or the
host's OOM killer would) at each stage of its life is retried once in a fresh child, which
gives the right grade; killed twice, the job is the grader's failure (GraderError) and
grade-batch stores no grade. Ends the submission causes stay its own. Deadlines count the
child's own time, so CPU burners on the machine cost a correct submission nothing, while
code that loops or sleeps still runs out of time.
"""
from __future__ import annotations

import csv
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import wire
from autograder.crashes import KERNEL_FOR_ITSELF, REFUSES_SIGNALS, Ended, Whose, whose
from autograder.errors import GraderError
from autograder.results import CellEnd
from autograder.sandbox import Sandbox
from autograder.sandbox import handle

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 5.0
EXERCISES = [("first", [("first", (), {})]), ("second", [("second", (), {})]), ("third", [("third", (), {})])]
MARK_CELL, MARK_EXERCISE = "mark-in-cell", "mark-in-exercise"
# Cell 0 says where it is and lingers, so the test can kill the child inside it; first()
# does the same inside an exercise; second() and third() linger too, so a kill as the
# result of any but the last comes in lands before the child's next RESULT or DONE.
# Right answers: first() == 1, second() == 2, third() == 3.
CELLS = [f"import time\nprint({MARK_CELL!r}, flush=True)\ntime.sleep(0.3)\n",
         f"def first():\n    print({MARK_EXERCISE!r}, flush=True)\n    time.sleep(0.3)\n    return 1\n",
         "import time\ndef second():\n    time.sleep(0.1)\n    return 2\n\n"
         "def third():\n    time.sleep(0.3)\n    return 3\n"]


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as sb:
        yield sb


@pytest.fixture()
def refusing(sandbox, monkeypatch):
    """A sandbox where no submission can kill its own process with a signal of its choosing:
    with namespaces (each child the init of its own pid namespace) it is so already; else
    as where the seccomp allow-list refuses every way to send one (the layer the branch
    seccomp-allow adds, reported here by name only: what is tried is the attribution, with
    kills that come from the test, outside the sandbox)."""
    if "namespaces" not in sandbox.layers:
        monkeypatch.setattr(sandbox, "layers", [*sandbox.layers, REFUSES_SIGNALS])
    return sandbox


@pytest.fixture()
def uid_like(sandbox, monkeypatch):
    """The sandbox's attribution as at the uid level today: no pid namespace, no filter."""
    monkeypatch.setattr(sandbox, "layers", [x for x in sandbox.layers if x not in ("namespaces", REFUSES_SIGNALS)])
    return sandbox


def right(run) -> bool:
    values = {name: [o.value for o in r.outcomes] for name, r in run.exercises.items()}
    return values == {"first": [1], "second": [2], "third": [3]} and run.cell_problems == []


# ---------------------------------------------------------------- killing from outside

def pid_here(c: handle._Child) -> int:
    """The child's pid as this process sees it (the zygote's pid namespace may differ)."""
    with open(f"/proc/self/fdinfo/{c.pidfd}") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Pid:"))


def kill_from_outside(c: handle._Child) -> None:
    """SIGKILL the child by its pid, and wait until it is dead (a zombie or gone)."""
    pid = pid_here(c)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0]
        except OSError:
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.001)
    raise AssertionError(f"child {pid} did not die")


class Killer:
    """Kills the first ``times`` children at ``stage`` (a hook on the grader's side of the
    pipes: it sees what the grader sees, and kills before the grader reads on)."""

    def __init__(self, monkeypatch, stage: str, times: int):
        self.stage, self.left, self.current, self.killed = stage, times, None, set()
        real_spawn, real_keep, real_reader = handle.Sandbox._spawn, handle._Output._keep, handle.Reader
        killer = self

        def spawn(sb):
            c = killer.current = real_spawn(sb)
            if stage == "before SETUP_OK" and killer._due(c):
                kill_from_outside(c)
                # What a child killed before it confined itself leaves: a results pipe that
                # ends with nothing in it (the SETUP_OK the pre-forked child may already have
                # written is dropped with the pipe).
                r, w = os.pipe()
                os.close(w)
                os.close(c.results)
                c.results = r
            elif stage == "after SETUP_OK" and killer._due(c):
                select.select([c.results], [], [], 30)  # SETUP_OK is in the pipe: it waits for its job
                kill_from_outside(c)
            return c

        def keep(out, chunk):
            real_keep(out, chunk)
            mark = {"in the first cell": MARK_CELL, "in an exercise": MARK_EXERCISE}.get(stage)
            if mark and mark.encode() in chunk and killer._due(killer.current):
                kill_from_outside(killer.current)

        class Reader(real_reader):
            def next(self, *a, **k):
                frame = super().next(*a, **k)
                # The kill lands after the child's RESULT, before or just after its next EXERCISE
                # frame (the kernel's timing decides which; both are "after student code").
                if (stage == "between exercises" and frame and frame[0] is handle.Kind.RESULT
                        and not killer.last_result(frame) and killer._due(killer.current)):
                    kill_from_outside(killer.current)
                return frame

        monkeypatch.setattr(handle.Sandbox, "_spawn", spawn)
        monkeypatch.setattr(handle._Output, "_keep", keep)
        monkeypatch.setattr(handle, "Reader", Reader)

    def last_result(self, frame) -> bool:
        return wire.decode(frame[1])[0].get("value") == 3  # third()'s: DONE follows at once

    def _due(self, c) -> bool:
        """Whether to kill ``c``: each child once (frames it sent before it died still come
        in), the first ``times`` children."""
        if self.left <= 0 or c.id in self.killed:
            return False
        self.left -= 1
        self.killed.add(c.id)
        return True


BEFORE_STUDENT_CODE = ["before SETUP_OK", "after SETUP_OK"]
AFTER_STUDENT_CODE = ["in the first cell", "between exercises", "in an exercise"]


@pytest.mark.parametrize("stage", BEFORE_STUDENT_CODE)
def test_a_child_killed_before_student_code_is_retried_and_grades_right(sandbox, monkeypatch, stage):
    before = len(sandbox.not_the_students)
    Killer(monkeypatch, stage, times=1)
    run = sandbox.run(CELLS, EXERCISES, TIMEOUT)
    assert right(run)
    assert len(sandbox.not_the_students) == before + 1
    assert "before" in sandbox.not_the_students[-1]


@pytest.mark.parametrize("stage", BEFORE_STUDENT_CODE + AFTER_STUDENT_CODE)
def test_a_child_killed_twice_is_the_graders_failure(refusing, monkeypatch, stage):
    Killer(monkeypatch, stage, times=2)
    with pytest.raises(GraderError, match="without the submission's doing, 2 times"):
        refusing.run(CELLS, EXERCISES, TIMEOUT)


@pytest.mark.parametrize("stage", AFTER_STUDENT_CODE)
def test_where_signals_are_refused_a_kill_from_outside_is_retried(refusing, monkeypatch, stage):
    before = len(refusing.not_the_students)
    Killer(monkeypatch, stage, times=1)
    run = refusing.run(CELLS, EXERCISES, TIMEOUT)
    assert right(run)
    assert len(refusing.not_the_students) == before + 1
    assert "SIGKILL" in refusing.not_the_students[-1]


def test_where_it_could_signal_itself_a_kill_in_an_exercise_is_the_students_as_before(uid_like, monkeypatch):
    # The submission could have sent it itself: the fallback keeps today's attribution.
    before = len(uid_like.not_the_students)
    Killer(monkeypatch, "in an exercise", times=1)
    run = uid_like.run(CELLS, EXERCISES, TIMEOUT)
    assert run.exercises["first"].status == "crashed"
    assert run.exercises["first"].ended == Ended("signal", signal.SIGKILL)
    assert run.exercises["second"].outcomes[0].value == 2
    assert len(uid_like.not_the_students) == before


@pytest.mark.parametrize("stage", BEFORE_STUDENT_CODE)
def test_where_it_could_signal_itself_a_kill_before_student_code_is_still_retried(uid_like, monkeypatch, stage):
    before = len(uid_like.not_the_students)
    Killer(monkeypatch, stage, times=1)
    assert right(uid_like.run(CELLS, EXERCISES, TIMEOUT))
    assert len(uid_like.not_the_students) == before + 1


# ---------------------------------------------------------------- what the student does is theirs

SELF_INFLICTED = {
    "kill itself": "import os, signal\ndef first():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "segfault": "import ctypes\ndef first():\n    ctypes.string_at(0)\n",
    "alarm it armed": "import signal, time\ndef first():\n    signal.setitimer(signal.ITIMER_REAL, 0.01)\n"
                      "    time.sleep(0.5)\n",
    "exit": "import os\ndef first():\n    os._exit(3)\n",
}


def lost_first_only(run) -> bool:
    first = run.exercises["first"]
    right_first = first.status == "ok" and [o.value for o in first.outcomes] == [1]
    return not right_first and run.exercises["second"].outcomes[0].value == 2


@pytest.mark.parametrize("how", sorted(SELF_INFLICTED))
def test_an_end_the_student_causes_costs_that_exercise_and_is_not_retried(refusing, how):
    # As the init of its pid namespace a child's own kill and alarm are dropped (its function
    # then returns None); a segfault and an exit end it: either way the exercise is lost.
    before = len(refusing.not_the_students)
    run = refusing.run([SELF_INFLICTED[how], CELLS[2]], EXERCISES, TIMEOUT)
    assert lost_first_only(run)
    assert len(refusing.not_the_students) == before


UID_LEVEL = ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", "--"]  # as test_isolation.py
AT_UID_LEVEL = """
import json, os, sys
os.environ["AUTOGRADER_QUIET"] = "1"
sys.path.insert(0, sys.argv[1])
from autograder.sandbox import Sandbox
cells, exercises = json.loads(sys.argv[2])
with Sandbox() as sb:
    run = sb.run(cells, [(n, [tuple(c) for c in calls]) for n, calls in exercises], 5.0)
    print(json.dumps({"level": sb.level, "retried": sb.not_the_students,
                      "first": [run.exercises["first"].status, run.exercises["first"].detail],
                      "first_errors": [o.error for o in run.exercises["first"].outcomes],
                      "refuses_signals": "seccomp allow-list" in sb.layers,
                      "second": [o.value for o in run.exercises["second"].outcomes]}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid level needs root without CAP_SYS_ADMIN")
@pytest.mark.parametrize("how", ["kill itself", "alarm it armed"])
def test_at_the_uid_level_a_student_who_signals_itself_loses_the_exercise(how):
    job = json.dumps([[SELF_INFLICTED[how], CELLS[2]], [[n, [list(c) for c in calls]] for n, calls in EXERCISES]])
    done = subprocess.run([*UID_LEVEL, sys.executable, "-c", AT_UID_LEVEL, str(ROOT), job],
                          capture_output=True, text=True, timeout=120)
    got = json.loads(done.stdout)
    assert got["level"] == "uid"
    if got["refuses_signals"]:  # the allow-list refuses kill() and the timers: the call raises
        assert got["first"][0] == "ok" and got["first_errors"] in (["OSError"], ["itimer_error"])
    else:  # the signal lands, and it is the student's
        assert got["first"][0] == "crashed" and "killed by SIG" in got["first"][1]
    assert got["second"][0] == 2 and got["retried"] == []


# ---------------------------------------------------------------- whose, for every signal

@pytest.mark.parametrize("number", sorted(int(s) for s in signal.valid_signals()))
@pytest.mark.parametrize("refused", [False, True], ids=["no filter", "filter"])
def test_every_signal_has_an_owner(number, refused):
    """A signal death is the grader's only where the filter refuses the submission every way
    to send one, and only for a signal no process brings on itself."""
    got = whose(Ended("signal", number), signals_refused=refused)
    assert got is (Whose.GRADER if refused and number not in KERNEL_FOR_ITSELF else Whose.STUDENT)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGRTMIN])
def test_signals_only_another_process_sends_are_not_the_students_under_the_filter(sig):
    assert whose(Ended("signal", sig), signals_refused=True) is Whose.GRADER


@pytest.mark.parametrize("ended", [Ended("exit", 0), Ended("memory", 9, 1 << 30), Ended("cpu", 24),
                                   Ended("crash", 11), Ended("unknown")], ids=lambda e: e.kind)
def test_exits_memory_cpu_crashes_and_unknown_ends_are_the_students(ended):
    assert whose(ended, signals_refused=True) is Whose.STUDENT


@pytest.mark.parametrize(("cpu", "kind"), [(5.0, "cpu"), (4.995, "cpu"), (4.9, "signal"), (0.0, "signal")])
def test_a_sigkill_at_the_cpu_rlimit_is_the_cpu_limit(cpu, kind):
    # soft == hard RLIMIT_CPU: the kernel's kill at the limit is a SIGKILL (CPU_TOLERANCE: 0.01 s)
    assert Ended("signal", signal.SIGKILL, cpu=cpu).at_cpu_limit(5).kind == kind


def test_the_zygote_reports_the_cpu_a_child_used(sandbox, monkeypatch):
    seen = []
    real = handle.Sandbox._how_ended
    monkeypatch.setattr(handle.Sandbox, "_how_ended", lambda sb, c: seen.append(real(sb, c)) or seen[-1])
    spin = "import os, time\ndef first():\n    t = time.process_time()\n    while time.process_time() - t < 0.3:\n" \
           "        pass\n    os._exit(0)\n"
    sandbox.run([spin, CELLS[2]], EXERCISES, TIMEOUT)
    assert seen and seen[0].kind == "exit" and seen[0].cpu >= 0.3


# ---------------------------------------------------------------- time is the student's own

def _higher_priority() -> None:
    if os.geteuid() != 0:
        return
    os.nice(-10)
    try:  # the session's autogroup, where the kernel makes them
        with open("/proc/self/autogroup", "w") as f:
            f.write("-10")
    except OSError:
        pass


class Burners:
    """CPU burners at a higher priority than the sandbox (nice -10 as root), started and
    killed by pid: the sandbox's child gets a small share of a core."""

    def __init__(self, n: int):
        self.n = n

    def __enter__(self):
        # Each in a session of its own: with autogroups a nice value counts only inside one.
        self.procs = [subprocess.Popen([sys.executable, "-S", "-c", "while 1: pass"], start_new_session=True,
                                       preexec_fn=_higher_priority) for _ in range(self.n)]
        time.sleep(0.2)  # until they spin
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()


LOAD = 3 * (os.cpu_count() or 1)
WORK = 0.2  # CPU seconds the exercise needs
SHORT = 1.0  # its limit: 5x what it needs, less than it takes in wall time on the loaded machine
WORKS = ("import time\ndef first():\n    t = time.process_time()\n"
         f"    while time.process_time() - t < {WORK}:\n        pass\n    return 1\n")


@pytest.mark.alone  # its burners would starve the other xdist worker's tests
def test_on_a_loaded_machine_a_correct_exercise_keeps_its_points(sandbox):
    with Burners(LOAD):
        run = sandbox.run([WORKS], EXERCISES[:1], SHORT)
    assert run.exercises["first"].status == "ok" and run.exercises["first"].outcomes[0].value == 1
    # The evidence that a wall-clock deadline would have failed it: it took longer than its limit.
    assert run.seconds > SHORT


@pytest.mark.alone  # its burners would starve the other xdist worker's tests
def test_code_that_sleeps_still_times_out_on_a_loaded_machine(sandbox):
    sleeps = "import time\ndef first():\n    time.sleep(1e9)\n"
    with Burners(LOAD):
        run = sandbox.run([sleeps, CELLS[2]], EXERCISES, SHORT)
    assert run.exercises["first"].status == "timeout"
    assert run.exercises["second"].status == "ok"
    assert run.seconds < handle.BACKSTOP * SHORT


NEVER_ENDS = {
    "loop": "def first():\n    while True:\n        pass\n",
    "blocking read": "import os\ndef first():\n    r, w = os.pipe()\n    os.read(r, 1)\n",
    "sleep": "import time\ndef first():\n    time.sleep(1e9)\n",
}


@pytest.mark.parametrize("how", sorted(NEVER_ENDS))
def test_an_exercise_that_never_ends_still_times_out(sandbox, how):
    start = time.monotonic()
    run = sandbox.run([NEVER_ENDS[how], CELLS[2]], EXERCISES, SHORT)
    assert run.exercises["first"].status == "timeout"
    assert run.exercises["second"].outcomes[0].value == 2
    assert time.monotonic() - start < 10 * SHORT  # unloaded: about SHORT, plus a fresh child


def test_a_cell_that_never_ends_is_skipped_at_its_limit(sandbox):
    run = sandbox.run(["while True:\n    pass\n", CELLS[2]], EXERCISES[1:], SHORT)
    (problem,) = run.cell_problems
    assert (problem.cell, problem.ending) == (0, CellEnd.TIMEOUT) and "time limit" in problem.message
    assert run.exercises["second"].outcomes[0].value == 2


@pytest.mark.alone  # its burners would starve the other xdist worker's tests
def test_own_time_is_wall_time_minus_the_wait_for_a_cpu():
    fd = os.open("/proc/self/schedstat", os.O_RDONLY)
    try:
        own = handle._OwnTime(fd)
        with Burners(LOAD):
            wall, mine = time.monotonic(), own.now()
            t = time.process_time()
            while time.process_time() - t < 0.05:
                pass
            wall, mine = time.monotonic() - wall, own.now() - mine
    finally:
        os.close(fd)
    assert mine < wall  # it waited for a CPU, and that was not counted
    assert mine >= 0.05 - 0.01  # it ran 0.05 s of CPU, and that was (schedstat and rusage agree to 10 ms)


# ---------------------------------------------------------------- grade-batch stores no grade

def test_grade_batch_stores_no_grade_for_a_child_killed_twice_and_grades_it_next_time(tmp_path, monkeypatch):
    from autograder.batch import run_batch

    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "ada.py").write_text((ROOT / "tests" / "submissions" / "ps1" / "correct_python_loops.py").read_text())
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        Killer(m, "after SETUP_OK", times=2)  # inherited by the forked worker
        result = run_batch(klass, "ps1", out, jobs=1, progress=False)
    assert [f.student for f in result.failures] == ["ada"]
    assert "2 times" in result.failures[0].reason
    assert not (out / "ada.json").exists()
    (row,) = [r for r in csv.DictReader((out / "grades.csv").open()) if r.get("student") == "ada"]
    assert not any(v for k, v in row.items() if k != "student")
    again = run_batch(klass, "ps1", out, jobs=1, progress=False)  # a re-run grades it
    assert not again.failures and (out / "ada.json").exists()


# ---------------------------------------------------------------- the corpus's self-signallers at the uid level

SELF_SIGNALLERS = ["hostile_kills_itself.py", "hostile_alarm_kills_itself.py", "hostile_timer_sigkill.py",
                   "hostile_sigio_sigkill.py"]
GRADE_AT_UID_LEVEL = """
import json, os, sys
os.environ["AUTOGRADER_QUIET"] = "1"
sys.path.insert(0, sys.argv[1])
from autograder.grade import grade, hidden_paths
from autograder.sandbox import Sandbox
out = {}
with Sandbox(hide=hidden_paths()) as sb:
    for f in sys.argv[2:]:
        r = grade(f, "ps1", sandbox=sb, timeout=5)
        out[os.path.basename(f)] = {"level": sb.level, "scores": r.exercise_scores(),
                                    "retried": list(sb.not_the_students),
                                    "says": [t.output for t in r.tests if t.name.startswith("wired_attention")][0]}
print(json.dumps(out))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid level needs root without CAP_SYS_ADMIN")
def test_at_the_uid_level_the_corpus_self_signallers_lose_their_exercise_and_nothing_is_retried():
    # The corpus grades them at the test's own level (full, as root): there the init of a pid
    # namespace drops their signals. Here they land: each is a kill the submission made.
    from test_grading_corpus import SUBMISSIONS, with_root

    files = [str(with_root(SUBMISSIONS / "ps1" / name)) for name in SELF_SIGNALLERS]
    done = subprocess.run([*UID_LEVEL, sys.executable, "-c", GRADE_AT_UID_LEVEL, str(ROOT), *files],
                          capture_output=True, text=True, timeout=300)
    got = json.loads(done.stdout)
    for name in SELF_SIGNALLERS:
        g = got[name]
        assert g["level"] == "uid" and g["retried"] == []
        assert g["scores"]["wired_attention"] == 0
        # The kill lands ("killed by SIG..."), or the allow-list refuses it and the file's
        # fallback ends the process itself: the student's end either way.
        assert any(w in g["says"] for w in ("killed by SIG", "os._exit", "Function not implemented")), (
            name, g["says"])
