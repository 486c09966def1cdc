"""Each isolation level, attacked in order by the corpus's isolation attacks.

The same sequence of submissions is graded by one sandbox (as one worker grades a class),
once per level, each in its own process: as root (``full``), as root without CAP_SYS_ADMIN
as in Docker and on Gradescope (``uid``), and as an unprivileged user (``none``). A victim
with right answers is graded before and after each attack. Each attack is right on every
exercise only while the sandbox holds; where it breaks through it says ``BREACH:`` and
loses a point. BREACHES below is what each level lets through, docs/isolation.md's attack table in data.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.sandbox.confine import remove_ipc
from autograder.sandbox.zygote import UID_SLOTS, _uid_base
from test_grading_corpus import ROOT, SUBMISSIONS, with_root

pytestmark = pytest.mark.slow  # the corpus's attacks, at three levels, each in its own process

RUNNER = ROOT / "tests" / "isolation_runner.py"
VICTIM = "correct_straightforward.py"  # holds the marker the frame-walking attack hunts for
CHECK = "correct_reports_leftovers.py"
SEQUENCE = [VICTIM, "hostile_walks_frames_for_classmates.py", "hostile_output_tricks.py", CHECK,
            "hostile_plants_for_next.py", CHECK, "hostile_escapes_and_jams.py", CHECK,
            "hostile_memory_and_cpu.py", "hostile_spins_cores.py", "hostile_finds_course_copies.py", CHECK,
            "hostile_finds_course_under_usr.py", "hostile_reads_unimported_packages.py",
            "hostile_reads_other_processes.py", VICTIM]


def uids_of(zygote_pid: int) -> range:
    """The uids one zygote hands its children (a pair per slot): only this run's, so that
    sandboxes of other runs on the machine (a parallel test, another grader) are not counted."""
    base = _uid_base(zygote_pid)
    return range(base, base + 2 * UID_SLOTS)

# What gets through at each level, by the attack's own words (docs/isolation.md).
BREACHES = {
    "full": set(),
    "uid": set(),
    "none": set(),  # memory and CPU summed over its session by the grader's watch (sandbox/usage.py)
}
# Without Landlock the disk is a deny-list below the full level.
WITHOUT_LANDLOCK = {"a copy of the course", "read /etc/passwd", "left by someone else", "the course's solutions",
                    "site-packages", "/proc/"}
HIDDEN_COPIES = ("/usr/src", "/opt", "/home")  # where images keep a course: hidden, as the course is

HOW = {
    "full": [],
    "uid": ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", "--"],
}


def _unprivileged(cmd: list[str]) -> list[str]:
    """Run ``cmd`` as nobody, in a private mount namespace where the interpreter's folders
    are reachable (on these machines Python lives under /root, mode 700)."""
    prelude = r"""
import os, subprocess, sys
base = os.path.realpath(sys.argv[1])
parts = base.strip("/").split("/")
for i in range(1, len(parts)):
    top = "/" + "/".join(parts[:i])
    if os.stat(top).st_mode & 0o001 == 0:
        keep = "/" + "/".join(parts[:i + 1])
        aside = "/dev/shm/.python-aside"
        os.makedirs(aside, exist_ok=True)
        subprocess.run(["mount", "--bind", keep, aside], check=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", top], check=True)
        os.makedirs(keep)
        subprocess.run(["mount", "--move", aside, keep], check=True)
        break
os.execvp("setpriv", ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *sys.argv[2:]])
"""
    return ["unshare", "-m", "--propagation", "private", "--", sys.executable, "-c", prelude, sys.base_prefix, *cmd]


@pytest.fixture(scope="module")
def course_copy():
    """A readable copy of the solutions elsewhere on the disk, as another course might leave it."""
    folder = Path(tempfile.mkdtemp(prefix="autograder-course-copy-", dir="/var/tmp"))
    shutil.copytree(ROOT / "solutions", folder / "solutions")
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture(scope="module")
def hidden_copies():
    """Copies of the solutions at /usr/src, /opt and /home, under a name the attack knows
    (hostile_finds_course_under_usr.py), readable by anyone, which the grader is told to hide."""
    made = []
    for top in HIDDEN_COPIES:
        folder = Path(top) / "autograder-course-copy"
        if folder.exists():
            pytest.fail(f"{folder} exists already: a run that did not clean up, or someone else's")
        shutil.copytree(ROOT / "solutions", folder / "solutions")
        for p in [folder, *folder.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        made.append(str(folder))
    yield made
    for folder in made:
        shutil.rmtree(folder)


@pytest.fixture(scope="module")
def listener():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0autograder-isolation-test")
    s.listen(8)
    yield s
    s.close()


@pytest.fixture(scope="module")
def files():
    yield from readable_copies(SEQUENCE, "isolation-")


def readable_copies(names, prefix: str):
    """The ps3 corpus files ``names`` (with the repository's root filled in) in a folder of
    their own that any uid may read, as every level's child must; removed after."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    paths = []
    for name in names:
        target = folder / name
        shutil.copy(with_root(SUBMISSIONS / "ps3" / name), target)
        target.chmod(0o644)
        paths.append(str(target))
    yield paths
    shutil.rmtree(folder)


def _real_uid(pid: str) -> int | None:
    """From status, not the folder's owner: a process that changed uid is not dumpable, and
    its /proc folder belongs to root."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _sandbox_processes(uids: range) -> list[str]:
    # `None in range(...)` would walk the whole range: a process that ended mid-read is skipped.
    return [e for e in os.listdir("/proc") if e.isdigit() and (uid := _real_uid(e)) is not None
            and uid in uids]


def _shm_of(uids) -> list[str]:
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [line for line in lines if int(line.split()[7]) in uids]


def _sandbox_files(uids: range) -> list[str]:
    found = []
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        for entry in os.scandir(folder):
            try:
                if entry.stat(follow_symlinks=False).st_uid in uids:
                    found.append(entry.path)
            except OSError:
                pass
    return found


@pytest.fixture(scope="module", params=["full", "uid", "none"])
def run(request, files, course_copy, hidden_copies, listener):
    if os.geteuid() != 0:
        pytest.skip("trying the three levels needs root (CI runs as root)")
    level = request.param
    cmd = [sys.executable, str(RUNNER), "ps3", *files]
    cmd = _unprivileged(cmd) if level == "none" else HOW[level] + cmd
    env = {**os.environ, "ISOLATION_HIDE": os.pathsep.join(hidden_copies)}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    finally:
        if level == "none":
            left = _shm_of(range(65534, 65535))
            remove_ipc(65534)  # without a user namespace this level cannot stop it
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    if level != "none":
        report["uids"] = uids_of(report["zygote"])
        left = _shm_of(report["uids"])
    report["shm_left"] = left
    report["expected_level"] = level
    return report


def breaches(graded: dict) -> set[str]:
    return {line.removeprefix("BREACH: ") for line in graded["output"].splitlines() if line.startswith("BREACH: ")}


def allowed(run) -> set[str]:
    extra = set() if "landlock" in run["layers"] or run["level"] == "full" else WITHOUT_LANDLOCK
    return BREACHES[run["level"]] | extra


def test_level_is_the_one_asked_for(run):
    assert run["level"] == run["expected_level"], run["layers"]


def test_every_results_file_records_its_level(run):
    assert {g["isolation"] for g in run["graded"]} == {run["expected_level"]}


@pytest.mark.parametrize("position", range(len(SEQUENCE)), ids=[f"{i}-{n[:-3]}" for i, n in enumerate(SEQUENCE)])
def test_each_submission_gets_what_the_level_promises(run, position):
    graded = run["graded"][position]
    got = breaches(graded)
    unexpected = {b for b in got if not any(a in b for a in allowed(run))}
    assert not unexpected, f"{graded['file']} at level {run['level']}: {unexpected}"
    if not got:
        assert graded["score"] == graded["max_score"], (graded["exercises"], graded["output"][-1500:])


def test_the_victim_after_every_attack_gets_full_marks(run):
    last = run["graded"][-1]
    assert last["file"] == VICTIM and last["score"] == last["max_score"], last["output"][-1500:]


def test_output_flood_is_capped_and_quick(run):
    graded = run["graded"][SEQUENCE.index("hostile_output_tricks.py")]
    assert len(graded["output"]) <= 10_000
    assert graded["seconds"] < 20  # the FIFO froze the old grader for 46 s at a 1 s timeout


def test_nothing_of_a_submission_survives(run):
    """Below root the children run as the grader's user (nobody here): none of its processes
    may be left, and, in a user namespace, no SysV shared memory either."""
    if run["level"] == "none":
        assert [e for e in os.listdir("/proc") if e.isdigit() and _real_uid(e) == 65534] == []
        if "user namespace" in run["layers"]:
            assert run["shm_left"] == []
        return
    assert _sandbox_processes(run["uids"]) == []
    assert run["shm_left"] == []
    assert _sandbox_files(run["uids"]) == []


def test_the_layers_are_the_levels(run):
    """Full: namespaces and a uid per child. Uid: a uid per child, no namespaces. None: a
    user namespace where the kernel allows unprivileged ones."""
    layers = set(run["layers"])
    if run["level"] == "full":
        assert {"namespaces", "allow-list root", "uid per child"} <= layers
    elif run["level"] == "uid":
        assert "uid per child" in layers and "namespaces" not in layers
    else:
        allowed = Path("/proc/sys/user/max_user_namespaces").read_text().strip() != "0"
        assert ("user namespace" in layers) == allowed and "uid per child" not in layers
