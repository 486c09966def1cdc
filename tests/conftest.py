"""Shared test configuration: which tests are slow, and the wheel a student would install.

``make test`` runs every test; ``make test-fast`` runs ``pytest -m "not slow"``, the inner
loop, in under a minute on a 2-core machine. A module owned here says it is slow with its own
``pytestmark`` (test_nbgrader_loop.py, test_isolation.py), a single slow test with
``@pytest.mark.slow``; the modules below are marked by name, whole, from here.
"""
from __future__ import annotations

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """The package as pip builds it for a student, once per test run."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = out.glob("*.whl")
    return wheel
