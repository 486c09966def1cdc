"""Where the sandbox has cgroups (the full level, as root), every thread of a submission, and
every process it starts, is in its slot's groups in each hierarchy (memory, pids, cpu), so its
limits hold for all of them together.

A child joins its groups by writing itself (``0``) into each hierarchy's task list, which moves
its one thread, before any student code runs; what it starts afterwards inherits its groups.
The test reads each task's groups from outside while a submission holds a thread and a forked
process alive, and needs a sample in which all three were there.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from autograder.sandbox import Sandbox
from proc_tree import descendants

HIERARCHIES = ("memory", "pids", "cpu")
SPREAD = '''
import os
import threading
import time


def spread():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, args=(5,))
    thread.start()
    pid = os.fork()
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    time.sleep(1.5)  # the test samples the groups meanwhile
    stop.set()
    thread.join()
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return 1
'''


def _groups(pid: int, tid: int) -> dict[str, str]:
    """A task's group in each of HIERARCHIES (cgroup v1: "N:controller[,controller]:/path")."""
    out = {}
    for line in Path(f"/proc/{pid}/task/{tid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(","):
            if c in HIERARCHIES:
                out[c] = path
    return out


def _sample(zygote: int) -> list[tuple[int, dict[str, str]]]:
    """(tid, its groups) for every thread of every process below the zygote, as they are now."""
    tasks = []
    for pid in descendants(zygote):
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                tasks.append((int(tid), _groups(pid, int(tid))))
        except OSError:  # it ended between the two looks
            continue
    return tasks


@pytest.fixture
def sandbox():
    if os.geteuid() != 0:
        pytest.skip("cgroups are the full level's, which takes root")
    with Sandbox() as sb:
        if "cgroup" not in sb.layers:
            pytest.skip(f"no cgroup layer on this machine (layers: {', '.join(sb.layers)})")
        yield sb


def test_every_thread_and_process_of_a_submission_is_in_its_slots_groups(sandbox):
    zygote = sandbox.proc.pid
    samples: list[list[tuple[int, dict[str, str]]]] = []
    done = threading.Event()

    def watch():
        while not done.is_set():
            samples.append(_sample(zygote))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run = sandbox.run([SPREAD], [("spread", [("spread", (), {})])], timeout=10)
    finally:
        done.set()
        watcher.join()
    assert run.exercises["spread"].status == "ok"
    busiest = max(samples, key=len)
    assert len(busiest) >= 3, f"never saw the child, its thread and its process together: {busiest}"
    own = f"/autograder-{zygote}/slot-"
    for tid, groups in busiest:
        assert sorted(groups) == sorted(HIERARCHIES), (tid, groups)
        for c, path in groups.items():
            assert own in path, f"task {tid} is in {c} group {path}, not one of the zygote's slots"
        assert len({path.rsplit("/", 1)[1] for path in groups.values()}) == 1, (tid, groups)  # one slot
