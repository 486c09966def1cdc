"""grade-batch on a Dask cluster: ``DaskPool``, the client side, and ``SandboxPlugin``, the
worker side.

The machine running ``grade-batch`` (the client) reads each submission once and sends its
bytes in a task (``tasks.Task``, ``PER_TASK`` of them to a Dask task); a worker grades them in
its own sandbox and sends back plain data (``tasks.Graded``: the results file's text, the
feedback page, the summary row); the client writes the files atomically as they arrive.
Workers need no shared file system and never see the class or results folders. Who is
graded, resuming, changes.csv, the gradebook and the reports stay in batch.run_batch,
whichever pool grades.

A worker process holds one sandbox zygote, started on its first task by ``SandboxPlugin`` and
kept warm across tasks and batches; tasks on one worker process take turns on it (start
workers with ``--nthreads 1``, as many processes as cores). Student code runs in the
sandbox's children, never in the worker's own process.

Faults. A worker that dies mid-task (SIGKILL, a lost machine) has its tasks run again
elsewhere by the scheduler. A task whose workers died while running it more than
``distributed.scheduler.allowed-failures`` times (3 by default) ends as ``KilledWorker``: a
task of several submissions is then split, each sent again on its own. The scheduler counts
a death against every task assigned to the worker, those queued behind the running one too,
so a single submission's ``KilledWorker`` is only a suspicion: it is tried once more with
nothing else of the batch in flight, and a ``KilledWorker`` then is recorded as crashed (score
0, every check tagged ``crashed``) and the batch goes on; a re-run leaves it as it is,
``--force`` tries it again. Every other failure on a worker is the grader's: no grade,
reported, graded by the next run. With no worker left, the
batch waits for one to join (Ctrl-C stops it; a re-run resumes).

Security. Dask's messages are pickles and the workers run as root to sandbox: whoever can
reach the scheduler owns every worker (and can answer this client). So a ``tcp://`` address
is accepted only on loopback unless ``insecure``; elsewhere use ``tls://`` with mutual TLS
(``distributed.security.Security``: a CA, and a certificate and key for this client, from
the command line or Dask's configuration).
"""
from __future__ import annotations

import ipaddress
import itertools
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import dask
from distributed import Client, KilledWorker, as_completed, get_worker
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.security import Security

from .errors import GraderError, failure_text
from .regrade import grader_version
from .tasks import Graded, Job, Outcome, RunSettings, Task, grade_task, graded, store, task_for
from .names import file_stem, one_line

PLUGIN = "autograder-sandbox"
WORKERS_SECONDS = 60.0  # how long to wait for a first worker to join a cluster that has none
IN_FLIGHT_PER_THREAD = 2  # tasks submitted ahead per worker thread: enough to keep every worker busy
# Submissions per task. Each task costs the client and the scheduler some milliseconds of
# their own, as much as a fifth of grading one submission; four to a task divide that by four.
# A task whose workers keep dying is split, so the submission that kills them is found alone.
PER_TASK = 4


class ClusterError(Exception):
    """The cluster cannot be used (no such scheduler, refused, no workers, another grader
    version, a plain address off this machine): nothing is graded; one line says why."""


@dataclass(frozen=True)
class TLSFiles:
    """Mutual TLS for the client: the cluster's CA, and this client's certificate and key (PEM)."""
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None


# ---------------------------------------------------------------- the address and its security

def check_address(address: str, insecure: bool = False) -> str:
    """``tcp://HOST:PORT`` or ``tls://HOST:PORT``; a plain ``tcp://`` one only on loopback,
    unless ``insecure``. Returns the scheme; raises ClusterError with one line."""
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ClusterError(f"--scheduler must be tcp://HOST:PORT or tls://HOST:PORT, not {one_line(address, 200)!r}")
    if parts.scheme == "tcp" and not insecure and not on_loopback(parts.hostname):
        raise ClusterError(f"{one_line(address, 200)} is a plain tcp:// address off this machine: Dask's messages "
                           "are pickles and the workers run as root, so anyone who can reach the scheduler owns "
                           "every worker; use tls:// with certificates, or --insecure on a network only you can reach")
    return parts.scheme


def on_loopback(host: str) -> bool:
    """Every address ``host`` names is a loopback address (a name that does not resolve is not)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def security_for(scheme: str, tls: TLSFiles):
    """The client's ``Security``: None for tcp://; for tls://, mutual TLS from the files named,
    else from Dask's configuration (distributed.comm.tls.ca-file, .client.cert, .client.key).
    Raises ClusterError when tls:// has no CA or no client certificate to show."""
    named = [p for p in (tls.ca, tls.cert, tls.key) if p is not None]
    if scheme == "tcp":
        if named:
            raise ClusterError("--tls-ca-file, --tls-cert and --tls-key are for a tls:// scheduler")
        return None
    for path in named:
        if not Path(path).is_file():
            raise ClusterError(f"no such certificate or key file: {one_line(str(path), 200)}")
    given = {k: str(v) for k, v in (("tls_ca_file", tls.ca), ("tls_client_cert", tls.cert),
                                    ("tls_client_key", tls.key)) if v is not None}
    security = Security(require_encryption=True, **given)
    if not security.tls_ca_file or not security.tls_client_cert:
        raise ClusterError("a tls:// scheduler needs the cluster's CA and this client's certificate: "
                           "--tls-ca-file, --tls-cert and --tls-key (or Dask's distributed.comm.tls config)")
    return security


# ---------------------------------------------------------------- the worker side

class SandboxPlugin(WorkerPlugin):
    """On each worker process: one sandbox, started by the first task and kept warm, which
    never sees the worker's local directory (Dask's own files: the data it spills, other
    students' results among them)."""

    name = PLUGIN
    idempotent = True  # registered by every batch; a worker keeps the one it has (and its warm zygote)

    def setup(self, worker) -> None:
        from .grade import hidden_paths

        self.lock = threading.Lock()
        self.sandbox = None
        self.hide = hidden_paths(worker.local_directory)

    def teardown(self, worker) -> None:
        if getattr(self, "sandbox", None) is not None:
            self.sandbox.close()
            self.sandbox = None

    def grade(self, task: Task) -> Graded:
        with self.lock:  # one sandbox, one job at a time (a Sandbox is not thread-safe)
            try:
                if self.sandbox is None:
                    from .sandbox import Sandbox

                    self.sandbox = Sandbox(hide=self.hide)
                    self.sandbox.__enter__()
            except Exception as e:  # noqa: BLE001 - the grader's failure: reported, not a grade
                self.sandbox = None
                return Graded(task.student, grader_version(), failure=failure_text(e))
            return grade_task(task, self.sandbox)

    def isolation(self) -> dict:
        """The sandbox's level and layers, as a results file records them (starts it if need be)."""
        with self.lock:
            if self.sandbox is None:
                from .sandbox import Sandbox

                self.sandbox = Sandbox(hide=self.hide)
                self.sandbox.__enter__()
            return {"isolation": self.sandbox.level, "isolation_layers": list(self.sandbox.layers)}


def _plugin() -> SandboxPlugin:
    plugin = get_worker().plugins.get(PLUGIN)
    if plugin is None:
        raise GraderError(f"this worker has no {PLUGIN} plugin")
    return plugin


def grade_on_worker(tasks: list[Task]) -> list[Graded]:
    """The task a worker runs: a few students, one after another, in its warm sandbox."""
    plugin = _plugin()
    return [plugin.grade(task) for task in tasks]


def isolation_on_worker() -> dict:
    return _plugin().isolation()


def worker_grader_version() -> str:
    return grader_version()


# ---------------------------------------------------------------- the client side

class DaskPool:
    """The students graded on a Dask cluster's workers (see the module's docstring)."""

    def __init__(self, address: str, *, tls: TLSFiles = TLSFiles(), insecure: bool = False):
        self.address = address
        self.security = security_for(check_address(address, insecure), tls)  # fail before anything is read
        self.client = None
        self.ac = None
        self.pending: Iterator[Job] = iter(())
        self.alone: list[tuple[Job, Task]] = []  # from a split task: each goes out on its own, first
        # Alone and killed, maybe as a bystander (see outcomes): tried once more, one at a time
        self.suspects: list[tuple[Job, Task]] = []
        self.trying: str | None = None  # the key of the suspect in flight: its KilledWorker is its own
        self.window = 8
        self.running: dict[str, tuple] = {}  # task key -> (jobs, tasks, future)
        self.settings: RunSettings | None = None
        self.isolation: dict | None = None  # as the last graded submission's sandbox reported it
        self.threads = 0
        self.grader = grader_version()

    def connect(self) -> None:
        """Reach the scheduler, wait for a worker, check every worker runs this grader, and
        register the sandbox plugin. Raises ClusterError with one line."""
        if self.client is not None:
            return
        # Dask keeps the last 1,000 messages of each connection for debugging; ours carry the
        # submissions' bytes (up to 5 MiB each), so the client would hold up to 1,000 of them.
        dask.config.set({"distributed.admin.low-level-log-length": 0})
        try:
            self.client = Client(self.address, security=self.security, set_as_default=False)
        except Exception as e:  # noqa: BLE001 - refused, unreachable, a TLS handshake that fails: one line
            raise ClusterError(f"cannot reach the scheduler at {one_line(self.address, 200)}: "
                               f"{type(e).__name__}: {one_line(str(e), 300)}") from None
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_SECONDS)
        except Exception:  # noqa: BLE001 - dask raises TimeoutError
            self.close()
            raise ClusterError(f"the scheduler at {one_line(self.address, 200)} has no worker "
                               f"(waited {WORKERS_SECONDS:g} s)") from None
        try:
            # A worker that leaves meanwhile is skipped: each answer says its grader too.
            versions = self.client.run(worker_grader_version, on_error="ignore")
            others = sorted({v for v in versions.values() if v != self.grader})
            if not others:
                self.client.register_plugin(SandboxPlugin(), name=PLUGIN)
                self.threads = sum(self.client.nthreads().values())
        except Exception as e:  # noqa: BLE001 - the cluster broke while we set up: one line
            self.close()
            raise ClusterError(f"the cluster at {one_line(self.address, 200)} failed while the batch set up: "
                               f"{type(e).__name__}: {one_line(str(e), 300)}") from None
        if others:
            self.close()
            raise ClusterError(f"{sum(v != self.grader for v in versions.values())} worker(s) run another grader "
                               f"({', '.join(others)}) than this one ({self.grader}): install the same grader, "
                               "solutions and numpy on every worker")

    def start(self, todo: list[Job], settings: RunSettings) -> None:
        if not todo:
            return
        self.connect()
        self.settings = settings
        self.pending = iter(todo)
        # At most a window of submissions is in flight, so the client's memory does not grow
        # with the class.
        self.ac = as_completed(loop=self.client.loop)
        self.window = max(8, IN_FLIGHT_PER_THREAD * self.threads)
        self._fill()

    def _submit_next(self) -> bool:
        suspect = False
        if self.suspects:
            # A suspect is tried only with nothing else in flight (see outcomes): the rest of
            # the class waits for it.
            if self.running:
                return False
            pairs = [self.suspects.pop(0)]
            suspect = True
        elif self.alone:
            pairs = [self.alone.pop(0)]
        else:
            jobs = list(itertools.islice(self.pending, PER_TASK))
            pairs = [(job, task_for(job, self.settings)) for job in jobs]  # read here: only bytes travel
        if not pairs:
            return False
        jobs, tasks = [j for j, _ in pairs], [t for _, t in pairs]
        # Keys are the scheduler's, shared by every client: unique, or another batch's answer comes back.
        # Named after its students, for Dask's dashboard (and a test that finds one by name).
        key = f"grade-{'+'.join(file_stem(j.entry.student)[:30] for j in jobs)}-{uuid.uuid4().hex}"
        future = self.client.submit(grade_on_worker, tasks, key=key, pure=False)
        self.running[future.key] = (jobs, tasks, future)
        if suspect:
            self.trying = future.key
        self.ac.add(future)
        return True

    def _fill(self) -> None:
        """Submit until the window is full, or a suspect waits for the rest to end."""
        while len(self.running) < self.window and self._submit_next():
            pass

    def outcomes(self) -> Iterator[tuple[Job, Outcome]]:
        if self.ac is None:
            return
        for batch in self.ac.batches():
            answers = self._answers(batch)
            for future in batch:
                jobs, tasks, _ = self.running.pop(future.key)
                answer = answers.get(future.key)
                tried = future.key == self.trying
                if tried:
                    self.trying = None
                if isinstance(answer, KilledWorker) and len(tasks) > 1:
                    self.alone.extend(zip(jobs, tasks, strict=True))  # which of them kills its worker?
                    self._fill()
                    continue
                if isinstance(answer, KilledWorker) and not tried:
                    # The scheduler counts a death against every task assigned to the worker,
                    # those queued behind the one running too: a submission that shared its
                    # worker with one that kills it ends the same way. Tried again with nothing
                    # else in flight, only the one that kills its worker ends so again.
                    self.suspects.extend(zip(jobs, tasks, strict=True))
                    self._fill()
                    continue
                if isinstance(answer, list) and len(answer) != len(tasks):
                    answer = None  # not one answer per student: none of them can be trusted
                for i, (job, task) in enumerate(zip(jobs, tasks, strict=True)):
                    outcome = self._store(task, answer[i] if isinstance(answer, list) else answer)
                    yield job, outcome
                self._fill()

    def _answers(self, batch: list) -> dict:
        """Each finished future's Graded, or what went wrong with it, by key. Never raises: an
        answer that cannot be read (an exception that does not unpickle, say) is the grader's
        failure on that student, not a batch that hangs or stops."""
        answers: dict = {}
        finished = [f for f in batch if f.status == "finished"]
        try:
            answers.update(zip([f.key for f in finished], self.client.gather(finished), strict=True))
        except Exception:  # noqa: BLE001 - each one alone, below
            pass
        for future in batch:
            if future.key in answers:
                continue
            try:
                if future.status == "error":
                    answers[future.key] = future.exception(timeout=60)
                else:
                    # Finished, or finished and lost since with the worker that held its result
                    # (a classmate's submission killed it): then it is computed again, and
                    # exception() would say None once it is.
                    answers[future.key] = future.result(timeout=60)
            except Exception as e:  # noqa: BLE001 - whatever it is, that student's grader failed
                answers[future.key] = e
        return answers

    def _store(self, task: Task, answer) -> Outcome:
        if isinstance(answer, KilledWorker):
            done = self._crashed(task)
        elif isinstance(answer, BaseException):
            done = Graded(task.student, self.grader, failure=f"a cluster worker failed ({failure_text(answer)})")
        elif not isinstance(answer, Graded) or answer.student != task.student:
            done = Graded(task.student, self.grader, failure="a cluster worker sent back something else")
        elif answer.grader != self.grader:
            done = Graded(task.student, answer.grader,
                          failure=f"a worker graded with another grader ({answer.grader}, not {self.grader})")
        else:
            done = answer
            if done.isolation is not None:
                self.isolation = done.isolation
        try:
            return store(Path(self.settings.out), done)
        except Exception as e:  # noqa: BLE001 - a write failed: the grader's failure
            return Outcome(task.student, failure=failure_text(e))

    def _crashed(self, task: Task) -> Graded:
        """A submission whose workers died under it again and again: recorded as crashed."""
        from .assignments import exercise, exercises
        from .checks import Verdict
        from .grade import to_test_result
        from .results import Finding, Kind, Results

        try:
            isolation = self.isolation or self.client.submit(isolation_on_worker, pure=False).result(
                timeout=WORKERS_SECONDS)
        except Exception as e:  # noqa: BLE001 - no worker could say how it confines: not a grade
            return Graded(task.student, self.grader, failure=f"no worker could grade it ({failure_text(e)})")
        reason = (f"Grading this submission ended the grading worker's process {allowed_failures(self.client) + 1} "
                  "times, also with nothing else being graded, so it was not graded further; it is recorded as "
                  "crashed. Ask your instructor to look at it.")
        tests = [to_test_result(name, spec, Verdict(False, reason, "crashed", finding=Finding(Kind.CRASHED)))
                 for name in exercises(task.assignment) for spec in exercise(name).specs]
        results = Results(score=0, max_score=sum(t.max_score for t in tests), execution_time=0.0, problems=[reason],
                          tests=tests, extra_data=dict(isolation))
        return graded(task, results)

    def close(self, cancel: bool = False) -> None:
        if self.client is not None:
            if cancel and self.running:
                try:
                    self.client.cancel([f for _, _, f in self.running.values()], force=True)
                except Exception:  # noqa: BLE001 - closing anyway
                    pass
            self.running.clear()
            self.ac = None
            self.client.close()
            self.client = None

    def describe(self) -> dict[str, str]:
        threads = f" ({self.threads} worker threads)" if self.threads else ""
        return {"graded on": f"a Dask cluster at {self.address}{threads}"}


def allowed_failures(client) -> int:
    """The scheduler's ``distributed.scheduler.allowed-failures``: how often a task's worker may
    die under it before the task is given up."""
    try:
        return int(client.run_on_scheduler(_allowed_failures))
    except Exception:  # noqa: BLE001 - the default
        return 3


def _allowed_failures() -> int:
    import dask

    return int(dask.config.get("distributed.scheduler.allowed-failures"))
