"""Issue 11, re-running: grade-batch regrades exactly the students whose submission (or the
grader's version, or --timeout) changed, reports what changed, and `grade --student` agrees
with the batch test by test.

One small class (flat layout, three students) is graded once per module; each test copies the
class and its results to its own folder and changes one thing.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import autograder.regrade as regrade
from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.batch import run_batch
from autograder.cli import main
from autograder.results import from_json
from autograder.other_set import looks_like

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "submissions" / "ps2"
PS2_FULL = sum(exercise_points(e) for e in ASSIGNMENTS["ps2"])
RIGHT = CORPUS / "correct_straightforward.py"
SCALE_BY_DK = CORPUS / "mc_scale_by_dk.py"  # 17 points short: a changed submission with another score
CLASS = {"ada": RIGHT, "ben": SCALE_BY_DK, "cy": CORPUS / "correct_einsum_logsumexp.py"}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("first")
    (base / "class").mkdir()
    for student, source in CLASS.items():
        shutil.copy(source, base / "class" / f"{student}.py")
    result = run_batch(base / "class", "ps2", base / "out", jobs=2, progress=False)
    assert result.failures == [] and result.new == sorted(CLASS)
    return base


@pytest.fixture
def graded(first_run, tmp_path):
    """A copy of the graded class: (class folder, results folder)."""
    shutil.copytree(first_run / "class", tmp_path / "class")
    shutil.copytree(first_run / "out", tmp_path / "out")
    return tmp_path / "class", tmp_path / "out"


def rerun(cls, out, **options):
    return run_batch(cls, "ps2", out, jobs=2, progress=False, **options)


def scores(out: Path) -> dict:
    return {r["student"]: r["score"] for r in csv.DictReader((out / "grades.csv").open())}


def record(out: Path, student: str) -> dict:
    return json.loads((out / f"{student}.json").read_text())


def rewrite(out: Path, student: str, change) -> None:
    doc = record(out, student)
    change(doc)
    (out / f"{student}.json").write_text(json.dumps(doc))


# ---------------------------------------------------------------- what a re-run grades

def test_a_rerun_with_nothing_changed_regrades_nobody(graded):
    cls, out = graded
    before = {p.name: p.read_bytes() for p in out.glob("*.json")}
    result = rerun(cls, out)
    assert (result.up_to_date, result.regraded, result.new) == (sorted(CLASS), [], [])
    assert {p.name: p.read_bytes() for p in out.glob("*.json")} == before


def test_a_changed_submission_is_regraded_with_its_new_score(graded):
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")  # the case: a changed notebook kept 36/36
    result = rerun(cls, out)
    assert (result.regraded, result.up_to_date) == (["ada"], ["ben", "cy"])
    assert scores(out)["ada"] == scores(out)["ben"] != f"{PS2_FULL:g}"


def test_the_command_says_how_many_were_up_to_date_regraded_and_failed(graded):
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade-batch", str(cls), "--assignment", "ps2",
                           "--out", str(out), "--jobs", "2"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "2 up to date, 1 regraded, 0 failed" in done.stdout


def sdpa_points(out: Path) -> tuple[float, float]:
    """scaled_dot_product_attention's points right, and as ben's mistake (ada's new file) scores."""
    ben = from_json((out / "ben.json").read_text()).exercise_scores()
    return exercise_points("scaled_dot_product_attention"), ben["scaled_dot_product_attention"]


def test_changes_csv_gives_each_regraded_students_old_and_new_score(graded):
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    rerun(cls, out)
    rows = list(csv.DictReader((out / "changes.csv").open()))
    assert [(r["student"], r["old_score"], r["new_score"], r["max_score"], r["change"], r["why"]) for r in rows] == [
        ("ada", f"{PS2_FULL:g}", scores(out)["ben"], f"{PS2_FULL:g}",
         f"{float(scores(out)['ben']) - PS2_FULL:+g}", "submission changed")]
    old, new = sdpa_points(out)
    assert f"scaled_dot_product_attention {old:g} -> {new:g}" in rows[0]["exercises"]


def test_the_summary_has_a_changes_section(graded):
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    result = rerun(cls, out)
    (change,) = result.summary.changes
    assert (change.student, change.old_score, change.new_score, change.why) == (
        "ada", PS2_FULL, float(scores(out)["ben"]), "submission changed")
    assert change.exercises["scaled_dot_product_attention"] == sdpa_points(out)


def test_changes_csv_of_a_run_that_regraded_nobody_is_empty(graded):
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    rerun(cls, out)
    rerun(cls, out)
    assert (out / "changes.csv").read_text().splitlines()[1:] == []


def test_a_new_grader_version_regrades_everyone(graded, monkeypatch):
    cls, out = graded
    monkeypatch.setattr(regrade, "grader_version", lambda: "a-grader-fix")
    result = rerun(cls, out)
    assert result.regraded == sorted(CLASS) and {c.why for c in result.changes} == {"grader changed"}


def test_another_timeout_regrades_everyone(graded):
    cls, out = graded
    result = rerun(cls, out, timeout=5)
    assert result.regraded == sorted(CLASS) and {c.why for c in result.changes} == {"--timeout changed"}


def test_force_regrades_everyone(graded):
    cls, out = graded
    result = rerun(cls, out, force=True)
    assert result.regraded == sorted(CLASS) and result.up_to_date == []


def test_student_grades_only_those_named(graded):
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    shutil.copy(RIGHT, cls / "ben.py")
    ada_before = (out / "ada.json").read_bytes()
    result = rerun(cls, out, students=["ben"])
    assert (result.regraded, result.not_selected) == (["ben"], ["ada", "cy"])
    assert (out / "ada.json").read_bytes() == ada_before  # changed, but not named: left as it was
    assert scores(out) == {"ada": f"{PS2_FULL:g}", "ben": f"{PS2_FULL:g}", "cy": f"{PS2_FULL:g}"}


def test_a_student_named_but_up_to_date_is_not_regraded(graded):
    cls, out = graded
    result = rerun(cls, out, students=["ben"])
    assert (result.up_to_date, result.regraded) == (["ben"], [])


def test_a_student_named_without_a_submission_exits_2_with_one_line(graded, capsys):
    cls, out = graded
    code = main(["grade-batch", str(cls), "--assignment", "ps2", "--out", str(out), "--student", "zoe"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "'zoe'" in err


# ---------------------------------------------------------------- a record that cannot be trusted

def test_a_forged_submission_digest_is_regraded(graded):
    cls, out = graded
    rewrite(out, "ada", lambda d: d["extra_data"]["graded"].update(submission="sha256:" + "0" * 64))
    result = rerun(cls, out)
    assert result.regraded == ["ada"] and result.changes[0].why == "submission changed"


def test_a_results_file_without_a_record_is_regraded(graded):
    cls, out = graded
    rewrite(out, "ada", lambda d: d["extra_data"].pop("graded"))
    result = rerun(cls, out)
    assert result.regraded == ["ada"] and result.changes[0].why == "no record of what was graded"


def test_a_score_edited_in_the_results_file_is_regraded(graded):
    cls, out = graded

    def fail_one_test(doc):
        doc["tests"][0].update(score=0, status="failed")
        doc["score"] = sum(t["score"] for t in doc["tests"])

    rewrite(out, "ada", fail_one_test)  # consistent in itself, but not what the key vouches for
    result = rerun(cls, out)
    assert result.regraded == ["ada"] and result.changes[0].why == "the results file does not match its record"
    assert scores(out)["ada"] == f"{PS2_FULL:g}"


def test_another_students_results_file_is_regraded(graded):
    cls, out = graded
    shutil.copy(out / "ben.json", out / "ada.json")
    result = rerun(cls, out)
    assert result.regraded == ["ada"] and scores(out)["ada"] == f"{PS2_FULL:g}"


def test_a_results_file_that_is_not_a_whole_grade_is_graded_again(graded):
    cls, out = graded
    (out / "ada.json").write_text('{"score": 40, "tests": []}')
    result = rerun(cls, out)
    assert result.new == ["ada"] and scores(out)["ada"] == f"{PS2_FULL:g}"


# ---------------------------------------------------------------- a submission that moves

def test_a_submission_changed_while_it_is_graded_is_recorded_as_what_was_graded(graded, monkeypatch):
    """The file changes after the grader read it: the results say what was graded, so the
    next run sees the change and regrades."""
    import autograder.graded

    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    real = autograder.graded.grade_loaded

    def grade_then_change(*args, **kwargs):  # runs in the (forked) worker, after the read
        shutil.copy(RIGHT, cls / "ada.py")
        return real(*args, **kwargs)

    monkeypatch.setattr(autograder.graded, "grade_loaded", grade_then_change)
    rerun(cls, out)
    monkeypatch.setattr(autograder.graded, "grade_loaded", real)
    assert scores(out)["ada"] == scores(out)["ben"]  # what was read: the scale_by_dk version
    result = rerun(cls, out)
    assert result.regraded == ["ada"] and scores(out)["ada"] == f"{PS2_FULL:g}"


def test_a_submission_changed_between_the_check_and_the_grading_is_recorded_as_graded(graded, monkeypatch):
    """The batch hashes the file to decide, then it changes before the worker reads it: the
    results record the bytes the worker graded, so the next run finds them up to date."""
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    real, parent = regrade.read_graded, os.getpid()

    def read_then_change(path, base=None):
        got = real(path, base)
        if os.getpid() == parent and Path(path).name == "ada.py":
            shutil.copy(RIGHT, cls / "ada.py")  # after the batch's check, before the worker's read
        return got

    monkeypatch.setattr(regrade, "read_graded", read_then_change)
    rerun(cls, out)
    monkeypatch.setattr(regrade, "read_graded", real)
    assert scores(out)["ada"] == f"{PS2_FULL:g}"
    assert rerun(cls, out).up_to_date == sorted(CLASS)


def test_an_unreadable_submission_is_up_to_date_until_it_changes(graded):
    cls, out = graded
    (cls / "ada.py").unlink()
    os.symlink(RIGHT, cls / "ada.py")  # a link is not followed: score 0
    rerun(cls, out)
    assert scores(out)["ada"] == "0" and rerun(cls, out).up_to_date == sorted(CLASS)
    (cls / "ada.py").unlink()
    shutil.copy(RIGHT, cls / "ada.py")
    assert rerun(cls, out).regraded == ["ada"] and scores(out)["ada"] == f"{PS2_FULL:g}"


# ---------------------------------------------------------------- fail closed

def test_a_grader_failure_on_a_regrade_leaves_no_grade_and_the_student_to_regrade(graded, monkeypatch):
    import autograder.grade
    from autograder.errors import GraderError

    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")

    def judge_bug(*args, **kwargs):
        raise GraderError("the judge has a bug")

    with monkeypatch.context() as m:
        m.setattr(autograder.grade, "run_judge", judge_bug)
        result = rerun(cls, out)
    assert [f.student for f in result.failures] == ["ada"] and scores(out)["ada"] == ""  # not the old 40
    assert [(c.student, c.new_score) for c in result.changes] == [("ada", None)]
    result = rerun(cls, out)
    assert result.regraded == ["ada"] and scores(out)["ada"] == scores(out)["ben"]


def test_a_run_killed_after_regrading_still_reports_those_changes(graded):
    """A run that did not complete (killed) leaves the run number where it was: the run that
    finishes it reports the changes the killed one made."""
    cls, out = graded
    shutil.copy(SCALE_BY_DK, cls / "ada.py")
    run = (out / ".run").read_text()
    rerun(cls, out)
    (out / ".run").write_text(run)  # as if killed after ada's results were written
    result = rerun(cls, out)
    assert result.up_to_date == sorted(CLASS)
    assert [(c.student, c.old_score, c.why) for c in result.changes] == [("ada", PS2_FULL, "submission changed")]


# ---------------------------------------------------------------- grade --student

@pytest.fixture(scope="module")
def nbgrader_class(tmp_path_factory):
    """submitted/<student>/ps2/ps2.ipynb: the file's stem (ps2) is not the student."""
    sys.path.insert(0, str(ROOT / "examples"))
    from make_class import archetype_notebook

    base = tmp_path_factory.mktemp("nbgrader")
    folder = base / "submitted" / "ada" / "ps2"
    folder.mkdir(parents=True)
    (folder / "ps2.ipynb").write_text(archetype_notebook("ps2", "correct_slicing"), encoding="utf-8")
    assert run_batch(base / "submitted", "ps2", base / "out", jobs=1, progress=False).failures == []
    return base


def grade_cli(path: Path, results: Path, *extra: str) -> dict:
    assert main(["grade", str(path), "--assignment", "ps2", "--results", str(results), *extra]) == 0
    return json.loads(results.read_text())


def test_grade_with_student_gives_grade_batchs_results_test_by_test(nbgrader_class, tmp_path):
    notebook = nbgrader_class / "submitted" / "ada" / "ps2" / "ps2.ipynb"
    alone = grade_cli(notebook, tmp_path / "r.json", "--student", "ada")
    assert alone["tests"] == record(nbgrader_class / "out", "ada")["tests"]


def test_grade_without_student_draws_other_inputs(nbgrader_class, tmp_path):
    notebook = nbgrader_class / "submitted" / "ada" / "ps2" / "ps2.ipynb"
    alone = grade_cli(notebook, tmp_path / "r.json")  # seeded by the stem, "ps2"
    assert alone["tests"] != record(nbgrader_class / "out", "ada")["tests"]


# ---------------------------------------------------------------- another problem set; no class

@pytest.fixture(scope="module")
def ps2_notebook_as_ps1(tmp_path_factory):
    base = tmp_path_factory.mktemp("wrong-set")
    (base / "class").mkdir()
    shutil.copy(ROOT / "assignments" / "ps2" / "ps2.ipynb", base / "class" / "ada.ipynb")
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade-batch", str(base / "class"),
                           "--assignment", "ps1", "--out", str(base / "out"), "--jobs", "1"],
                          cwd=ROOT, capture_output=True, text=True)
    return base, done


def test_a_ps2_notebook_graded_as_ps1_is_called_out_on_stderr(ps2_notebook_as_ps1):
    _, done = ps2_notebook_as_ps1
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "autograder: 1 submission(s) look like ps2, not ps1 (ada); graded as ps1, and their results say so"]


def test_a_ps2_notebook_graded_as_ps1_says_so_first_in_its_results(ps2_notebook_as_ps1):
    base, _ = ps2_notebook_as_ps1
    first = record(base / "out", "ada")["output"].splitlines()[0]
    assert first.startswith("This looks like a ps2 submission, not ps1: it has causal_mask,")
    assert "This looks like a ps2 submission" in (base / "out" / "feedback" / "ada.html").read_text()


def test_grade_calls_out_a_ps2_notebook_graded_as_ps1_on_stderr(tmp_path, capsys):
    code = main(["grade", str(ROOT / "assignments" / "ps2" / "ps2.ipynb"), "--assignment", "ps1",
                 "--results", str(tmp_path / "r.json")])
    err = capsys.readouterr().err.splitlines()
    assert code == 0 and len(err) == 1 and "looks like a ps2 submission, not ps1" in err[0]


def test_a_notebook_of_the_set_graded_is_not_called_out(first_run):
    assert all("looks like" not in record(first_run / "out", s)["output"] for s in CLASS)
    ps3 = (ROOT / "assignments" / "ps3" / "ps3.ipynb").read_bytes()  # it also defines ps2's helpers
    assert looks_like(ps3, ".ipynb", "ps3") is None
    assert looks_like(ps3, ".ipynb", "ps2")[0] == "ps3"


NOTEBOOKS = sorted([*(ROOT / "assignments").glob("ps*/ps*.ipynb"), *(ROOT / "tests").rglob("*.ipynb")])


@pytest.mark.parametrize("graded_as", sorted(ASSIGNMENTS))
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_other_set_is_told_the_same_from_the_notebook_the_grader_parsed(path, graded_as):
    """graded.py hands looks_like the notebook submission.parse read (Submission.notebook)
    rather than have it parse the file again: what it finds is the same either way."""
    from autograder.submission import parse

    data = path.read_bytes()
    assert looks_like(data, ".ipynb", graded_as, parse(path, data).notebook) == looks_like(data, ".ipynb", graded_as)


@pytest.mark.parametrize("case", ["a file", "another assignment's submissions"])
def test_a_mistyped_class_folder_exits_2_with_one_line(tmp_path, capsys, case):
    root = tmp_path / "class"
    if case == "a file":
        root.write_text("")
        expect = "not a folder"
    else:
        (root / "submitted" / "ada" / "ps1").mkdir(parents=True)
        (root / "nbgrader_config.py").write_text("")
        expect = "it holds ps1 submissions: is --assignment right?"
    code = main(["grade-batch", str(root), "--assignment", "ps2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and expect in err
    assert not (tmp_path / "out").exists()


def _rglob_sources(root: Path, name: str, suffixes: tuple[str, ...], skip: tuple[str, ...] = ()) -> list:
    """What regrade.sources lists, as pathlib's rglob finds it (how grader_version listed them before)."""
    return [(f"{name}/{p.relative_to(root)}", p) for p in root.rglob("*")
            if p.is_file() and p.suffix in suffixes and "__pycache__" not in p.relative_to(root).parts
            and p.relative_to(root).parts[0] not in skip]


@pytest.mark.parametrize("root", ["autograder", "attention_course", "solutions"])
def test_the_grader_versions_files_are_those_a_full_listing_finds(root):
    assert sorted(regrade.sources(ROOT / root, root, (".py", ".json"), regrade.NEVER_GRADES)) == \
        sorted(_rglob_sources(ROOT / root, root, (".py", ".json"), regrade.NEVER_GRADES))


def test_the_grader_versions_listing_skips_only_caches_and_the_folders_named(tmp_path):
    for rel in ["a.py", "b.json", "c.txt", "..py", ".hidden.py", "x/y.py", "x/__pycache__/y.cpython-311.pyc",
                "__pycache__/z.py", "skip/s.py", "x/skip/kept.py", "deep/er/still.json", "noext"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    listed = sorted(regrade.sources(tmp_path, "p", (".py", ".json"), ("skip",)))
    assert listed == sorted(_rglob_sources(tmp_path, "p", (".py", ".json"), ("skip",)))
    assert ("p/x/skip/kept.py", tmp_path / "x" / "skip" / "kept.py") in listed
