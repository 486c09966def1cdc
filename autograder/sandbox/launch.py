"""Starting a zygote: its command line, its environment and its configuration.

``Sandbox.launch`` starts one through ``zygote``; so does ``prestart.start``, before the grader
imports anything else (``handle.py`` and what it imports among it), and the ``Sandbox`` made
later adopts the running zygote. So this module imports only what starting a process takes:
each import here is a millisecond more a cold `autograder grade` waits for its sandbox.
"""
from __future__ import annotations

import json
import os
import signal
import site
import socket
import subprocess
import sys
from pathlib import Path

from ..errors import GraderError

ALLOW_UNISOLATED = "AUTOGRADER_ALLOW_UNISOLATED"  # the operator's "grade without isolation", for every face


def allowed_unisolated() -> bool:
    """Whether the operator said to grade where the kernel allows no isolation (the environment,
    which every face and worker process inherits)."""
    return os.environ.get(ALLOW_UNISOLATED, "") not in ("", "0")


def normalized(hide) -> list[str]:
    """The folders to hide as the zygote is told them: resolved, each once, sorted."""
    return sorted({str(Path(p).resolve()) for p in (hide or [])})


class Launched:
    """A client's socket on a zygote ``zygote`` or ``shared`` started (its hello not read), with
    what the zygote was started with: the Sandbox that adopts it (``Sandbox(launched=...)``)
    takes its settings from here, so that handle and zygote cannot be told different things.
    ``peers``: every client's socket on the same zygote held by this process, this one's
    included; the zygote ends once all are closed (``end``)."""

    def __init__(self, proc: subprocess.Popen, sock: socket.socket, hide: list[str], limits: dict | None,
                 allow_unisolated: bool, ahead: bool, peers: list[socket.socket]):
        self.proc, self.sock, self.peers = proc, sock, peers
        self.hide, self.limits, self.allow_unisolated, self.ahead = hide, limits, allow_unisolated, ahead

    def end(self) -> None:
        """This client's ``end``, where no Sandbox adopted it."""
        end(self.proc, self.sock, self.peers)


def zygote(hide, limits: dict | None = None, allow_unisolated: bool | None = None, ahead: bool = True) -> Launched:
    """Start a zygote (``python -m autograder.sandbox.zygote``) with one client, the grader's
    end of its socket; its hello is not read. ``hide``: folders, as ``normalized`` makes them;
    ``limits``: ``Limits.to_dict()`` (None: the defaults); ``allow_unisolated``: None, as the
    environment says (``allowed_unisolated``)."""
    return shared(1, hide, limits, allow_unisolated, ahead)[0]


def shared(clients: int, hide, limits: dict | None = None, allow_unisolated: bool | None = None,
           ahead: bool = True) -> list[Launched]:
    """Start one zygote for ``clients`` clients (a batch's workers), each with a socket of its
    own: as ``zygote``, once for all of them."""
    hide = normalized(hide)
    allow_unisolated = allowed_unisolated() if allow_unisolated is None else allow_unisolated
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "AUTOGRADER_DEBUG")}
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1")
    # -S: no site module, so no .pth file runs in this root process (an editable install's
    # finder alone cost a tenth of its start); its path is set here instead: this checkout
    # of the engine, the caller's PYTHONPATH, then the interpreter's site-packages.
    src = str(Path(__file__).resolve().parents[2])
    path = [src, *env.get("PYTHONPATH", "").split(os.pathsep), *site.getsitepackages()]
    env["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(path) if p)
    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(clients)]
    theirs = [t for _, t in pairs]
    config = json.dumps({"limits": limits or {}, "exclude": hide, "allow_unisolated": allow_unisolated,
                         "course": course_preload(), "ahead": ahead})
    try:
        # `-m` puts the current folder first on sys.path: where the grader was started
        # (a student's repository) must not supply `autograder` to this root process.
        # -P (3.11+) leaves it out; before 3.11, the root folder is the current one.
        proc = subprocess.Popen(
            [sys.executable, "-S", *(["-P"] if sys.version_info >= (3, 11) else []),
             "-m", "autograder.sandbox.zygote", ",".join(str(t.fileno()) for t in theirs), config], cwd="/",
            pass_fds=[t.fileno() for t in theirs], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("AUTOGRADER_DEBUG") else subprocess.DEVNULL,
            env=env, start_new_session=True)  # Ctrl-C in a terminal goes to the grader, not here
    except OSError as e:
        for mine, _ in pairs:
            mine.close()
        raise GraderError(f"the sandbox could not start: {e}") from e
    finally:
        for t in theirs:
            t.close()
    peers = [mine for mine, _ in pairs]
    return [Launched(proc, mine, hide, limits, allow_unisolated, ahead, peers) for mine in peers]


def end(proc: subprocess.Popen | None, sock: socket.socket | None, peers: list[socket.socket] = ()) -> None:
    """Close the grader's end of a zygote's socket (it then ends the children it handed out on
    it) and, once none of ``peers`` (its other clients' sockets in this process) is open either,
    wait for the zygote to exit (after its last client, it cleans up and exits); kill it if it
    has not within 10 s. Waiting while a peer is open would wait for a zygote that still
    serves it: the peer's own ``end`` waits."""
    if sock is not None:
        sock.close()
    if any(p.fileno() != -1 for p in peers):
        return
    if proc is not None:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def course_preload() -> dict:
    """What the zygote imports of the course (its folder, to import its package by path, and the
    modules a submission may import), read here: the zygote starts with no course of its own."""
    from .. import course  # the sandbox knows courses only as a folder and module names

    chosen = course.current()
    return {"root": str(chosen.root) if chosen.root else None, "modules": list(chosen.preload)}
