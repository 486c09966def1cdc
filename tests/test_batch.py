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

from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.batch import BatchIncomplete, grade_batch, run_batch
from autograder.discovery import discover
from autograder.errors import GraderError
from proc_tree import children
from test_grading_corpus import make_class, with_root

ROOT = Path(__file__).resolve().parent.parent
PS2_FULL = sum(exercise_points(e) for e in ASSIGNMENTS["ps2"])  # a right submission's score
CORPUS = ROOT / "tests" / "submissions" / "ps2"
CLASS = {  # student -> a corpus file (right, hostile) or a sample-class archetype (examples/make_class.py)
    "ada": "correct_straightforward.py", "ben": "mc_scale_by_dk.py", "cy": "hostile_memory_bomb.py",
    "dee": "missing_mask:scaled_dot_product_attention", "eve": "correct_slicing",
    "fay": "hostile_monkeypatch_allclose.py", "gus": "qkv_split_order:fused_self_attention:kqv",
    "hal": "correct_einsum_logsumexp.py",
    "ivy": "hostile_keyboard_interrupt_loop.py",  # hangs for --timeout: the batch is still running when killed
}


def write_student(folder: Path, student: str, source: str) -> None:
    """A corpus file as the corpus grades it (after the reference, for a `# base: reference`
    file), or an archetype's notebook."""
    if source.endswith(".py"):
        shutil.copy(with_root(CORPUS / source), folder / f"{student}.py")
    else:
        (folder / f"{student}.ipynb").write_text(make_class.archetype_notebook("ps2", source), encoding="utf-8")


def autograder(*args, **kw):
    return subprocess.run([sys.executable, "-m", "autograder.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, **kw)


# The class and its uninterrupted batch are made once per module and only read by the tests:
# a test that grades writes to its own tmp_path.
@pytest.fixture(scope="module")
def flat_class(tmp_path_factory):
    folder = tmp_path_factory.mktemp("flat") / "class"
    folder.mkdir()
    for student, source in CLASS.items():
        write_student(folder, student, source)
    (folder / "zed.ipynb").write_text('{"cells": [')  # a malformed notebook
    return folder


@pytest.fixture(scope="module")
def uninterrupted(flat_class, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference-run") / "out"
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
    full = sum(exercise_points(e) for e in ASSIGNMENTS["ps2"])
    assert {r["student"]: r["score"] for r in rows}["ada"] == f"{full:g}"
    assert {r["student"]: r["score"] for r in rows}["zed"] == "0"


def test_feedback_page_explains_the_mistake_with_a_heatmap(uninterrupted):
    page = (uninterrupted / "feedback" / "ben.html").read_text()
    assert "scale by dk" in page and "sqrt(d_k)" in page
    assert "expected weights" in page and "your weights" in page


def test_class_report_counts_mistakes(uninterrupted):
    page = (uninterrupted / "class.html").read_text()
    row = next(r for r in page.split("class='mistake'") if "<code>scale_by_dk</code>" in r)
    assert "1 student (10%)" in row and "href='feedback/ben.html'" in row  # who made it, linked
    assert page.count("<svg") >= 3  # the score histogram, how each exercise went, the class's weights
    assert (uninterrupted / "index.html").read_text().count("href='class.html'") == 1


@pytest.fixture(scope="module")
def cli_batch(flat_class, tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "out"
    return out, autograder("grade-batch", flat_class, "--assignment", "ps2", "--out", out, "--jobs", "2",
                           "--timeout", "2")


def test_cli_batch_exits_0_and_prints_the_class_summary(cli_batch):
    _, done = cli_batch
    assert done.returncode == 0, done.stderr
    assert "ps2: 10 students" in done.stdout and "grades.csv" in done.stdout
    assert done.stderr == ""  # no progress bar when not on a terminal


def test_cli_batch_ends_with_the_address_of_the_index_to_open(cli_batch):
    out, done = cli_batch
    last = done.stdout.strip().splitlines()[-1]
    assert last == f"Open {(out / 'index.html').resolve().as_uri()}" and (out / "index.html").is_file()


@pytest.mark.slow  # a batch per kill, then a re-run
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_killed_batch_resumes_to_the_same_grades(flat_class, uninterrupted, tmp_path, how):
    out = tmp_path / "killed"
    # Ctrl-C as a terminal sends it: to a batch that has SIGINT's default action. (An earlier
    # test in this process may ignore SIGINT, and an ignored signal is inherited.)
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade-batch", str(flat_class),
                             "--assignment", "ps2", "--out", str(out), "--jobs", "2", "--timeout", "2"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    # Kill once a worker has written a grade: zed's unreadable notebook is recorded before the
    # pool starts, and a Ctrl-C while the pool is being set up is another test's matter.
    while not [p for p in out.glob("*.json") if p.stem != "zed"] and time.monotonic() < deadline:
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


@pytest.mark.slow  # nbgrader's gradebook: a schema and a row per grade cell
def test_gradebook_receives_the_scores(uninterrupted, flat_class, tmp_path):
    from nbgrader.api import Gradebook

    out = tmp_path / "out"
    shutil.copytree(uninterrupted, out)  # every student done: the batch only writes the gradebook
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    # the reference run's --timeout: another one would regrade everyone (it is part of what was graded)
    done = autograder("grade-batch", flat_class, "--assignment", "ps2", "--out", out, "--timeout", "2",
                      "--gradebook", url)
    assert "0 new, 10 up to date, 0 regraded, 0 failed" in done.stdout
    assert done.returncode == 0, done.stderr
    with Gradebook(url) as gb:
        assert gb.find_submission("ps2", "ada").score == PS2_FULL
        assert gb.find_grade("causal_mask", "ps2", "ps2", "zed").score == 0


def test_progress_bar_shows_count_rate_and_eta_on_a_terminal(capsys):
    from autograder.progress import Progress

    bar = Progress(total=4, done=1, enabled=True)
    bar.step()
    bar.close()
    err = capsys.readouterr().err
    assert "2/4" in err and "/s ETA" in err and err.endswith("\n")


def test_progress_bar_is_silent_when_disabled(capsys):
    from autograder.progress import Progress

    bar = Progress(total=4, done=0, enabled=False)
    bar.step()
    bar.close()
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------- a grader failure is not a grade

class BrokenSandbox:
    """The sandbox starts but its protocol breaks on every run."""

    def __init__(self, hide=None):
        pass

    def run(self, *args, **kwargs):
        raise GraderError("the sandbox failed (no answer)")


class SandboxThatCannotStart:
    def __init__(self, hide=None):
        raise GraderError("the sandbox process failed to start")


def judge_bug(*args, **kwargs):
    raise GraderError("the judge of causal_mask has a bug (IndexError: list index out of range)")


@pytest.fixture
def one_student(tmp_path):
    (tmp_path / "class").mkdir()
    shutil.copy(CORPUS / "correct_straightforward.py", tmp_path / "class" / "ada.py")
    shutil.copy(CORPUS / "mc_scale_by_dk.py", tmp_path / "class" / "ben.py")
    return tmp_path / "class"


def break_grader(monkeypatch, how):
    """Workers are forked from this process (pools.LocalPool forks them itself), so they inherit the patch."""
    import autograder.grade
    import autograder.sandbox

    if how == "judge bug":
        monkeypatch.setattr(autograder.grade, "run_judge", judge_bug)
    else:
        monkeypatch.setattr(autograder.sandbox, "Sandbox",
                            BrokenSandbox if how == "sandbox breaks" else SandboxThatCannotStart)


HOW = ["sandbox breaks", "sandbox cannot start", "judge bug"]


@pytest.mark.parametrize("how", HOW)
def test_a_grader_failure_is_reported_not_graded(one_student, tmp_path, monkeypatch, how):
    break_grader(monkeypatch, how)
    result = run_batch(one_student, "ps2", tmp_path / "out", jobs=1, progress=False)
    assert result.rows == [] and [f.student for f in result.failures] == ["ada", "ben"]
    assert "\n" not in result.failures[0].reason
    assert list((tmp_path / "out").glob("*.json")) == []  # nothing a re-run would take as done


@pytest.mark.parametrize("how", HOW)
def test_a_grader_failure_leaves_the_score_empty_not_zero(one_student, tmp_path, monkeypatch, how):
    break_grader(monkeypatch, how)
    run_batch(one_student, "ps2", tmp_path / "out", jobs=1, progress=False)
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open()))
    assert [(r["student"], r["score"], r["causal_mask"]) for r in rows] == [("ada", "", ""), ("ben", "", "")]


def test_a_rerun_grades_the_students_the_grader_failed_on(one_student, tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        break_grader(m, "sandbox breaks")
        run_batch(one_student, "ps2", tmp_path / "out", jobs=1, progress=False)
    result = run_batch(one_student, "ps2", tmp_path / "out", jobs=1, progress=False)
    assert result.failures == [] and [(r["student"], r["score"]) for r in result.rows][0] == ("ada", PS2_FULL)
    assert sorted(p.stem for p in (tmp_path / "out").glob("*.json")) == ["ada", "ben"]


FORKSERVER_BATCH = """
import multiprocessing, sys
multiprocessing.set_start_method("forkserver", force=True)  # Python 3.14's default on Linux
import autograder.grade
from autograder.batch import run_batch
from autograder.errors import GraderError

def judge_bug(*args, **kwargs):
    raise GraderError("the judge has a bug")

autograder.grade.run_judge = judge_bug  # in this process's memory only
result = run_batch(sys.argv[1], "ps2", sys.argv[2], jobs=1, progress=False)
print(",".join(f.student for f in result.failures))
"""


def test_workers_are_forked_from_the_batch_whatever_the_default_start_method(one_student, tmp_path):
    """A worker is a copy of the batch (its parent, so it dies with it; what the batch holds,
    it holds): with forkserver it would be a fresh interpreter that grades with a sound judge."""
    done = subprocess.run([sys.executable, "-c", FORKSERVER_BATCH, str(one_student), str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ada,ben"]


def test_grade_batch_raises_after_writing_what_it_could(one_student, tmp_path, monkeypatch):
    break_grader(monkeypatch, "sandbox breaks")
    with pytest.raises(BatchIncomplete) as info:
        grade_batch(one_student, "ps2", tmp_path / "out", jobs=1, progress=False)
    assert [f.student for f in info.value.failures] == ["ada", "ben"]
    assert (tmp_path / "out" / "grades.csv").is_file()


def test_a_results_file_an_older_grader_wrote_for_its_own_failure_is_graded_again(one_student, tmp_path):
    from autograder.grade import ungraded

    out = tmp_path / "out"
    (out / "feedback").mkdir(parents=True)
    old = ungraded("ps2", "ada", "the grader failed on this submission (GraderError: x); ask your instructor")
    (out / "ada.json").write_text(old.to_json())
    (out / "feedback" / "ada.html").write_text("")
    rows = grade_batch(one_student, "ps2", out, jobs=1, progress=False)
    assert rows[0]["student"] == "ada" and rows[0]["score"] == PS2_FULL


@pytest.mark.parametrize("how", HOW)
def test_cli_batch_reports_a_grader_failure_and_exits_non_zero(one_student, tmp_path, monkeypatch, capsys, how):
    from autograder.cli import main

    break_grader(monkeypatch, how)
    code = main(["grade-batch", str(one_student), "--assignment", "ps2", "--out", str(tmp_path / "out"), "--jobs", "1"])
    captured = capsys.readouterr()
    assert code == 1
    assert "NOT GRADED: the grader failed on 2 submission(s)" in captured.out
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "grader failure on 2 submission(s) (ada, ben)" in lines[0]


@pytest.mark.parametrize("how", HOW)
def test_cli_grade_exits_non_zero_with_one_line_on_a_grader_failure(tmp_path, monkeypatch, capsys, how):
    from autograder.cli import main

    class AsContext:  # `grade` uses the sandbox as a context manager
        def __init__(self, hide=None, **options):
            self.inner = (BrokenSandbox if how == "sandbox breaks" else SandboxThatCannotStart)(hide)

        def launch(self):  # prestart.start launches it before the grader's imports
            return self

        def __enter__(self):
            return self.inner

        def __exit__(self, *exc):
            pass

        def close(self):
            pass

    import autograder.grade
    import autograder.sandbox

    if how == "judge bug":
        monkeypatch.setattr(autograder.grade, "run_judge", judge_bug)
    else:
        monkeypatch.setattr(autograder.sandbox, "Sandbox", AsContext)
    code = main(["grade", str(CORPUS / "correct_straightforward.py"), "--assignment", "ps2",
                 "--results", str(tmp_path / "r.json")])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == "" and not (tmp_path / "r.json").exists()
    assert len(captured.err.splitlines()) == 1 and "the grader failed, not the submission" in captured.err


@pytest.mark.parametrize("folder", ["missing", "empty", "only_other_files"])
def test_cli_batch_with_nothing_to_grade_exits_non_zero_with_one_line(tmp_path, capsys, folder):
    from autograder.cli import main

    root = tmp_path / "class"
    if folder != "missing":
        root.mkdir()
    if folder == "only_other_files":
        (root / "notes.txt").write_text("")
    code = main(["grade-batch", str(root), "--assignment", "ps2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("planted", ["numpy", "autograder", "sitecustomize"])
def test_a_cold_grade_started_in_a_students_folder_imports_nothing_of_theirs(tmp_path, planted):
    """The sandbox is launched before the grader's own imports (prestart.py) and its zygote runs
    without site (-S): a package of the student's, in the folder `autograder grade` runs in,
    reaches neither the grader's process nor the zygote, which is root."""
    marker = tmp_path / "ran"
    (tmp_path / planted).mkdir()
    (tmp_path / planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    shutil.copy(CORPUS / "correct_straightforward.py", tmp_path / "ada.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(Path(sys.executable).parent / "autograder"), "--course", str(ROOT), "grade", "ada.py",
                           "--assignment", "ps2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["score"] == sum(exercise_points(e) for e in ASSIGNMENTS["ps2"])
    assert not marker.exists()


def _zygotes_of(pid: int) -> dict[int, int]:
    """The zygotes ``pid`` started (its children running autograder.sandbox.zygote), each with
    its number of clients (the sockets on its command line), from /proc."""
    found = {}
    for child in children(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"autograder.sandbox.zygote" in argv:
            found[child] = len(argv[argv.index(b"autograder.sandbox.zygote") + 1].split(b","))
    return found


# The counts below are of the zygotes a batch starts as root, as CI runs it: as another user it
# starts one more, first, to ask whether it may grade at all (cli._refusal).
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="counts a root batch's zygotes (another user's asks first)")


@AS_ROOT
@pytest.mark.parametrize("students", [1, 3])
def test_grade_batch_ends_the_zygote_it_started_before_it_returns(tmp_path, students):
    """grade-batch launches one zygote before it imports the grader, with a socket for each
    worker, hands each socket to a worker, and reaps the zygote: it does not outlive the
    command, also where there are fewer students than workers (a socket started for nothing).
    Graded by the same command line a teacher types, watched from /proc while it runs."""
    (tmp_path / "class").mkdir()
    for i in range(students):
        shutil.copy(CORPUS / "correct_straightforward.py", tmp_path / "class" / f"s{i}.py")
    seen = _batch_zygotes(tmp_path)  # ended by the time it returned
    assert list(seen.values()) == [2], f"expected one zygote, with a client per worker (--jobs 2): {seen}"
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open()))
    assert [float(r["score"]) for r in rows] == [PS2_FULL] * students


def _batch_zygotes(tmp_path: Path) -> dict[int, int]:
    """Run `autograder grade-batch` on tmp_path/class into tmp_path/out (--jobs 2); the zygotes
    it started, each with its number of clients, each ended by the time it returned."""
    proc = subprocess.Popen([str(Path(sys.executable).parent / "autograder"), "--course", str(ROOT), "grade-batch",
                             str(tmp_path / "class"), "--assignment", "ps2", "--out", str(tmp_path / "out"),
                             "--jobs", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen: dict[int, int] = {}
    while proc.poll() is None:
        seen |= _zygotes_of(proc.pid)
        time.sleep(0.005)
    assert proc.returncode == 0, proc.stderr.read()
    assert [z for z in seen if Path(f"/proc/{z}").exists()] == []
    return seen


@AS_ROOT
def test_a_rerun_starts_zygotes_only_for_the_students_it_grades(tmp_path):
    """A first run launches its workers' zygote before it knows who needs grading (all do); a
    re-run only once it does: none when everyone's grade stands, one with a single client (one
    worker) for one changed file."""
    (tmp_path / "class").mkdir()
    for name in ("ada", "ben", "cy"):
        shutil.copy(CORPUS / "correct_straightforward.py", tmp_path / "class" / f"{name}.py")
    assert list(_batch_zygotes(tmp_path).values()) == [2]
    assert _batch_zygotes(tmp_path) == {}
    shutil.copy(CORPUS / "mc_scale_by_dk.py", tmp_path / "class" / "ben.py")
    assert list(_batch_zygotes(tmp_path).values()) == [1]


class _Recording:
    """A Pool that grades nobody: it keeps the order it was handed the students in."""

    def __init__(self):
        self.todo = []

    def start(self, todo, settings):
        self.todo = list(todo)

    def outcomes(self):
        from autograder.tasks import Outcome

        for job in self.todo:
            yield job, Outcome(job.entry.student, failure="not graded")

    def close(self, cancel=False):
        pass

    def describe(self):
        return {}


def test_the_largest_submissions_are_handed_out_first(tmp_path):
    """Longest first: a slow submission handed out last would leave the other workers idle."""
    folder = tmp_path / "class"
    folder.mkdir()
    sizes = {"amy": 1000, "bob": 3000, "cat": 2000, "dan": 0}
    for student, n in sizes.items():
        (folder / f"{student}.py").write_text("#" * n)
    (folder / "eve.py").symlink_to(folder / "bob.py")  # the link's own size (its target's name), not bob's
    pool = _Recording()
    run_batch(folder, "ps2", tmp_path / "out", pool=pool)
    assert [job.entry.student for job in pool.todo] == ["bob", "cat", "amy", "eve", "dan"]


@pytest.mark.parametrize(("line", "fast"), [
    (["grade", "x.ipynb", "--assignment", "ps2"], True),
    (["grade-batch", "d", "--assignment", "ps2", "--out", "o"], True),
    (["--course", "c", "grade-batch", "d", "--assignment", "ps2", "--out", "o", "--jobs", "2"], True),
    (["grade-batch", "d", "--assignment", "ps2", "--out", "o", "--scheduler", "tcp://127.0.0.1:1"], False),
    (["grade-batch", "d", "--assignment", "ps2", "--out", "o", "--scheduler=tcp://127.0.0.1:1"], False),
    (["grade-batch", "d", "--assignment", "ps2", "--out", "o", "--gradebook", "sqlite:///g.db"], False),
    (["grade-batch", "--gradebook", "--assignment", "ps2", "--out", "o"], False),  # a folder so named: the usual end
    (["export", "o"], False),
    (["lti", "serve"], False),
])
def test_only_a_command_that_leaves_nothing_open_skips_the_interpreters_teardown(line, fast):
    from autograder.cli import _ends_clean

    assert _ends_clean(line) is fast


def test_a_batch_that_ends_at_once_has_said_and_written_everything(tmp_path):
    """grade-batch ends without the interpreter's teardown: its summary is all printed and
    every file is whole (run as `python -m autograder.cli`, as the benchmarks do)."""
    folder = tmp_path / "class"
    folder.mkdir()
    for student in ("amy", "bob", "cat"):
        write_student(folder, student, "correct_einsum")
    done = autograder("grade-batch", folder, "--assignment", "ps2", "--out", tmp_path / "out", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert "3 submissions in" in done.stdout and done.stdout.rstrip().endswith("index.html")
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open()))
    assert [r["student"] for r in rows] == ["amy", "bob", "cat"]
    assert all(json.loads((tmp_path / "out" / f"{s}.json").read_text())["score"] > 0 for s in ("amy", "bob", "cat"))
    assert (tmp_path / "out" / "class.html").read_text().rstrip().endswith("</html>")


def test_a_batch_without_the_reference_reports_the_graders_failure_for_each_student(tmp_path):
    """Loading the reference before the workers fork only saves them time: where there is none,
    each student is the grader's failure, reported and not graded, as before."""
    folder = tmp_path / "class"
    folder.mkdir()
    for student in ("amy", "bob"):
        write_student(folder, student, "correct_einsum")
    (tmp_path / "none").mkdir()
    done = autograder("grade-batch", folder, "--assignment", "ps2", "--out", tmp_path / "out", "--jobs", "2",
                      env=dict(os.environ, AUTOGRADER_SOLUTIONS=str(tmp_path / "none")))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "grader failure on 2 submission(s) (amy, bob)" in done.stderr and "no reference solutions" in done.stderr
    assert not (tmp_path / "out" / "amy.json").exists()
