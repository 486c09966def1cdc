"""The adequacy matrix (autograder/adequacy.py) and `autograder adequacy`: which checks fail
and name each catalogued mistake, on the attention course in this process and on the block
course through the command. The course suite (test_course_contract.py) holds every course to
the matrix; this module checks the matrix itself."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import adequacy
from autograder.catalogue import Mistake, swap
from autograder.reference import load

ROOT = Path(__file__).resolve().parent.parent
BLOCK = ROOT / "examples" / "block-course"


def test_a_catalogue_entry_keeps_its_reasons_by_exercise_and_refuses_an_empty_one():
    entry = Mistake("f", "some_id", swap("a", "b"), visible_blind={"g": "g never calls f with that", "e": "nor e"})
    assert entry.visible_blind == (("e", "nor e"), ("g", "g never calls f with that")) and hash(entry)
    assert entry.blind_reason("g") == "g never calls f with that" and entry.blind_reason("f") == ""
    with pytest.raises(ValueError, match="reason"):
        Mistake("f", "some_id", swap("a", "b"), visible_blind={"g": "  "})


def test_a_cell_says_how_it_failed_and_on_how_many_draws():
    def cell(failed, named, students=8):
        return adequacy.Cell("a check", False, 1, failed, named, students).mark

    assert (cell(0, 0), cell(8, 8), cell(8, 0), cell(8, 3), cell(3, 3), cell(3, 0)) == (
        ".", "N", "x", "n", "N3/8", "x3/8")


@pytest.fixture(scope="module")
def softmax_rows() -> adequacy.Matrix:
    """The matrix of softmax's mistakes, whose edits reach the exercises that call it."""
    names = tuple(m.name for m in load().catalogue if m.func == "softmax")
    return adequacy.compute(2, mistakes=names)


def test_a_mistake_is_measured_in_every_exercise_its_edit_reaches(softmax_rows):
    for entry in (m for m in load().catalogue if m.func == "softmax"):
        reached = [r.exercise for r in softmax_rows.for_mistake(entry.name)]
        assert reached[0] == "softmax" and len(reached) > 1, reached
        assert all(r.inherited == (r.exercise != "softmax") for r in softmax_rows.for_mistake(entry.name))


def test_a_mistake_that_changes_nothing_an_exercise_computes_is_blind_there_with_its_reason(softmax_rows):
    entry = next(m for m in load().catalogue if m.func == "softmax" and m.visible_blind)
    for exercise, reason in entry.visible_blind:
        (row,) = [r for r in softmax_rows.for_mistake(entry.name) if r.exercise == exercise]
        assert row.blind and row.blind_reason == reason and not any(c.failed for c in row.cells)
    own = [r for r in softmax_rows.for_mistake(entry.name) if r.exercise == "softmax"][0]
    assert own.visible_fails and own.costs and not own.blind


def test_a_row_counts_the_points_each_student_loses(softmax_rows):
    for row in softmax_rows.rows:
        assert len(row.lost) == 2
        if all(c.failed in (0, c.students) for c in row.cells):
            assert set(row.lost) == {sum(c.points for c in row.cells if c.failed)}, row


def test_the_text_marks_every_row_and_ends_with_the_summary(softmax_rows):
    text = adequacy.text(softmax_rows)
    assert text.rstrip().splitlines()[-1] == adequacy.summary(softmax_rows)
    assert all(row.mistake in text for row in softmax_rows.rows)
    assert "BLIND (declared: " in text


def _run(*argv, course=None):
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_COURSE"}
    env.update({"AUTOGRADER_COURSE": str(course)} if course else {})
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_command_prints_and_writes_the_block_courses_matrix(tmp_path):
    listed = _run("-c", "from autograder.reference import load; print(*(m.name for m in load().catalogue))",
                  course=BLOCK)
    catalogue = listed.stdout.split()
    assert listed.returncode == 0 and catalogue, listed.stderr
    done = _run("-m", "autograder", "adequacy", "--course", str(BLOCK), "--students", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert all(m in done.stdout for m in catalogue)
    rows = list(csv.reader(io.StringIO((tmp_path / "adequacy.csv").read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == adequacy.CSV_COLUMNS
    assert {r[0] for r in rows[1:]} == set(catalogue)
    page = (tmp_path / "adequacy.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "http" not in page and all(m in page for m in catalogue)


def test_the_command_refuses_no_students():
    done = _run("-m", "autograder", "adequacy", "--course", str(BLOCK), "--students", "0")
    assert done.returncode == 2 and "--students" in done.stderr


HOSTILE = "<img src=x onerror=alert(1)> o'neil & co {{ 7*7 }}"


def test_the_page_shows_every_text_as_text():
    """A check's title, a mistake's name and its reason are text on the page, whatever they hold."""
    import re
    from html import unescape

    from autograder.assignments import ASSIGNMENTS
    from autograder.report.adequacy import html

    name = next(iter(next(iter(ASSIGNMENTS.values()))))
    row = adequacy.Row(HOSTILE, "some_id", name, False, HOSTILE, (adequacy.Cell(HOSTILE, False, 1, 1, 0, 1),), (1.0,))
    page = html(adequacy.Matrix((row,), 1))
    assert "<img" not in page and "49" not in page
    assert unescape(re.sub(r"<[^>]+>", " ", page)).count(HOSTILE) == 2  # the mistake and its reason
    assert f"title='{HOSTILE}'" not in page and HOSTILE in unescape(page)  # the cell's title, an attribute
