"""Issue 8: a file or a name never stops the class.

One class folder (flat layout) and one nbgrader course are built in a temp folder with
every odd name and file type next to an honest student, graded once each with the real
sandbox (module fixtures: one batch per layout), and each case is its own test.
"""
import csv
import json
import os
import stat
from pathlib import Path

import nbformat
import pytest

from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.batch import run_batch
from autograder.class_results import feedback_path, results_path
from autograder.discovery import discover
from autograder.names import file_stem, readable

ROOT = Path(__file__).resolve().parent.parent
PS2_FULL = sum(exercise_points(e) for e in ASSIGNMENTS["ps2"])  # a right submission's score
CORRECT = (ROOT / "tests" / "submissions" / "ps2" / "correct_straightforward.py").read_bytes()
SOURCE_NB = ROOT / "source" / "ps2" / "ps2.ipynb"  # the instructor's notebook: the answers

# Students with odd names but honest work: each must get full marks under a safe file name.
ODD_NAMES = {
    "latin1": os.fsdecode(b"jos\xe9"),  # a Latin-1 byte, as unzip leaves it: not UTF-8
    "long": "x" * 240,  # with ".json.<random>.tmp" it would pass the 255-byte limit
    "newline": "new\nline",
    "formula": "=HYPERLINK(\"evil.example\")",  # a spreadsheet would run it
    "at": "@SUM(1+1)",
    "tab": "\tdrop",
}
# Submissions that are not regular files: each gets score 0 and a one-line reason.
ODD_FILES = {
    "fifo": ("pipe.py", "named pipe"),
    "link_dev_zero": ("zero.py", "symbolic link"),
    "link_source": ("cheat.ipynb", "symbolic link"),
    "link_other_student": ("copy.py", "symbolic link"),
    "folder": ("dir.py", "folder"),
    "device": ("dev.py", "character device"),
    "too_big": ("big.py", "over 5 MiB"),
}
# Malformed or costly contents: a results file says what is wrong, in one line.
ODD_CONTENTS = {
    "deep_json": ("deep.ipynb", b"[" * 100_000, "nested too deeply"),
    "int_source": ("ints.ipynb", json.dumps({"nbformat": 4, "cells": [
        {"cell_type": "code", "source": [1, 2, 3], "metadata": {}}]}).encode(), "source is not text"),
    "return_outside_function": ("ret.py", b"return 1\n", "'return' outside function"),
}


def _make_flat(folder: Path) -> None:
    folder.mkdir()
    (folder / "ada.py").write_bytes(CORRECT)
    for name in ODD_NAMES.values():
        fd = os.open(os.fsencode(folder / f"{name}.py"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, CORRECT)
        os.close(fd)
    os.mkfifo(folder / "pipe.py")
    os.symlink("/dev/zero", folder / "zero.py")
    os.symlink(SOURCE_NB, folder / "cheat.ipynb")
    os.symlink(folder / "ada.py", folder / "copy.py")
    (folder / "dir.py").mkdir()
    try:
        os.mknod(folder / "dev.py", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pass  # not root: the device case is skipped below
    (folder / "big.py").write_bytes(b"#" * ((5 << 20) + 1))
    for file, content, _ in ODD_CONTENTS.values():
        (folder / file).write_bytes(content)
    # 10,000 statements past a correct answer: more cells than a wire list may hold.
    (folder / "many.py").write_bytes(CORRECT + b"\n" + b"".join(b"v%d = %d\n" % (i, i) for i in range(10_000)))


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    base = tmp_path_factory.mktemp("flat")
    _make_flat(base / "class")
    result = run_batch(base / "class", "ps2", base / "out", jobs=2, timeout=5, progress=False)
    return base / "out", result


def _rows(out: Path) -> list[dict]:
    with (out / "grades.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _results(out: Path, student: str) -> dict:
    return json.loads(results_path(out, student).read_text())


def test_the_class_finishes_without_grader_failures(flat):
    out, result = flat
    assert result.failures == []
    assert (out / "grades.csv").is_file() and (out / "class.html").is_file()


@pytest.mark.parametrize("case", ODD_NAMES)
def test_an_odd_name_is_graded_under_a_safe_file_name(flat, case):
    out, _ = flat
    name = ODD_NAMES[case]
    stem = file_stem(name)
    assert "/" not in stem and "\n" not in stem and len(stem.encode()) <= 100
    assert _results(out, name)["score"] == PS2_FULL
    assert feedback_path(out, name).is_file()


@pytest.mark.parametrize("case", ODD_NAMES)
def test_an_odd_name_has_one_readable_row_in_grades_csv(flat, case):
    out, _ = flat
    shown = readable(ODD_NAMES[case])
    rows = [r for r in _rows(out) if r["student"].lstrip("'") == shown]
    assert len(rows) == 1 and rows[0]["score"] == f"{PS2_FULL:g}"
    assert "\n" not in (out / "grades.csv").read_text().split(rows[0]["student"])[0].splitlines()[-1]


@pytest.mark.parametrize("case", ["formula", "at"])
def test_a_name_a_spreadsheet_would_run_is_neutralised(flat, case):
    out, _ = flat
    shown = readable(ODD_NAMES[case])
    assert any(r["student"] == "'" + shown for r in _rows(out))


def test_a_leading_tab_is_escaped_so_it_starts_no_formula(flat):
    out, _ = flat
    assert any(r["student"] == "\\tdrop" for r in _rows(out))


def test_file_names_are_unique_and_every_student_has_one_row(flat):
    out, _ = flat
    students = [e.student for e in discover(out.parent / "class", "ps2")]
    assert len({file_stem(s) for s in students}) == len(students)
    assert len(_rows(out)) == len(students)


@pytest.mark.parametrize("case", ODD_FILES)
def test_a_file_that_is_not_regular_gets_zero_and_a_one_line_reason(flat, case):
    out, _ = flat
    file, phrase = ODD_FILES[case]
    if case == "device" and not (out.parent / "class" / file).exists():
        pytest.skip("creating a device needs root")
    results = _results(out, Path(file).stem)
    assert results["score"] == 0
    assert phrase in results["output"] and len(results["output"].splitlines()) == 1


@pytest.mark.parametrize("case", ODD_CONTENTS)
def test_a_malformed_submission_gets_a_one_line_reason(flat, case):
    out, _ = flat
    file, _, phrase = ODD_CONTENTS[case]
    results = _results(out, Path(file).stem)
    assert phrase in results["output"] and len(results["output"].splitlines()) == 1


def test_the_instructors_notebook_behind_a_link_is_not_graded(flat):
    out, _ = flat
    assert _results(out, "cheat")["score"] == 0  # following the link would give full marks


def test_ten_thousand_extra_statements_do_not_cost_the_grade(flat):
    out, _ = flat
    assert _results(out, "many")["score"] == PS2_FULL


# ---------------------------------------------------------------- nbgrader's layout

def _notebook(path: Path, code: bytes) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code.decode())]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("course")
    sub = base / "submitted"
    for student in ("ada", "submitted"):  # a student called "submitted" must not hide the class
        _notebook(sub / student / "ps2" / "ps2.ipynb", CORRECT)
    _notebook(base / "elsewhere" / "ps2" / "ps2.ipynb", CORRECT)
    os.symlink(base / "elsewhere", sub / "eve")  # a student folder that is a link
    (sub / "fay").mkdir()
    os.symlink(base / "elsewhere" / "ps2", sub / "fay" / "ps2")  # an assignment folder that is a link
    (sub / "gus" / "ps2").mkdir(parents=True)
    os.symlink(sub / "ada" / "ps2" / "ps2.ipynb", sub / "gus" / "ps2" / "ps2.ipynb")  # another's notebook
    (sub / "hal" / "ps2").mkdir(parents=True)
    os.mkfifo(sub / "hal" / "ps2" / "ps2.ipynb")  # a read would hang the batch
    result = run_batch(sub, "ps2", base / "out", jobs=2, timeout=5, progress=False)
    return base / "out", result


def test_a_student_called_submitted_does_not_hide_the_class(course):
    out, result = course
    assert [r["student"] for r in result.rows] == ["ada", "eve", "fay", "gus", "hal", "submitted"]
    assert _results(out, "submitted")["score"] == PS2_FULL and _results(out, "ada")["score"] == PS2_FULL


@pytest.mark.parametrize("student, phrase", [
    ("eve", "eve is a symbolic link"), ("fay", "ps2 is a symbolic link"),
    ("gus", "ps2.ipynb is a symbolic link"), ("hal", "named pipe"),
])
def test_links_and_pipes_in_nbgrader_layout_are_not_followed(course, student, phrase):
    out, _ = course
    results = _results(out, student)
    assert results["score"] == 0 and phrase in results["output"]


def test_the_course_folder_is_still_found_through_its_submitted_folder(tmp_path):
    _notebook(tmp_path / "submitted" / "ada" / "ps2" / "ps2.ipynb", CORRECT)
    (tmp_path / "nbgrader_config.py").write_text("")
    (tmp_path / "source" / "ps2").mkdir(parents=True)  # looks like a student folder; is not one
    assert [e.student for e in discover(tmp_path, "ps2")] == ["ada"]
