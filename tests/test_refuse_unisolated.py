"""Issue 20.8: where the kernel allows no isolation at all (not root, no user namespaces, no
Landlock), the grader refuses to run submissions unless the operator allows it, and says
what is missing in one line. Tried as nobody on a kernel that seems to lack user namespaces
and Landlock (tests/kernel_variants.py), through both faces an operator uses: the command
(``--allow-unisolated``) and the library (``Sandbox(allow_unisolated=...)``, or
AUTOGRADER_ALLOW_UNISOLATED in the environment)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kernel_variants import variant_cmd
from test_grading_corpus import ROOT
from test_isolation import _unprivileged

pytestmark = pytest.mark.slow  # a zygote (and a grading) per case, as nobody
BARE = frozenset({"landlock", "userns"})
SUBMISSION = ROOT / "tests" / "submissions" / "ps3" / "correct_straightforward.py"
MISSING = ("not root", "no user namespaces", "no Landlock", "--allow-unisolated")


@pytest.fixture(scope="module")
def folder():
    if os.geteuid() != 0:
        pytest.skip("becoming nobody on a bare kernel needs root (CI runs as root)")
    d = Path(tempfile.mkdtemp(prefix="unisolated-"))
    d.chmod(0o777)
    from test_grading_corpus import with_root

    shutil.copy(with_root(SUBMISSION), d / "straight.py")
    (d / "straight.py").chmod(0o644)
    yield d
    shutil.rmtree(d)


def _as_nobody_on_a_bare_kernel(args: list[str], allow_env: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_ALLOW_UNISOLATED"}
    env["AUTOGRADER_QUIET"] = "1"
    if allow_env:
        env["AUTOGRADER_ALLOW_UNISOLATED"] = "1"
    cmd = variant_cmd(_unprivileged([sys.executable, *args]), BARE)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


CLI = ["-c", "import sys; from autograder.cli import main; sys.exit(main(sys.argv[1:]))"]


@pytest.mark.parametrize("command", ["grade", "grade-batch"])
def test_the_command_refuses_in_one_line(folder, command):
    args = [str(folder / "straight.py"), "--assignment", "ps3"] if command == "grade" else \
        [str(folder), "--assignment", "ps3", "--out", str(folder / "out")]
    proc = _as_nobody_on_a_bare_kernel([*CLI, command, *args])
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and all(m in lines[0] for m in MISSING), proc.stderr
    assert not (folder / "out").exists()  # nothing graded, nothing written


def test_the_command_grades_when_allowed(folder):
    proc = _as_nobody_on_a_bare_kernel([*CLI, "grade", str(folder / "straight.py"), "--assignment", "ps3",
                                        "--allow-unisolated"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout)
    assert results["score"] == results["max_score"] > 0
    assert results["extra_data"]["isolation"] == "none"


LIBRARY = """
import json, sys
from autograder.sandbox import Sandbox, Unisolated
try:
    with Sandbox(allow_unisolated={allow}) as s:
        r = s.run(["def f():\\n    return 41 + 1\\n"], [("x", [("f", (), {{}})])], timeout=10)
        print(json.dumps({{"value": r.exercises["x"].outcomes[0].value, "layers": s.layers}}))
except Unisolated as e:
    print(json.dumps({{"refused": str(e)}}))
"""


@pytest.mark.parametrize("allow, env, graded", [("None", False, False), ("False", True, False),
                                                ("None", True, True), ("True", False, True)],
                         ids=["default", "parameter-overrides-env", "env", "parameter"])
def test_the_library_refuses_unless_allowed(folder, allow, env, graded):
    proc = _as_nobody_on_a_bare_kernel(["-c", LIBRARY.format(allow=allow)], allow_env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    if graded:
        assert out.get("value") == 42 and "landlock" not in out["layers"], out
    else:
        assert "\n" not in out["refused"] and all(m in out["refused"] for m in MISSING), out
