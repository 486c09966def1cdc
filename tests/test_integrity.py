"""Issue 24: `autograder integrity` finds planted copies, however disguised, ranks them first,
and flags no honest pair; a class of hostile files gives one line each and the report for the rest.

One class (a module fixture, compared once, about a second) holds both sides:
- planted copies: a .py with every name changed, comments added and its functions reordered;
  a notebook passed on with one line added; a .py with two exercises of five copied;
- honest work: the corpus's independent correct solutions (tests/submissions/ps2/correct_*.py),
  two students who both wrote the instructor's answer (solutions/ps2.py's bodies, one with
  every name changed), and untouched or nearly untouched starter notebooks.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import builtins
import keyword
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.cli import main as cli
from autograder.integrity import run_integrity
from autograder.integrity.fingerprints import K, WINDOW, fingerprint, normalise
from autograder.integrity.run import DEFAULT_THRESHOLD
from autograder.integrity.scoring import common_count, defs_in, rarity, regions_of
from autograder.report.table import FORMULA_START

from integrity_plants import (add_comments, functions, notebook_with, rename_everything, reorder_functions,
                              replace_functions)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "submissions" / "ps2"
RELEASED = json.loads((ROOT / "assignments" / "ps2" / "ps2.ipynb").read_text())
SOLUTION = (ROOT / "solutions" / "ps2.py").read_text().replace(
    "from .ps1 import softmax", functions((ROOT / "solutions" / "ps1.py").read_text())["softmax"])
STYLE = {p.stem.removeprefix("correct_"): p.read_text() for p in sorted(CORPUS.glob("correct_*.py"))}
# correct_python_loops.py is correct_straightforward.py with softmax and causal_mask rewritten:
# the other four functions are the same text (diff them). Not independent work: a pair apart.
DERIVED = ("correct_python_loops", "correct_straightforward")
OWN_WORK = "asserts_broadcasting"  # the two-of-five copier's own work: not a student of the class by itself
HONEST_PY = [f"correct_{s}" for s in STYLE if s != OWN_WORK]
SCRATCH = ("# my own checks\nfor T in (1, 2, 5):\n    M = causal_mask(T)\n"
           "    print(T, M.sum(), np.isinf(M).sum(), [row.tolist() for row in M])\n")
VICTIM_OUTPUTS = {"fused_self_attention": [{
    "output_type": "error", "ename": "ValueError", "evalue": "W_qkv has 7 columns, not a multiple of 3",
    "traceback": ["Traceback (most recent call last):",
                  '  File "/home/mira/course/ps2/ps2.ipynb", line 4, in fused_self_attention',
                  "ValueError: W_qkv has 7 columns, not a multiple of 3"]}],
    "scaled_dot_product_attention": [{"output_type": "execute_result", "execution_count": 7, "metadata": {},
                                      "data": {"text/plain": "<function softmax at 0x7f3a5c2e1d30>"}}]}
PLANTED = {("copy_renamed", "correct_helpers_dataclass_prints"), ("copy_two_of_five", "correct_einsum_logsumexp"),
           ("nb_passed_on", "nb_victim")}


def _answers(module: str) -> dict[str, str]:
    return {name: text for name, text in functions(module).items()}


def _student_nb(folder: Path, student: str, text: str) -> None:
    path = folder / student / "ps2" / "ps2.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(text)


def make_class(folder: Path) -> None:
    folder.mkdir()
    for name in HONEST_PY:
        (folder / f"{name}.py").write_text(STYLE[name.removeprefix("correct_")])
    (folder / "canon_a.py").write_text(SOLUTION)
    (folder / "canon_b.py").write_text(rename_everything(SOLUTION, "mine"))  # the same answer, other names
    victim = STYLE["helpers_dataclass_prints"]
    (folder / "copy_renamed.py").write_text(add_comments(reorder_functions(rename_everything(victim, "z"), seed=3)))
    donor = rename_everything(STYLE["einsum_logsumexp"], "q")
    (folder / "copy_two_of_five.py").write_text(
        replace_functions(STYLE[OWN_WORK], donor, ["scaled_dot_product_attention", "attention_shapes"]))
    # Notebooks: untouched and nearly untouched starters, and a notebook passed on.
    _student_nb(folder, "nb_starter_1", json.dumps(RELEASED, indent=1))
    _student_nb(folder, "nb_starter_2", notebook_with(RELEASED, {}, counts=[1, 2, 3, 4]))
    _student_nb(folder, "nb_starter_3", notebook_with(RELEASED, {"causal_mask": functions(SOLUTION)["causal_mask"]},
                                                      extra=["print(causal_mask(3))"]))
    answers = _answers(SOLUTION)
    victim_nb = notebook_with(RELEASED, answers, extra=[SCRATCH], outputs=VICTIM_OUTPUTS,
                              counts=[3, 4, 9, 12, 13, 15, 21, 22, 30])
    _student_nb(folder, "nb_victim", victim_nb)
    nb = json.loads(victim_nb)
    nb["cells"][-1]["source"] += "print('checked')\n"  # the one line the copier added
    _student_nb(folder, "nb_passed_on", json.dumps(nb, indent=1))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("integrity")
    make_class(base / "class")
    result = run_integrity(base / "class", "ps2", base / "out")
    return result, {frozenset((p.a.work.student, p.b.work.student)): p for p in result.pairs}


def _score(pairs, a, b) -> float:
    p = pairs.get(frozenset((a, b)))
    return p.score if p is not None else 0.0


HONEST = sorted(set(itertools.combinations(sorted(HONEST_PY + ["canon_a", "canon_b", "nb_starter_1", "nb_starter_2",
                                                                "nb_starter_3"]), 2)) - {tuple(sorted(DERIVED))})


@pytest.mark.parametrize("pair", sorted(PLANTED), ids=lambda p: p[0])
def test_a_planted_copy_is_flagged(report, pair):
    _, pairs = report
    assert _score(pairs, *pair) >= DEFAULT_THRESHOLD


def test_the_planted_copies_rank_above_every_honest_pair(report):
    result, pairs = report
    lowest_planted = min(_score(pairs, *p) for p in PLANTED)
    highest_honest = max(_score(pairs, *p) for p in HONEST)
    assert lowest_planted > highest_honest
    top = {frozenset((p.a.work.student, p.b.work.student)) for p in result.pairs[:len(PLANTED) + 1]}
    assert {frozenset(p) for p in PLANTED} <= top  # the first rows (the derived corpus pair may be among them)


@pytest.mark.parametrize("pair", HONEST, ids=lambda p: f"{p[0]}-{p[1]}")
def test_honest_work_is_not_flagged(report, pair):
    _, pairs = report
    assert _score(pairs, *pair) < DEFAULT_THRESHOLD


def test_the_corpus_file_derived_from_another_is_seen(report):
    """Four of correct_python_loops.py's six functions are correct_straightforward.py's text."""
    _, pairs = report
    assert _score(pairs, *DERIVED) >= DEFAULT_THRESHOLD


def test_the_notebook_passed_on_carries_its_traces(report):
    _, pairs = report
    kinds = {t.kind for t in pairs[frozenset(("nb_passed_on", "nb_victim"))].traces}
    assert {"cell id", "execution counts", "home folder", "object address", "error"} <= kinds


def test_a_copy_of_two_exercises_is_located_in_them(report):
    """The two exercises copied are the two with the most highlighted code."""
    _, pairs = report
    pair = pairs[frozenset(("copy_two_of_five", "correct_einsum_logsumexp"))]
    copier = pair.a if pair.a.work.student == "copy_two_of_five" else pair.b
    marked = {defs_in(copier.prints[i].source)[0]: sum(b - a for a, b in regions)
              for i, regions in regions_of(copier, pair.shared)}
    assert set(sorted(marked, key=marked.get)[-2:]) == {"scaled_dot_product_attention", "attention_shapes"}


# ---------------------------------------------------------------- the files written

def _rows(result) -> list[dict]:
    return list(csv.DictReader(io.StringIO(result.csv.read_text())))


def test_the_csv_has_the_columns_and_is_sorted_most_suspicious_first(report):
    result, _ = report
    rows = _rows(result)
    assert {"student_a", "student_b", "score", "flagged", "signals", "evidence"} <= set(rows[0])
    scores = [float(r["score"]) for r in rows]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert all((r["flagged"] == "true") == (float(r["score"]) >= DEFAULT_THRESHOLD) for r in rows)


def test_the_page_shows_every_flagged_pair_and_explains_the_signals(report):
    result, _ = report
    html = result.html.read_text()
    for p in result.flagged:
        assert f"{p.a.work.student} and {p.b.work.student}" in html
    for words in ("Code similarity", "Traces a copied file carries", "Rarity", "never proof", "<mark>"):
        assert words in html
    assert "<script" not in html and "http" not in html.replace("http-equiv", "")  # offline


HOSTILE_CODE = 'def causal_mask(T):\n    note = "</pre><script>alert(1)</script>"\n    return [[note] * T] * T\n'


def test_a_hostile_name_and_hostile_code_are_neutralised_and_escaped(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    code = HOSTILE_CODE + STYLE["helpers_dataclass_prints"]
    (folder / "=HYPERLINK(1).py").write_text(code)
    (folder / "ben.py").write_text(rename_everything(code, "b"))
    result = run_integrity(folder, "ps2", tmp_path / "out")
    row = _rows(result)[0]
    assert row["flagged"] == "true"
    assert not any(row[c].startswith(FORMULA_START) for c in ("student_a", "student_b", "evidence", "signals"))
    html = result.html.read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html


# ---------------------------------------------------------------- a hostile class

HOSTILE = {  # file -> a phrase of its one-line reason
    "pipe.py": "named pipe", "zero.py": "symbolic link", "link.ipynb": "symbolic link", "dir.py": "folder",
    "big.py": "over 5 MiB", "deep.ipynb": "nested too deeply", "broken.ipynb": "broken JSON",
    "ints.ipynb": "source is not text", "empty.py": "empty", "latin1.py": "not UTF-8",
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile") / "class"
    folder.mkdir()
    os.mkfifo(folder / "pipe.py")
    os.symlink("/dev/zero", folder / "zero.py")
    os.symlink(ROOT / "source" / "ps2" / "ps2.ipynb", folder / "link.ipynb")
    (folder / "dir.py").mkdir()
    (folder / "big.py").write_bytes(b"#" * ((5 << 20) + 1))
    (folder / "deep.ipynb").write_bytes(b"[" * 100_000)
    (folder / "broken.ipynb").write_text(json.dumps(RELEASED)[:5000])
    (folder / "ints.ipynb").write_text(json.dumps({"nbformat": 4, "cells": [
        {"cell_type": "code", "source": [1, 2], "metadata": {}}]}))
    (folder / "empty.py").write_bytes(b"")
    (folder / "latin1.py").write_bytes(b"x = '\xe9'\n")
    # A notebook of 3,000 cells, each with outputs full of addresses: bounded, compared.
    many = notebook_with(RELEASED, {}, extra=[f"v{i} = {i}" for i in range(3000)])
    nb = json.loads(many)
    for cell in nb["cells"][-3000:]:
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "0x7f00deadbeef00 " * 50}]
    _student_nb(folder, "huge_nb", json.dumps(nb))
    # Every field a trace is read from, of the wrong type: compared all the same.
    odd = json.loads(notebook_with(RELEASED, {"causal_mask": "def causal_mask(T):\n    return T\n"}))
    odd["cells"] += [7, None, {"cell_type": "code", "id": 5, "execution_count": True, "source": "x = 1\n",
                               "metadata": [], "outputs": "not a list"},
                     {"cell_type": "code", "id": ["a"], "execution_count": 2.5, "source": ["y = 2\n", 3],
                      "outputs": [None, 1, {"output_type": "error", "ename": 1, "evalue": None, "traceback": "x"},
                                  {"output_type": "stream", "text": 5, "data": [1]}]}]
    _student_nb(folder, "odd_types", json.dumps(odd))
    (folder / "ada.py").write_text(STYLE["helpers_dataclass_prints"])
    (folder / "bob.py").write_text(add_comments(rename_everything(STYLE["helpers_dataclass_prints"], "b")))
    out = folder.parent / "out"
    code = cli(["integrity", str(folder), "--assignment", "ps2", "--out", str(out)])
    return code, run_integrity(folder, "ps2", out)


def test_a_hostile_class_still_gives_the_report(hostile):
    code, result = hostile
    assert code == 0
    assert result.csv.is_file() and result.html.is_file()
    assert ("ada", "bob") in {(p.a.work.student, p.b.work.student) for p in result.flagged}


@pytest.mark.parametrize("file,phrase", sorted(HOSTILE.items()))
def test_each_hostile_file_is_listed_with_a_one_line_reason(hostile, file, phrase):
    _, result = hostile
    reasons = {u.student: u.reason for u in result.unread}
    student = os.path.splitext(file)[0]
    assert phrase in reasons[student] and "\n" not in reasons[student]


@pytest.mark.parametrize("student", ["huge_nb", "odd_types"])
def test_a_costly_or_oddly_typed_notebook_is_compared(hostile, student):
    _, result = hostile
    assert student not in {u.student for u in result.unread}


def test_hostile_files_are_on_the_page(hostile):
    _, result = hostile
    html = result.html.read_text()
    assert all(f"{os.path.splitext(f)[0]}:" in html for f in HOSTILE)


# ---------------------------------------------------------------- normalisation, rarity

BASE = "def f(x, y):\n    total = x + y  # add\n    return total * 2\n"


@pytest.mark.parametrize("variant", [
    "def g(a, b):\n    s = a + b\n    return s * 2\n",  # every name changed
    "def f(x,y):\n\n    total=x+y\n    # why\n    return total*2\n",  # reformatted, comments
    'def f(x, y):\n    """Twice the sum."""\n    total = x + y\n    return total * 2\n',  # a docstring added
], ids=["renamed", "reformatted", "docstring"])
def test_what_normalisation_ignores(variant):
    assert normalise(variant)[0] == normalise(BASE)[0]


@pytest.mark.parametrize("variant", ["def f(x, y):\n    total = x - y\n    return total * 2\n",
                                     "def f(x, y):\n    total = x + y\n    return total ** 2\n"])
def test_what_normalisation_keeps(variant):
    assert normalise(variant)[0] != normalise(BASE)[0]


def test_a_highlighted_region_is_the_matched_source():
    source = "def f(x, y):\n    total = x + y  # add\n    return total * 2 + max(x, y) - min(x, y) ** 3\n"
    p = fingerprint("cell 1", source)
    from autograder.integrity.fingerprints import source_regions

    (start, end), = source_regions(p, set(p.positions))  # every fingerprint: one region, in source characters
    assert start == 0 and source[:end].endswith("min(x, y) **")  # the last k-gram winnowing kept ends there
    assert len(normalise(source)[0]) >= K + WINDOW - 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
                .filter(lambda s: not keyword.iskeyword(s) and not keyword.issoftkeyword(s) and s not in dir(builtins)),
                min_size=4, max_size=4, unique=True))
def test_any_names_normalise_alike(names):
    a, b, c, d = names
    renamed = f"def {a}({b}, {c}):\n    {d} = {b} @ {c}.T  # scores\n    return {d}.max(axis=-1)\n"
    assert normalise(renamed)[0] == normalise("def f(x, y):\n    s = x @ y.T\n    return s.max(axis=-1)\n")[0]


def test_the_report_is_the_same_whatever_pythons_hash_seed(tmp_path):
    """Fingerprints are BLAKE2b, not hash(): another PYTHONHASHSEED keeps the same k-grams."""
    import subprocess

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ada.py").write_text(STYLE["helpers_dataclass_prints"])
    (folder / "bob.py").write_text(rename_everything(STYLE["helpers_dataclass_prints"], "b"))
    (folder / "cy.py").write_text(STYLE["einsum_logsumexp"])
    texts = []
    for seed in ("1", "2"):
        subprocess.run([sys.executable, "-m", "autograder.cli", "integrity", str(folder), "--assignment", "ps2",
                        "--out", str(tmp_path / seed)], check=True, cwd=ROOT, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": seed})
        texts.append((tmp_path / seed / "integrity.csv").read_text())
    assert texts[0] == texts[1] and texts[0].count("\n") >= 2


@pytest.mark.parametrize("n", [8, 100, 1000, 10_000])
def test_rarity_is_full_for_two_and_nothing_for_a_few_percent(n):
    assert rarity(2, n) == 1.0
    assert rarity(int(common_count(n)) + 1, n) == 0.0
    assert all(rarity(df, n) >= rarity(df + 1, n) for df in range(1, int(common_count(n)) + 2))


@pytest.mark.parametrize("argv,words", [
    (["--course", "/"], "not a course folder"),
    (["--threshold", "0"], "not in (0, 1]"),
    (["--threshold", "nan"], "not in (0, 1]"),
])
def test_bad_arguments_are_one_line_errors(tmp_path, capsys, argv, words):
    (tmp_path / "ada.py").write_text(BASE)
    assert cli(["integrity", str(tmp_path), "--assignment", "ps2", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err


# ---------------------------------------------------------------- the dashboard links it; feedback never does

@pytest.mark.parametrize("present", [True, False], ids=["report there", "no report"])
def test_the_class_dashboard_links_the_report_only_when_it_is_there(tmp_path, present):
    from autograder.class_results import summarize_class
    from autograder.report.dashboard import write_dashboard

    if present:
        (tmp_path / "integrity.html").write_text("<!doctype html>")
    write_dashboard(tmp_path, summarize_class("ps2", []), [])
    assert ("href='integrity.html'" in (tmp_path / "class.html").read_text()) == present


def test_no_student_page_can_link_the_report():
    """The feedback module (each student's page) has no word of it; only the dashboard does."""
    feedback = (ROOT / "autograder" / "report" / "feedback.py").read_text()
    assert "integrity" not in feedback


def test_the_course_this_grader_belongs_to_is_accepted(tmp_path, capsys):
    (tmp_path / "ada.py").write_text(BASE)
    assert cli(["integrity", str(tmp_path), "--assignment", "ps2", "--out", str(tmp_path / "o"),
                "--course", str(ROOT)]) == 0
    assert "1 submissions compared" in capsys.readouterr().out
