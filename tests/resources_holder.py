"""Hold memory of every kind as a uid of its own, and report what the grader's watch counts.

tests/test_resources.py runs this as root, with and without CAP_SYS_PTRACE (Docker grants
none). A holder process, forked and given a uid of its own as a sandbox child is (and made
dumpable again, as child.py does), makes each KIND of memory below, with no seccomp
filter (the sandbox refuses some of these calls: here the watch itself is tried), then
waits. This process measures it as the watch does (usage.measure), ends it, reclaims what
it left as the zygote does (zygote.reclaim), and prints one JSON document: what each part
of the usage was, what was made, and what was left after.

Usage: resources_holder.py ; prints JSON on stdout.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.sandbox import confine, usage, zygote
from autograder.sandbox.limits import Limits

MIB = 1 << 20
EACH = 8 * MIB  # bytes of each kind
ANONYMOUS = 64 * MIB
UID = 1_100_000_000 + os.getpid() % 1_000_000  # below the zygotes' blocks (zygote.UID_BASE), above useradd's
# kind -> which part of the usage it lands in, and how many bytes it should add there
KINDS = {
    "named file in /dev/shm": ("files", EACH),
    "file in a nested folder it made": ("files", EACH),
    "the same file under a second name": ("files", 0),
    "removed file held open": ("files", EACH),
    "memfd": ("files", EACH),
    "removed file held by a mapping only": ("files", Limits().file_size),  # charged at the most a file can hold
    "SysV segment given to root": ("segments", EACH),
    "SysV queue given to root": ("segments", 4096),
    "anonymous memory": ("private", ANONYMOUS),
}
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]


def _filled(fd: int, n: int) -> int:
    os.write(fd, b"\1" * n)
    return fd


def _give_to_root(call, ident: int) -> None:
    ds = ctypes.create_string_buffer(256)  # shmid_ds / msqid_ds: ipc_perm first, its uid at offset 4
    IPC_SET, IPC_STAT = 1, 2
    if call(ident, IPC_STAT, ds) != 0:
        raise OSError(ctypes.get_errno(), "IPC_STAT")
    ctypes.c_uint.from_buffer(ds, 4).value = 0
    if call(ident, IPC_SET, ds) != 0:
        raise OSError(ctypes.get_errno(), "IPC_SET")


def hold(folder: str, ready: int) -> None:
    """In the forked holder: become UID, make every kind, say so, wait to be killed."""
    os.setgroups([])
    os.setresgid(UID, UID, UID)
    os.setresuid(UID, UID, UID)
    confine.prctl(confine.PR_SET_DUMPABLE, 1)
    keep = []
    os.mkdir(folder, 0o700)
    os.close(_filled(os.open(f"{folder}/named", os.O_CREAT | os.O_WRONLY, 0o600), EACH))
    os.link(f"{folder}/named", f"{folder}/second-name")
    os.makedirs(f"{folder}/a/b/c")
    os.close(_filled(os.open(f"{folder}/a/b/c/nested", os.O_CREAT | os.O_WRONLY, 0o600), EACH))
    fd = _filled(os.open(f"{folder}/open", os.O_CREAT | os.O_RDWR, 0o600), EACH)
    os.unlink(f"{folder}/open")
    keep.append(fd)
    keep.append(_filled(os.memfd_create("holder"), EACH))
    fd = _filled(os.open(f"{folder}/mapped", os.O_CREAT | os.O_RDWR, 0o600), EACH)
    if _libc.mmap(None, 4096, 1, 2, fd, 0) in (None, ctypes.c_void_p(-1).value):  # PROT_READ, MAP_PRIVATE
        raise OSError(ctypes.get_errno(), "mmap")
    os.close(fd)
    os.unlink(f"{folder}/mapped")
    shm = _libc.shmget(0, ctypes.c_size_t(EACH), 0o1000 | 0o666)
    addr = _libc.shmat(shm, None, 0)
    ctypes.memset(addr, 1, EACH)
    _libc.shmdt(ctypes.c_void_p(addr))
    _give_to_root(_libc.shmctl, shm)
    queue = _libc.msgget(0, 0o1000 | 0o666)
    message = ctypes.create_string_buffer(8 + 4096)
    ctypes.c_long.from_buffer(message).value = 1  # mtype
    if _libc.msgsnd(queue, message, ctypes.c_size_t(4096), 0) != 0:
        raise OSError(ctypes.get_errno(), "msgsnd")
    _give_to_root(_libc.msgctl, queue)
    block = bytearray(ANONYMOUS)
    for i in range(0, len(block), 4096):
        block[i] = 1
    keep.append(block)
    os.write(ready, b"!")
    while True:
        time.sleep(60)


def left(places: usage.Places) -> dict:
    """What of UID is still on the machine: processes, SysV objects, files in memory."""
    files = []
    for root in {*places.shared, "/dev/shm"}:
        files += [e.path for e in usage.Walk(root, lambda st: True).entries() if e.stat.st_uid == UID]
    return {"processes": [pid for pid, _ in usage.processes_of(UID)],
            "segments": [s.kind for s in usage.segments_of(UID)], "files": sorted(files)}


def main() -> None:
    places = usage.Places.find()
    status = Path("/proc/self/status").read_text()
    python = usage._kib(status, "RssAnon") or 0  # the holder starts as a copy of this
    folder = f"/dev/shm/autograder-holder-{UID}"
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            hold(folder, w)
        finally:
            os._exit(1)
    os.close(w)
    if os.read(r, 1) != b"!":
        os.waitpid(pid, 0)
        raise SystemExit("the holder failed to make what it should")
    who = usage.Holder(pid, folder, False, UID)
    u = usage.measure(who, places, usage.walked(who, places, landlock=False), Limits().file_size)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    before = left(places)
    zygote.reclaim(UID, places)
    json.dump({"usage": {"private": u.private, "files": u.files, "segments": u.segments, "cpu": u.cpu},
               "python": python,
               "kinds": KINDS, "entry": usage.ENTRY_BYTES, "before": before, "after": left(places),
               "ptrace": _has_cap(19)}, sys.stdout)


def _has_cap(number: int) -> bool:
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> number & 1)
    return False


if __name__ == "__main__":
    main()
