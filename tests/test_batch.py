"""grade-batch: both layouts, every student a results file, resumable after a kill."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.batch import discover, grade_batch

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "submissions" / "ps2"
CLASS = {  # student -> corpus file: right, wrong, hostile, broken
    "ada": "correct_straightforward.py", "ben": "mc_scale_by_dk.py", "cy": "hostile_memory_bomb.py",
    "dee": "mc_missing_mask.py", "eve": "correct_np_split.py", "fay": "hostile_monkeypatch_allclose.py",
    "gus": "mc_qkv_split_order.py", "hal": "correct_einsum_logsumexp.py",
    "ivy": "hostile_keyboard_interrupt_loop.py",  # hangs for --timeout: the batch is still running when killed
}


def autograder(*args, **kw):
    return subprocess.run([sys.executable, "-m", "autograder.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, **kw)


@pytest.fixture
def flat_class(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for student, name in CLASS.items():
        shutil.copy(CORPUS / name, folder / f"{student}.py")
    (folder / "zed.ipynb").write_text('{"cells": [')  # a malformed notebook
    return folder


@pytest.fixture
def uninterrupted(flat_class, tmp_path):
    out = tmp_path / "reference-run"
    grade_batch(flat_class, "ps2", out, jobs=2, timeout=2, progress=False)
    return out


def per_test_scores(out: Path) -> dict:
    return {p.stem: [(t["name"], t["score"]) for t in json.loads(p.read_text())["tests"]]
            for p in sorted(out.glob("*.json"))}


def test_discover_nbgrader_layout(tmp_path):
    for student in ("bo", "al"):
        (tmp_path / "submitted" / student / "ps2").mkdir(parents=True)
        (tmp_path / "submitted" / student / "ps2" / "ps2.ipynb").write_text("{}")
    (tmp_path / "submitted" / "cy" / "ps1").mkdir(parents=True)  # another assignment only
    assert [(e.student, e.path.name) for e in discover(tmp_path, "ps2")] == [("al", "ps2.ipynb"), ("bo", "ps2.ipynb")]


def test_discover_flat_layout_prefers_the_notebook(tmp_path):
    for name in ("bo.py", "al.py", "al.ipynb", "notes.txt"):
        (tmp_path / name).write_text("")
    assert [(e.student, e.path.name) for e in discover(tmp_path, "ps2")] == [("al", "al.ipynb"), ("bo", "bo.py")]


def test_every_student_gets_results_and_feedback(uninterrupted):
    students = sorted([*CLASS, "zed"])
    assert sorted(p.stem for p in uninterrupted.glob("*.json")) == students
    assert sorted(p.stem for p in (uninterrupted / "feedback").glob("*.html")) == students


def test_grades_csv_has_one_sorted_row_per_student_with_exercise_columns(uninterrupted):
    rows = list(csv.DictReader((uninterrupted / "grades.csv").open()))
    assert list(rows[0]) == ["student", "score", "max_score", "causal_mask", "scaled_dot_product_attention",
                             "attention_shapes", "fused_self_attention", "attention_with_biases"]
    assert [r["student"] for r in rows] == sorted([*CLASS, "zed"])
    assert {r["student"]: r["score"] for r in rows}["ada"] == "36"
    assert {r["student"]: r["score"] for r in rows}["zed"] == "0"


def test_feedback_page_explains_the_mistake_with_a_heatmap(uninterrupted):
    page = (uninterrupted / "feedback" / "ben.html").read_text()
    assert "scale by dk" in page and "sqrt(d_k)" in page
    assert "expected weights" in page and "your weights" in page


def test_class_report_counts_mistakes(uninterrupted):
    page = (uninterrupted / "class.html").read_text()
    assert "<td>scale_by_dk</td><td>1 (10%)</td>" in page
    assert page.count("<svg") == 2


def test_cli_batch_exits_0_and_prints_the_class_summary(flat_class, tmp_path):
    done = autograder("grade-batch", flat_class, "--assignment", "ps2", "--out", tmp_path / "out",
                      "--jobs", "2", "--timeout", "2")
    assert done.returncode == 0, done.stderr
    assert "ps2: 10 students" in done.stdout and "grades.csv" in done.stdout
    assert done.stderr == ""  # no progress bar when not on a terminal


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_killed_batch_resumes_to_the_same_grades(flat_class, uninterrupted, tmp_path, how):
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade-batch", str(flat_class),
                             "--assignment", "ps2", "--out", str(out), "--jobs", "2", "--timeout", "2"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while not list(out.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, how)
    proc.wait(timeout=60)
    assert len(list(out.glob("*.json"))) < len(CLASS) + 1, "the batch finished before it could be killed"
    assert not (out / "grades.csv").exists() or how == signal.SIGINT
    done = autograder("grade-batch", flat_class, "--assignment", "ps2", "--out", out, "--jobs", "2", "--timeout", "2")
    assert done.returncode == 0, done.stderr
    assert (out / "grades.csv").read_text() == (uninterrupted / "grades.csv").read_text()
    assert per_test_scores(out) == per_test_scores(uninterrupted)
    assert list(out.rglob("*.tmp")) == []


def test_gradebook_receives_the_scores(uninterrupted, flat_class, tmp_path):
    from nbgrader.api import Gradebook

    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    done = autograder("grade-batch", flat_class, "--assignment", "ps2", "--out", uninterrupted,
                      "--gradebook", url)
    assert done.returncode == 0, done.stderr
    with Gradebook(url) as gb:
        assert gb.find_submission("ps2", "ada").score == 36
        assert gb.find_grade("causal_mask", "ps2", "ps2", "zed").score == 0


def test_progress_bar_shows_count_rate_and_eta_on_a_terminal(capsys):
    from autograder.batch import Progress

    bar = Progress(total=4, done=1, enabled=True)
    bar.step()
    bar.close()
    err = capsys.readouterr().err
    assert "2/4" in err and "/s ETA" in err and err.endswith("\n")


def test_progress_bar_is_silent_when_disabled(capsys):
    from autograder.batch import Progress

    bar = Progress(total=4, done=0, enabled=False)
    bar.step()
    bar.close()
    assert capsys.readouterr().err == ""


def test_a_submission_the_grader_fails_on_still_gets_a_results_file(tmp_path, monkeypatch):
    import autograder.grade

    def broken(*args, **kwargs):
        raise RuntimeError("the sandbox process failed to start")

    (tmp_path / "class").mkdir()
    shutil.copy(CORPUS / "correct_straightforward.py", tmp_path / "class" / "ada.py")
    monkeypatch.setattr(autograder.grade, "grade", broken)
    rows = grade_batch(tmp_path / "class", "ps2", tmp_path / "out", jobs=1, progress=False)
    assert rows[0]["score"] == 0
    assert "the grader failed on this submission" in json.loads((tmp_path / "out" / "ada.json").read_text())["output"]
