"""Shared test configuration: which tests are slow, which may not run beside which, and the
wheel a student would install.

``make test`` runs every test; ``make test-fast`` runs ``pytest -m "not slow"``, the inner
loop, in under a minute on a 2-core machine. A module owned here says it is slow with its own
``pytestmark`` (test_nbgrader_loop.py, test_isolation.py), a single slow test with
``@pytest.mark.slow``; the modules below are marked by name, whole, from here.

``make test`` runs on one pytest-xdist worker more than the machine has cores (``-n N --dist loadfile``).
Each module goes to one worker whole, so its module-scoped fixtures (a nbgrader loop, a walk of
the machine, a Dask cluster) are built once; the modules of ``SERIAL`` go to one worker together,
one after the other (``pytest_xdist_make_scheduler``).
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SLOW_MODULES = {
    "test_notebooks.py": "starts a Jupyter kernel per notebook and runs nbgrader generate_assignment",
    "test_packaging.py": "builds the wheel with pip",
    "test_grading_corpus.py": "grades the whole corpus in the sandbox, hangs and memory bombs at their limits",
    "test_judges_fail_closed.py": "feeds every judge hundreds of malformed outcomes",
    "test_nothing_shipped_computes_an_answer.py": "builds the wheel with pip",
    "test_rerun.py": "runs grade-batch again and again over changing classes",
    "test_worked_inputs.py": "recomputes every number of the prose, the long-run table from 20,000 rows",
    "test_pytest_plugin.py": "grades four notebooks in the sandbox, each in a pytest process of its own",
    "test_classroom.py": "runs the generated workflow's steps: pytest on the filled-in notebook, in the sandbox",
    "test_course_contract.py": "grades the right answers, the release and every catalogued mistake of each set",
    "test_authoring.py": "adds an exercise and a set to a copy of the course, rebuilds it, runs the course suite",
    "test_block_course.py": "grades the second course's class in processes of their own",
    "test_cluster.py": "starts a Dask scheduler and workers (twice: plain and mutual TLS) and grades a class on them",
}

# Modules that run processes as nobody (the `none` level, tests/test_isolation.py's
# ``_unprivileged``): test_isolation.py then asserts that no process of nobody's is left on the
# machine and removes nobody's SysV segments, which another module's nobody would fail or lose.
SERIAL = {
    "test_isolation.py": "asserts no process of nobody's is left anywhere; removes nobody's SysV IPC",
    "test_census_paths.py": "its probe runs as nobody at the none level",
    "test_census_syscalls.py": "its probe runs as nobody at the none level",
    "test_refuse_unisolated.py": "runs the grader as nobody on a bare kernel",
    "test_resources.py": "grades its attacks as nobody at the none level, and counts nobody's leftovers",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without xdist (-p no:xdist) never called
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile``, with the modules of ``SERIAL`` one unit of work (one worker, in turn).
    xdist's own ``loadgroup`` cannot do it here: it renames test ids, which pytest 9.2 ignores."""
    if config.getvalue("dist") != "loadfile":
        return None  # xdist's own scheduler for the mode asked
    from xdist.scheduler import LoadFileScheduling

    class Modules(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return "as-nobody" if Path(module).name in SERIAL else module

    return Modules(config, log)


def _shared_temp(tmp_path_factory) -> Path:
    """The run's temporary folder that every xdist worker sees (each has its own below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """A test marked ``alone`` (CPU burners at a raised priority: a wall-clock limit of the
    other worker's would break for their sake) runs while no other worker runs a test: it holds
    the machine lock exclusively, every other test shared, from its fixtures' setup to their
    teardown. The gate keeps a test that waits to run alone from waiting forever: while it
    holds the gate, no other test takes the machine lock."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield  # one process: nothing runs beside it
        return
    shared = Path(item.config.option.basetemp).parent  # xdist gives each worker a folder in the run's
    alone = item.get_closest_marker("alone") is not None
    with open(shared / "machine.gate", "a") as gate, open(shared / "machine.lock", "a") as machine:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(machine, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield  # both released when the files close


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """The package as pip builds it for a student, once per test run whatever the number of
    workers: pip builds in the source tree (build/, the .egg-info), which two builds at once
    would both write."""
    shared = _shared_temp(tmp_path_factory)
    out = shared / "wheel"
    with open(shared / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not list(out.glob("*.whl")):
            building = shared / "wheel.partial"
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(building), str(ROOT)],
                           check=True, capture_output=True)
            building.rename(out)
    (wheel,) = out.glob("*.whl")
    return wheel
