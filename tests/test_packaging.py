"""What a student can install holds no answer: neither solutions/ nor the mistake variants."""
import ast
import inspect
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import solutions.mistakes
import solutions.ps1
import solutions.ps2
import solutions.ps3

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_text(tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        return {name: z.read(name).decode(errors="replace") for name in z.namelist()}


def _body_lines():
    """Each statement line of every reference function and mistake variant, unparsed."""
    lines = set()
    for module in (solutions.ps1, solutions.ps2, solutions.ps3, solutions.mistakes):
        for func in vars(module).values():
            if inspect.isfunction(func) and func.__module__ == module.__name__:
                node = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
                for stmt in ast.walk(node):
                    if isinstance(stmt, (ast.Assign, ast.Return)) and len(ast.unparse(stmt)) > 30:
                        lines.add(ast.unparse(stmt))
    return lines


def test_wheel_ships_only_the_grader(wheel_text):
    packages = {name.split("/")[0] for name in wheel_text if not name.split("/")[0].endswith(".dist-info")}
    assert packages == {"autograder"}


def test_wheel_contains_no_reference_or_mistake_code(wheel_text):
    code = "\n".join(ast.unparse(ast.parse(text)) for name, text in wheel_text.items() if name.endswith(".py"))
    leaked = sorted(line for line in _body_lines() if line in code)
    assert leaked == []


def test_leak_detector_sees_reference_code():
    source = "\n".join(ast.unparse(ast.parse((ROOT / "solutions" / f).read_text())) for f in ("ps2.py", "mistakes.py"))
    assert sum(line in source for line in _body_lines()) > 20
