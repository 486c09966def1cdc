"""The View (sandbox/view.py): what it declares, whatever the census then finds. Fast checks
of its rules on this interpreter; tests/test_census_paths.py proves the kernel keeps it."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import site
import sys
import tempfile
from pathlib import Path

import numpy
import pytest

from autograder.sandbox import view as view_mod
from autograder.sandbox.view import View, declare, inside
from autograder.sandbox.zygote import PRELOAD

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def loaded():
    for name in PRELOAD:
        importlib.import_module(name)
    view_mod.warm_numpy()
    return [m for n, m in sys.modules.items() if m is not None and (n in PRELOAD or n.split(".")[0] == "numpy")]


@pytest.fixture(scope="module")
def view() -> View:
    """As the zygote declares it: in a fresh interpreter that imported only PRELOAD (this one
    has pytest's and hypothesis's native modules mapped)."""
    code = ("import json, sys; from autograder.sandbox.zygote import preload; "
            "print(json.dumps(preload(sys.argv[1:]).to_dict()))")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, check=True,
                         cwd=ROOT, timeout=120)
    return View.from_dict(json.loads(out.stdout))


def test_no_system_folder_is_granted_whole(view):
    for p in view.read:
        assert p not in ("/", "/usr", "/lib", "/lib64", "/usr/lib", "/usr/lib/x86_64-linux-gnu", "/etc", "/opt",
                         "/home", "/usr/src"), p


def test_numpy_and_its_libraries_are_in(view):
    folder = os.path.dirname(os.path.realpath(numpy.__file__))
    assert folder in view.read
    libs = [line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower()]  # numpy's own
    assert libs and all(any(inside(os.path.realpath(p), e) for e in view.read) for p in libs)


@pytest.mark.parametrize("package", ["pytest", "hypothesis", "_pytest"])
def test_packages_never_preloaded_are_out(view, package):
    folder = os.path.dirname(os.path.realpath(importlib.import_module(package).__file__))
    assert not any(inside(folder, e) or inside(e, folder) for e in view.read)


def test_no_site_packages_folder_is_granted_whole(view):
    for s in view_mod.site_folders():
        assert not any(inside(s, e) for e in view.read), s


def test_the_grader_and_the_course_are_out(view):
    for p in (view_mod.OWN, str(ROOT / "solutions"), str(ROOT / "autograder")):
        assert not any(inside(p, e) or (inside(e, p) and ".venv" not in e) for e in view.read), p


def test_what_a_preloaded_interpreter_maps_is_in(loaded):
    v = declare([str(ROOT)], loaded)
    for p in view_mod.mapped_files():
        assert any(inside(p, e) for e in v.read) or any(inside(p, h) for h in v.hidden), p


@pytest.mark.parametrize("where", ["stdlib", "numpy", "site-packages"])
def test_a_hidden_folder_inside_a_granted_one_is_split_out(loaded, where):
    """A course inside a folder the View would grant whole (a checkout in site-packages, a
    course next to the stdlib or inside a package): that folder is split, the course dropped."""
    parent = {"stdlib": view_mod.stdlib_folders()[0], "numpy": os.path.dirname(os.path.realpath(numpy.__file__)),
              "site-packages": os.path.realpath(site.getsitepackages()[0])}[where]
    course = tempfile.mkdtemp(prefix="view-course-", dir=parent)
    try:
        Path(course, "solutions.py").write_text("ANSWER = 42\n")
        v = declare([str(ROOT), course], loaded)
        assert not any(inside(course, e) or inside(e, course) for e in v.read)
        assert course in v.hidden
        if where == "numpy":  # split, not dropped: numpy's own files are still there
            assert os.path.join(parent, "__init__.py") in v.read
    finally:
        Path(course, "solutions.py").unlink()
        os.rmdir(course)


def test_the_view_crosses_the_socket_whole(view):
    assert View.from_dict(view.to_dict()) == view
