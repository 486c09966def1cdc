"""What a submission finds in its environment: child.environment() of its own folder, every
variable of it and nothing else. The zygote sets it once (child.prepare) for all its children,
so these also check that no child's change reaches the next."""
from __future__ import annotations

import json

import pytest

from autograder.sandbox import Sandbox
from autograder.sandbox.child import environment

SHOW = "import json, os\nprint(json.dumps(dict(os.environ)))\nprint(os.getcwd())"
CALLS = [("f", [("f", (), {})])]


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as sb:
        yield sb


def seen(sandbox: Sandbox) -> tuple[dict, str]:
    text, folder = sandbox.run([SHOW], CALLS, timeout=5).output.splitlines()
    return json.loads(text), folder


def test_the_environment_is_exactly_the_declared_one(sandbox):
    env, folder = seen(sandbox)
    assert env == environment(folder)


def test_nothing_of_the_graders_environment_reaches_a_child(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_TEST_SECRET", "not for students")
    with Sandbox() as sb:
        env, _ = seen(sb)
    assert "AUTOGRADER_TEST_SECRET" not in env


def test_what_a_child_sets_does_not_reach_the_next(sandbox):
    sandbox.run(["import os\nos.environ['LEFT_BY'] = 'student 1'\nos.environ['HOME'] = '/'"], CALLS, timeout=5)
    env, folder = seen(sandbox)
    assert "LEFT_BY" not in env and env["HOME"] == folder


def test_a_childs_streams_write_to_the_grader_line_by_line(sandbox):
    """What it printed before it hung is kept: its streams are line-buffered, though made once."""
    run = sandbox.run(["import sys\nprint('to stdout')\nsys.stderr.write('to stderr\\n')\nwhile True: pass"],
                      CALLS, timeout=1)
    assert "to stdout" in run.output and "to stderr" in run.output
