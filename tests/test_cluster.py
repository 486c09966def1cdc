"""grade-batch --scheduler: a real Dask scheduler and two workers on 127.0.0.1 grade a class
exactly as the local pool does, through a worker killed mid-run, a client killed mid-run, a
submission that kills its worker, and over mutual TLS with throwaway certificates.

The scheduler and workers are started once per module (free ports, their own process groups)
and stopped by their process ids.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from distributed import Client

from autograder import cluster
from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.batch import run_batch
from autograder.intake import Snapshot
from autograder.tasks import Task, grade_task
from autograder.cli import main
from autograder.cluster import ClusterError, DaskPool, TLSFiles, check_address
from cluster_worker_preload import MARKER
from test_hostile_class import _make_flat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from make_class import archetype_notebook, make_class  # noqa: E402

BIN = Path(sys.executable).parent
PRELOAD = Path(__file__).resolve().parent / "cluster_worker_preload.py"
TIMEOUT = "1"  # seconds per exercise: the hanging students keep a task in flight for a while
PS2_FULL = sum(exercise_points(e) for e in ASSIGNMENTS["ps2"])
STARTUP = 90  # seconds for a scheduler and its workers to come up on a busy 2-core machine


# ---------------------------------------------------------------- a cluster of our own

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LocalCluster:
    address: str
    procs: list[subprocess.Popen]
    security: object = None

    def client(self) -> Client:
        return Client(self.address, security=self.security, set_as_default=False)

    def stop(self) -> None:
        for proc in reversed(self.procs):  # workers first (each with its nanny's children), then the scheduler
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def start_cluster(folder: Path, workers: int, tls: dict[str, Path] | None = None) -> LocalCluster:
    """``dask scheduler`` and ``workers`` × ``dask worker --nthreads 1`` (each under a nanny,
    which restarts a killed worker), with the preload that stands in for a worker-killing
    submission. A task may see its worker die once; the second time it is given up."""
    port = free_port()
    scheme = "tls" if tls else "tcp"
    address = f"{scheme}://127.0.0.1:{port}"
    certs = [] if not tls else ["--tls-ca-file", tls["ca"], "--tls-cert", tls["cert"], "--tls-key", tls["key"]]
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
           "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)

    def start(name: str, args: list) -> subprocess.Popen:
        return subprocess.Popen([str(BIN / "dask"), *map(str, args)], env=env, cwd=folder, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=open(logs / f"{name}.log", "w"))

    procs = [start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard",
                                 "--protocol", scheme, *certs])]
    for i in range(workers):
        procs.append(start(f"worker{i}", ["worker", address, "--nthreads", "1", "--host", "127.0.0.1",
                                          "--no-dashboard", "--preload", PRELOAD,
                                          "--local-directory", folder / f"worker{i}", *certs]))
    security = None
    if tls:
        from distributed.security import Security

        security = Security(tls_ca_file=str(tls["ca"]), tls_client_cert=str(tls["cert"]),
                            tls_client_key=str(tls["key"]), require_encryption=True)
    started = LocalCluster(address, procs, security)
    try:
        with started.client() as client:
            client.wait_for_workers(workers, timeout=STARTUP)
    except BaseException:
        started.stop()
        raise
    return started


# ---------------------------------------------------------------- the class, and its local grades

HANGS = "student06-hangs"  # in the middle of the class: its task is in flight when a third is graded


@pytest.fixture(scope="module")
def class_folder(tmp_path_factory) -> Path:
    """12 students of the sample class (every catalogued mistake), one who hangs in an exercise
    and one whose notebook crashes one."""
    folder = tmp_path_factory.mktemp("cluster-class")
    make_class(folder, assignments=("ps2",), students=12, seed=0)
    for student, archetype in [(HANGS, "timeout:attention_shapes"), ("student13", "crashed:fused_self_attention")]:
        path = folder / "submitted" / student / "ps2" / "ps2.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(archetype_notebook("ps2", archetype), encoding="utf-8")
    return folder


CLASS_SIZE = 14


def grade_batch_command(folder: Path, out: Path, *more) -> list[str]:
    return [sys.executable, "-m", "autograder.cli", "grade-batch", str(folder), "--assignment", "ps2",
            "--out", str(out), "--timeout", TIMEOUT, *map(str, more)]


@pytest.fixture(scope="module")
def local_run(class_folder, tmp_path_factory) -> Path:
    """The class graded by the local pool, --jobs 2: what every cluster run must give."""
    out = tmp_path_factory.mktemp("local") / "out"
    assert run_batch(class_folder, "ps2", out, jobs=2, timeout=float(TIMEOUT), progress=False).failures == []
    return out


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    started = start_cluster(tmp_path_factory.mktemp("dask"), workers=2)
    yield started
    started.stop()


def graded_files(out: Path) -> dict[str, object]:
    """Every results file (its timing aside) and feedback page, and grades.csv, by name."""
    files: dict[str, object] = {"grades.csv": (out / "grades.csv").read_text()}
    for path in sorted(out.glob("*.json")):
        doc = json.loads(path.read_text())
        doc.pop("execution_time")
        files[path.name] = doc
    for path in sorted((out / "feedback").glob("*.html")):
        files[f"feedback/{path.name}"] = path.read_text()
    return files


def assert_same_grading(out: Path, local: Path) -> None:
    got, expected = graded_files(out), graded_files(local)
    assert sorted(got) == sorted(expected)
    assert [name for name in expected if got[name] != expected[name]] == []
    assert list(out.rglob("*.tmp")) == []


# ---------------------------------------------------------------- the same grades as the local pool

def test_a_cluster_grades_the_class_as_the_local_pool_does(class_folder, local_run, dask_cluster, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(grade_batch_command(class_folder, out, "--scheduler", dask_cluster.address), cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{CLASS_SIZE} submissions in" in done.stdout and f"{CLASS_SIZE} new" in done.stdout
    assert_same_grading(out, local_run)
    assert f"a Dask cluster at {dask_cluster.address}" in (out / "class.html").read_text()


def test_a_worker_killed_mid_run_loses_nothing(class_folder, local_run, dask_cluster, tmp_path):
    """SIGKILL the worker grading the hanging student once a third of the class is graded: its
    task runs again on a worker, and the batch ends as if nothing happened."""
    out = tmp_path / "out"
    with dask_cluster.client() as client:
        batch = subprocess.Popen(grade_batch_command(class_folder, out, "--scheduler", dask_cluster.address),
                                 cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline, victim = time.monotonic() + 120, None
        while victim is None and time.monotonic() < deadline and batch.poll() is None:
            busy = [w for w, keys in client.processing().items() if any(HANGS in str(k) for k in keys)]
            if len(list(out.glob("*.json"))) >= CLASS_SIZE // 3 and busy:
                victim = client.run(os.getpid, workers=busy)[busy[0]]
                graded_before = len(list(out.glob("*.json")))
                os.kill(victim, signal.SIGKILL)  # the worker's own process; its nanny starts another
            else:
                time.sleep(0.005)
        _, err = batch.communicate(timeout=300)
        client.wait_for_workers(2, timeout=STARTUP)  # the nanny's new worker, for the tests after this one
    assert victim is not None and graded_before < CLASS_SIZE, "the batch ended before a worker could be killed"
    assert batch.returncode == 0, err
    assert_same_grading(out, local_run)


def test_a_client_killed_mid_run_resumes_like_a_local_batch(class_folder, local_run, dask_cluster, tmp_path):
    out = tmp_path / "out"
    batch = subprocess.Popen(grade_batch_command(class_folder, out, "--scheduler", dask_cluster.address), cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(out.glob("*.json"))) < CLASS_SIZE // 3 and time.monotonic() < deadline and batch.poll() is None:
        time.sleep(0.005)
    batch.send_signal(signal.SIGKILL)
    batch.wait(timeout=60)
    graded = sorted(p.stem for p in out.glob("*.json"))
    assert len(graded) < CLASS_SIZE and not (out / "grades.csv").exists()
    result = run_batch(class_folder, "ps2", out, timeout=float(TIMEOUT), progress=False,
                       pool=DaskPool(dask_cluster.address))
    assert result.up_to_date == graded and len(result.new) == CLASS_SIZE - len(graded)
    assert_same_grading(out, local_run)


def test_a_submission_that_kills_its_worker_is_recorded_as_crashed(dask_cluster, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "submissions" / "ps2" / "correct_straightforward.py", folder / "ada.py")
    (folder / "kil.py").write_bytes(MARKER + b"\nimport numpy as np\n")
    result = run_batch(folder, "ps2", tmp_path / "out", timeout=float(TIMEOUT), progress=False,
                       pool=DaskPool(dask_cluster.address))
    assert result.failures == []  # the submission's, not the grader's: no NOT GRADED row
    assert [(r.student, r.score) for r in result.rows] == [("ada", PS2_FULL), ("kil", 0)]
    killed = json.loads((tmp_path / "out" / "kil.json").read_text())
    assert {"misconception:crashed" in t["tags"] for t in killed["tests"]} == {True}
    assert "ended the grading worker's process 2 times" in killed["output"]
    assert killed["extra_data"]["isolation"] in ("full", "uid", "none")
    again = run_batch(folder, "ps2", tmp_path / "out", timeout=float(TIMEOUT), progress=False,
                      pool=DaskPool(dask_cluster.address))
    assert again.up_to_date == ["ada", "kil"]  # recorded: a re-run does not kill more workers
    with dask_cluster.client() as client:
        client.wait_for_workers(2, timeout=STARTUP)


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    """One worker process: every task of a batch waits on it, behind whichever runs."""
    started = start_cluster(tmp_path_factory.mktemp("dask-one"), workers=1)
    yield started
    started.stop()


def test_classmates_queued_behind_a_worker_killer_keep_their_grades(one_worker, tmp_path):
    """Dask counts a worker's death against every task assigned to it, those queued behind the
    one running too: with one worker, each classmate waits behind the submission that kills it
    and would end as KilledWorker with it. Only the killer may be recorded as crashed."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "a-kil.py").write_bytes(MARKER + b"\nimport numpy as np\n")  # first in line
    for name in ("ada", "ben", "cy"):
        shutil.copy(ROOT / "tests" / "submissions" / "ps2" / "correct_straightforward.py", folder / f"{name}.py")
    result = run_batch(folder, "ps2", tmp_path / "out", timeout=float(TIMEOUT), progress=False,
                       pool=DaskPool(one_worker.address))
    assert result.failures == []
    assert sorted((r.student, r.score) for r in result.rows) == [
        ("a-kil", 0), ("ada", PS2_FULL), ("ben", PS2_FULL), ("cy", PS2_FULL)]


def test_odd_names_and_files_travel_to_the_workers_and_back_as_the_local_pool_grades_them(dask_cluster, tmp_path):
    """Issue 8's hostile class (names that are not UTF-8, newlines, 240 characters; links,
    a pipe, a device, a folder, 5 MiB, malformed notebooks): read on the client, graded on
    the workers, the same files as the local pool writes."""
    _make_flat(tmp_path / "class")
    local = run_batch(tmp_path / "class", "ps2", tmp_path / "local", jobs=2, timeout=5, progress=False)
    remote = run_batch(tmp_path / "class", "ps2", tmp_path / "remote", timeout=5, progress=False,
                       pool=DaskPool(dask_cluster.address))
    assert local.failures == remote.failures == [] and remote.rows == local.rows
    assert_same_grading(tmp_path / "remote", tmp_path / "local")


# ---------------------------------------------------------------- fail closed

def test_workers_running_another_grader_are_refused_before_anything_is_graded(dask_cluster, monkeypatch, tmp_path):
    monkeypatch.setattr(cluster, "grader_version", lambda: "0123456789abcdef")
    pool = DaskPool(dask_cluster.address)
    with pytest.raises(ClusterError, match="run another grader"):
        pool.connect()


def test_the_local_pool_needs_nothing_of_the_cluster_extra(one_student_class, tmp_path):
    """grade-batch without --scheduler never imports dask or distributed."""
    script = ("import sys; from autograder.batch import run_batch; "
              f"run_batch({str(one_student_class)!r}, 'ps2', {str(tmp_path / 'out')!r}, jobs=1, progress=False); "
              "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]"] and (tmp_path / "out" / "ada.json").is_file()


@pytest.fixture
def one_student_class(tmp_path) -> Path:
    (tmp_path / "class").mkdir()
    shutil.copy(ROOT / "tests" / "submissions" / "ps2" / "correct_straightforward.py", tmp_path / "class" / "ada.py")
    return tmp_path / "class"


@pytest.mark.parametrize("name", ["", ".", "..", "../../etc/x.py", "a\0.py"])
def test_a_task_whose_file_name_is_not_a_plain_name_is_the_graders_failure(name):
    """The file's name labels its results and its suffix says how to read it: a task that
    carries a path, or no name, is the grader's failure, and nothing is graded."""
    task = Task("ada", Snapshot(name, b"x = 1\n", None, "sha256:0"), "ps2", 1.0, 1, None)
    done = grade_task(task, sandbox=None)
    assert done.results is None and "not a file name" in done.failure


@pytest.mark.parametrize("address, insecure", [("tcp://127.0.0.1:8786", False), ("tcp://localhost:8786", False),
                                               ("tcp://[::1]:8786", False), ("tls://10.0.0.5:8786", False),
                                               ("tcp://10.0.0.5:8786", True)])
def test_accepted_addresses(address, insecure):
    assert check_address(address, insecure) == address[:3]


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "tcp://example.invalid:8786", "tcp://0.0.0.0:8786",
                                     "http://127.0.0.1:8786", "127.0.0.1:8786", "tcp://127.0.0.1",
                                     "tcp://127.0.0.1:8786/x", "tcp://127.0.0.1:99999"])
def test_refused_addresses(address):
    with pytest.raises(ClusterError):
        check_address(address)


@pytest.mark.parametrize("args, says", [
    (["--scheduler", "tcp://10.0.0.5:8786"], "plain tcp:// address off this machine"),
    (["--scheduler", "tls://127.0.0.1:8786"], "needs the cluster's CA"),
    (["--scheduler", "tcp://127.0.0.1:8786", "--jobs", "2"], "--jobs is for this machine"),
    (["--insecure"], "go with --scheduler"),
    (["--tls-cert", "x.pem"], "go with --scheduler"),
    (["--scheduler", "tls://127.0.0.1:8786", "--tls-ca-file", "nope.pem", "--tls-cert", "nope.pem"],
     "no such certificate"),
])
def test_cli_refuses_a_bad_cluster_setting_in_one_line(class_folder, tmp_path, capsys, args, says):
    assert main(["grade-batch", str(class_folder), "--assignment", "ps2", "--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- mutual TLS

def openssl(*args, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def certificate_authority(folder: Path, name: str) -> dict[str, Path]:
    """A throwaway CA and one certificate it signed (for the scheduler, workers and client alike:
    Dask checks the chain, not host names), as PEM files."""
    folder.mkdir(parents=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", f"/CN={name} CA",
            cwd=folder)
    openssl("req", *ec, "-keyout", "node.key", "-out", "node.csr", "-subj", f"/CN={name} node", cwd=folder)
    openssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "node.pem", "-days", "1", cwd=folder)
    return {"ca": folder / "ca.pem", "cert": folder / "node.pem", "key": folder / "node.key"}


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("tls")
    started = start_cluster(base / "cluster", workers=1, tls=certificate_authority(base / "ours", "course"))
    yield started, base
    started.stop()


def test_a_cluster_over_mutual_tls_grades_the_class_as_the_local_pool_does(class_folder, local_run, tls_cluster,
                                                                          tmp_path):
    started, base = tls_cluster
    certs = base / "ours"
    pool = DaskPool(started.address, tls=TLSFiles(certs / "ca.pem", certs / "node.pem", certs / "node.key"))
    assert run_batch(class_folder, "ps2", tmp_path / "out", timeout=float(TIMEOUT), progress=False,
                     pool=pool).failures == []
    assert_same_grading(tmp_path / "out", local_run)


def test_a_client_whose_certificate_another_ca_signed_is_refused(tls_cluster, tmp_path):
    import dask

    started, base = tls_cluster
    rogue = certificate_authority(tmp_path / "rogue", "rogue")
    pool = DaskPool(started.address, tls=TLSFiles(base / "ours" / "ca.pem", rogue["cert"], rogue["key"]))
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), \
            pytest.raises(ClusterError, match="cannot reach the scheduler.*SSL"):
        pool.connect()
