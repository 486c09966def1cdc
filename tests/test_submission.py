"""Loading a submission: every problem is one line; whatever parses is kept; nothing runs."""
import json

import nbformat
import pytest

from autograder.submission import load, neutralise_magics


def notebook(tmp_path, *sources, name="ps1.ipynb", **meta):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    for cell, m in zip(nb.cells, meta.get("cell_meta", [])):
        cell.metadata = m
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("content, phrase", [
    (b"", "is empty"),
    (b'{"cells": [', "not a valid notebook"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b'{"nbformat": 4}', "not a Jupyter notebook"),
])
def test_malformed_notebook_gives_one_line(tmp_path, content, phrase):
    path = tmp_path / "ps1.ipynb"
    path.write_bytes(content)
    sub = load(path)
    assert sub.cells == [] and len(sub.problems) == 1
    assert phrase in sub.problems[0] and "\n" not in sub.problems[0]


def test_syntax_error_skips_only_that_cell(tmp_path):
    sub = load(notebook(tmp_path, "def a():\n    return 1", "def b(:\n    pass", "def c():\n    return 3"))
    assert sub.cells == ["def a():\n    return 1", "def c():\n    return 3"]
    assert sub.problems == ["cell 2 has a syntax error on line 1: invalid syntax; it was skipped"]


def test_old_nbformat_is_read_with_a_warning(tmp_path):
    path = tmp_path / "ps1.ipynb"
    path.write_text(json.dumps({"nbformat": 3, "cells": [{"cell_type": "code", "source": ["x = 1\n"]}]}))
    sub = load(path)
    assert sub.cells == ["x = 1"] and "format 3" in sub.problems[0]


def test_assignment_check_cells_are_skipped(tmp_path):
    graded = {"nbgrader": {"grade": True, "solution": False, "grade_id": "softmax", "points": 9}}
    sub = load(notebook(tmp_path, "x = 1", "assert False", cell_meta=[{}, graded]))
    assert sub.cells == ["x = 1"]


def test_self_check_cells_are_skipped_without_metadata(tmp_path):
    sub = load(notebook(tmp_path, "x = 1", "from autograder.selfcheck import check\ncheck('softmax', softmax)"))
    assert sub.cells == ["x = 1"]


@pytest.mark.parametrize("source, expected", [
    ("%timeit f(1)\ny = 2", "pass  # %timeit f(1)\ny = 2"),
    ("!pip install torch", "pass  # !pip install torch"),
    ("files = !ls", "pass  # files = !ls"),
    ("%%time\ny = 2", "# %%time\ny = 2"),
    ("%%bash\nrm -rf /", "# %%bash\n# rm -rf /"),
    ("    %matplotlib inline", "    pass  # %matplotlib inline"),
])
def test_magics_become_plain_python(source, expected):
    assert neutralise_magics(source) == expected


def test_python_file_runs_statement_by_statement_with_its_own_line_numbers(tmp_path):
    path = tmp_path / "alice.py"
    path.write_text("x = 10 % 3\n\n@staticmethod\ndef f():\n    return 1\n")
    sub = load(path)
    assert sub.cells == ["x = 10 % 3", "\n\n@staticmethod\ndef f():\n    return 1"]
    assert sub.labels == ["line 1", "line 3"]


def test_unsupported_suffix(tmp_path):
    path = tmp_path / "alice.txt"
    path.write_text("x = 1")
    assert "only .py and .ipynb" in load(path).problems[0]
