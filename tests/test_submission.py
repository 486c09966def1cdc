"""Loading a submission: every problem is one line; whatever parses is kept; nothing runs."""
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import wire
from autograder.submission import (MAX_BYTES, MAX_CELLS, Unreadable, demo_digest, load, neutralise_magics, parse,
                                   read_submission)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted([*(ROOT / "tests" / "submissions").rglob("*.py"), *(ROOT / "tests" / "submissions").rglob("*.ipynb"),
                  *(ROOT / "assignments").glob("*/*.ipynb")])


def notebook(tmp_path, *sources, name="ps1.ipynb", **meta):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    for cell, m in zip(nb.cells, meta.get("cell_meta", []), strict=False):  # metadata for the first cells
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
    assert sub.problems == ["notebook cell 2 has a syntax error on line 1: invalid syntax; it was skipped"]


def test_old_nbformat_is_read_with_a_warning(tmp_path):
    path = tmp_path / "ps1.ipynb"
    path.write_text(json.dumps({"nbformat": 3, "cells": [{"cell_type": "code", "source": ["x = 1\n"]}]}))
    sub = load(path)
    assert sub.cells == ["x = 1"] and "format 3" in sub.problems[0]


def test_assignment_check_cells_are_skipped(tmp_path):
    graded = {"nbgrader": {"grade": True, "solution": False, "grade_id": "softmax", "points": 9}}
    sub = load(notebook(tmp_path, "x = 1", "assert False", cell_meta=[{}, graded]))
    assert sub.cells == ["x = 1"]


DEMO = "for _ in range(10**9):\n    pass  # a course demonstration: costly, and nothing of the student's"


def test_an_unchanged_demo_cell_is_not_run(tmp_path):
    sub = load(notebook(tmp_path, "x = 1", DEMO, cell_meta=[{}, {"autograder": {"demo": demo_digest(DEMO)}}]))
    assert sub.cells == ["x = 1"]


def test_an_edited_demo_cell_runs_like_any_cell(tmp_path):
    edited = DEMO + "\ndef helper():\n    return 2"
    sub = load(notebook(tmp_path, "x = 1", edited, cell_meta=[{}, {"autograder": {"demo": demo_digest(DEMO)}}]))
    assert sub.cells == ["x = 1", edited]


@pytest.mark.parametrize("tag", [{"demo": "not the digest"}, {"demo": 1}, {"demo": None}, "demo", ["demo"]])
def test_a_cell_with_a_wrong_demo_tag_runs(tmp_path, tag):
    sub = load(notebook(tmp_path, "x = 1", "y = 2", cell_meta=[{}, {"autograder": tag}]))
    assert sub.cells == ["x = 1", "y = 2"]


def test_every_demo_cell_of_the_released_notebooks_is_tagged_with_its_own_text():
    for path in sorted((ROOT / "assignments").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        demos = [c for c in nb.cells if c.cell_type == "code" and "autograder" in c.metadata]
        assert demos and all(c.metadata["autograder"]["demo"] == demo_digest(c.source) for c in demos), path


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


def test_python_file_runs_statement_by_statement(tmp_path):
    path = tmp_path / "alice.py"
    path.write_text("x = 10 % 3\n\n@staticmethod\ndef f():\n    return 1\n")
    sub = load(path)
    assert sub.cells == ["x = 10 % 3", "@staticmethod\ndef f():\n    return 1"]
    assert sub.labels == ["line 1", "line 3"]


def test_a_statement_keeps_the_files_line_numbers_in_tracebacks(tmp_path):
    path = tmp_path / "alice.py"
    path.write_text("x = 1\n\n\n\nraise ValueError('here')\n")
    code = marshal.loads(load(path).code[1])
    with pytest.raises(ValueError) as info:
        exec(code, {})
    assert info.traceback[-1].lineno + 1 == 5  # pytest counts from 0


def test_a_statement_only_the_compiler_rejects_costs_only_itself(tmp_path):
    path = tmp_path / "alice.py"
    path.write_text("x = 1\nreturn 2\ny = 3\n")  # the parser accepts `return` here; the compiler does not
    sub = load(path)
    assert sub.labels == ["line 1", "line 3"]
    assert sub.problems == ["line 2 has a syntax error on line 2: 'return' outside function; it was skipped"]


@pytest.mark.parametrize("kind", ["py", "ipynb"])
def test_many_statements_are_grouped_below_the_wire_limit(tmp_path, kind):
    n = 3 * MAX_CELLS + 7
    if kind == "py":
        path = tmp_path / "alice.py"
        path.write_text("".join(f"v{i} = {i}\n" for i in range(n)))
    else:
        path = notebook(tmp_path, *(f"v{i} = {i}" for i in range(n)))
    sub = load(path)
    assert len(sub.code) <= MAX_CELLS < wire.MAX_ITEMS
    assert sub.labels[0] == ("lines 1-4" if kind == "py" else "notebook cells 1-4")
    scope = {}
    for code in sub.code:
        exec(marshal.loads(code), scope)
    assert scope[f"v{n - 1}"] == n - 1  # every statement is still run, in order


PEAK = """
import sys, tracemalloc
from autograder.submission import load
tracemalloc.start()
load(sys.argv[1])
print(tracemalloc.get_traced_memory()[1])
"""


def test_loading_grows_linearly_with_blank_lines_and_statements(tmp_path):
    """4x the file must cost about 4x, not 16x: measured as peak memory (tracemalloc), which
    is deterministic, rather than as time; in a process of its own, since tracemalloc counts
    every thread's allocations and an xdist worker's own thread allocates as it pleases. The
    old loader padded every statement with the blank lines before it: 300 statements after 1
    MB of blank lines took 300 MB."""
    def peak(scale):
        path = tmp_path / f"s{scale}.py"
        path.write_text("\n" * (50_000 * scale) + "".join(f"x{i} = {i}\n" for i in range(300 * scale)))
        done = subprocess.run([sys.executable, "-c", PEAK, str(path)], capture_output=True, text=True, check=True)
        return int(done.stdout)

    small, large = peak(1), peak(4)
    assert large < 6 * small, (small, large)


@pytest.mark.parametrize("name, content, phrase", [
    ("deep.ipynb", b"[" * 100_000, "nested too deeply"),
    ("deep.py", b"x = " + b"(" * 100_000 + b"1", "syntax error"),
    ("neg.py", b"x = " + b"-" * 100_000 + b"1", "nested too deeply"),
    ("bignum.ipynb", b'{"cells": [], "x": ' + b"9" * 5000 + b"}", "not a valid notebook"),
    ("ints.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": [1, 2]}], "nbformat": 4}).encode(),
     "source is not text"),
    ("meta.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": "x", "metadata": [1]}], "nbformat": 4,
                               }).encode(), "metadata is a list"),
    ("top_meta.ipynb", json.dumps({"cells": [], "metadata": [1], "nbformat": 4}).encode(), "metadata is a list"),
    ("data.py", b"x = [" + b"1," * 600_000 + b"]", "MiB of code"),
])
def test_hostile_contents_give_one_line_not_a_traceback(tmp_path, name, content, phrase):
    path = tmp_path / name
    path.write_bytes(content)
    sub = load(path)
    assert all("\n" not in p for p in sub.problems)
    if phrase:
        assert len(sub.problems) == 1 and phrase in sub.problems[0]


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.sampled_from(["cells", "cell_type", "source", "metadata", "nbgrader", "grade",
                                         "solution", "nbformat", "code"]), inner, max_size=4),
                    max_leaves=20))
@settings(max_examples=200, deadline=None)
def test_any_json_loads_as_a_notebook_without_raising(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("nb") / "any.ipynb"
    path.write_text(json.dumps(doc))
    sub = load(path)
    assert all("\n" not in p for p in sub.problems)


@pytest.mark.parametrize("kind, phrase", [
    ("fifo", "named pipe"), ("link", "symbolic link"), ("folder", "a folder"), ("missing", "No such file"),
    ("too_big", "over 5 MiB"),
])
def test_only_regular_files_are_read(tmp_path, kind, phrase):
    path = tmp_path / "alice.py"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would block forever
    elif kind == "link":
        (tmp_path / "target.py").write_text("x = 1")
        os.symlink(tmp_path / "target.py", path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "too_big":
        path.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(Unreadable, match=phrase):
        read_submission(path)
    sub = load(path)
    assert sub.code == [] and len(sub.problems) == 1 and phrase in sub.problems[0]


def test_no_link_is_followed_below_the_class_folder(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "ps2.py").write_text("x = 1")
    (tmp_path / "class").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "class" / "eve")
    with pytest.raises(Unreadable, match="eve is a symbolic link"):
        read_submission(tmp_path / "class" / "eve" / "ps2.py", base=tmp_path / "class")


def test_unsupported_suffix(tmp_path):
    path = tmp_path / "alice.txt"
    path.write_text("x = 1")
    assert "only .py and .ipynb" in load(path).problems[0]


# Besides the samples, each other way the bytes are read: blank, not UTF-8, a BOM, another suffix, broken JSON.
ODD_BYTES = {"empty.py": b" \n", "latin1.py": b"x = '\xe9'\n", "bom.py": b"\xef\xbb\xbfx = 1\n",
             "notes.txt": b"x = 1\n", "broken.ipynb": b'{"cells": ['}


@pytest.mark.parametrize("name, content", [
    *(pytest.param(p.name, p.read_bytes(), id=str(p.relative_to(ROOT))) for p in SAMPLES),
    *(pytest.param(name, content, id=name) for name, content in ODD_BYTES.items())])
def test_parsing_the_bytes_read_is_loading_the_file(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    loaded, parsed = load(path), parse(path, read_submission(path))
    assert (parsed.path, parsed.cells, parsed.labels, parsed.problems, parsed.dropped) == \
        (loaded.path, loaded.cells, loaded.labels, loaded.problems, loaded.dropped)
    assert [marshal.loads(c) for c in parsed.code] == [marshal.loads(c) for c in loaded.code]


# ---------------------------------------------------------------- malformed notebook structures (issue 20)

SOUND_CELL = {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None}
ODD = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3),
                st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))
# Each way one part of a sound notebook can be malformed, with the words its line must hold.
BREAKS = {
    "metadata": (lambda nb, x: nb.update(metadata=x), lambda x: not isinstance(x, dict), "metadata"),
    "nbformat": (lambda nb, x: nb.update(nbformat=x), lambda x: x != 4 or type(x) is not int, "notebook format"),
    "nbformat_minor": (lambda nb, x: nb.update(nbformat_minor=x), lambda x: type(x) is not int, "nbformat_minor"),
    "a cell": (lambda nb, x: nb["cells"].__setitem__(0, x), lambda x: not isinstance(x, dict), "notebook cell 1"),
    "cell_type": (lambda nb, x: nb["cells"][0].update(cell_type=x),
                  lambda x: x not in ("code", "markdown", "raw"), "cell_type"),
    "cell metadata": (lambda nb, x: nb["cells"][0].update(metadata=x), lambda x: not isinstance(x, dict),
                      "its metadata"),
    "source": (lambda nb, x: nb["cells"][0].update(source=x),
               lambda x: not (isinstance(x, str) or (isinstance(x, list) and all(isinstance(s, str) for s in x))),
               "source is not text"),
}


@given(st.lists(st.tuples(st.sampled_from(sorted(BREAKS)), ODD), min_size=1, max_size=3, unique_by=lambda b: b[0]))
@settings(max_examples=200, deadline=None, derandomize=True)
def test_each_malformed_part_of_a_notebook_gets_its_one_line(tmp_path_factory, breaks):
    nb = {"cells": [dict(SOUND_CELL)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    expected = []
    for part, value in sorted(breaks, key=lambda b: b[0] != "a cell"):  # a cell replaced first: then its fields
        if part in ("cell_type", "cell metadata", "source") and not isinstance(nb["cells"][0], dict):
            continue
        apply, broken, words = BREAKS[part]
        apply(nb, value)
        if broken(value):
            expected.append(words)
    cell = nb["cells"][0]
    if isinstance(cell, dict) and cell.get("cell_type") != "code":
        expected = [w for w in expected if w != "source is not text"]  # a cell that is not code is not run
    if isinstance(cell, dict) and cell.get("cell_type") not in ("code", "markdown", "raw"):
        # the cell is skipped, in a line that says why (also for a whole cell replaced by a dict without one)
        expected = [w for w in expected if w not in ("source is not text", "its metadata")] + ["cell_type"]
    path = tmp_path_factory.mktemp("nb") / "broken.ipynb"
    path.write_text(json.dumps(nb))
    sub = load(path)
    assert all("\n" not in p for p in sub.problems)
    for words in expected:
        assert any(words in p for p in sub.problems), (words, sub.problems)
    # and nothing else, but what compiling a drawn source says
    assert all(any(w in p for w in expected) or "syntax error" in p for p in sub.problems), (expected, sub.problems)
