"""graded.grade_snapshot: the bytes the grader read are graded as they are, and grading them
writes nothing: no copy to read again, no folder for one."""
import dataclasses
import os
import sys
from pathlib import Path

import pytest

from autograder.grade import grade, hidden_paths
from autograder.graded import grade_snapshot
from autograder.intake import snapshot
from autograder.results import Results
from autograder.sandbox import Sandbox
from autograder.tasks import Task, grade_task

ROOT = Path(__file__).resolve().parent.parent
PS2 = ROOT / "tests" / "submissions" / "ps2"
RIGHT = PS2 / "correct_straightforward.py"
SCALE_BY_DK = PS2 / "mc_scale_by_dk.py"
RELEASED = ROOT / "assignments" / "ps2" / "ps2.ipynb"  # every exercise a stub
WRITES = {"os.mkdir", "os.remove", "os.rmdir", "os.rename", "os.truncate", "os.link", "os.symlink", "shutil.rmtree"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_watched: list[list[tuple]] = []  # while grading is watched: what this process wrote


def _record(event: str, args: tuple) -> None:
    # "open" is (path, mode, flags) for open() and os.open() alike; flags say whether it writes.
    if _watched and (event in WRITES or (event == "open" and isinstance(args[2], int) and args[2] & WRITE_FLAGS)):
        _watched[-1].append((event, args))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    # An audit hook stays for the process: it records only while a test watches.
    sys.addaudithook(_record)
    with Sandbox(hide=hidden_paths(tmp_path_factory.getbasetemp())) as sb:
        # One student graded first, as a worker's first, so that what is written once per process
        # is written now, not while watched: no .pyc for an import, no compiled template for a page.
        grade_task(Task("warm", snapshot(RIGHT), "ps2", 10.0, 1, None), sb)
        yield sb


def graded_part(results: Results) -> str:
    """The results file, but for how long grading took."""
    return dataclasses.replace(results, execution_time=0.0).to_json()


@pytest.mark.parametrize("read, now", [(RIGHT, SCALE_BY_DK), (SCALE_BY_DK, RIGHT)], ids=lambda p: p.stem)
def test_the_bytes_read_are_graded_not_the_file_now_on_disk(sandbox, tmp_path, read, now):
    path = tmp_path / "ada.py"
    path.write_bytes(read.read_bytes())
    snap = snapshot(path)
    expected = grade(path, "ps2", sandbox=sandbox, student="ada")  # the file as it was read
    path.write_bytes(now.read_bytes())
    results, _ = grade_snapshot(snap, "ps2", sandbox=sandbox, student="ada", timeout=10.0)
    assert graded_part(results) == graded_part(expected)


FACES = {
    "grade_snapshot": lambda snap, sandbox: grade_snapshot(snap, "ps2", sandbox=sandbox, student="ada",
                                                           timeout=10.0),
    "grade_task": lambda snap, sandbox: grade_task(Task("ada", snap, "ps2", 10.0, 1, None), sandbox),
}


@pytest.mark.parametrize("face", sorted(FACES))
@pytest.mark.parametrize("submission", [RIGHT, RELEASED], ids=lambda p: p.name)
def test_grading_the_bytes_read_writes_nothing(sandbox, tmp_path, monkeypatch, face, submission):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / submission.name).write_bytes(submission.read_bytes())
    monkeypatch.chdir(folder)
    snap = snapshot(folder / submission.name)
    before = sorted(tmp_path.rglob("*"))
    _watched.append([])
    try:
        FACES[face](snap, sandbox)
    finally:
        written = _watched.pop()
    assert written == [] and sorted(tmp_path.rglob("*")) == before
