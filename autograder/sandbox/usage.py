"""What a submission holds, counted from outside it: the watch where no cgroup holds it.

A memory cgroup charges a submission for every page the kernel keeps for it, wherever the
page is. Where none can be made (the ``uid`` level: root without CAP_SYS_ADMIN, as on
Gradescope; ``full`` where no cgroup v1 hierarchy is writable; ``none``), the grader counts
the same things itself, every protocol.WATCH_EVERY while it waits (``measure``), and stops
the child past its memory limit or past one core on average (``Watch``). A child's own
(``Holder``) is what its uid has where it has one of its own (full, uid); at the none level,
where its uid is the grader's, what its session has (the allow-list refuses setsid and
setpgid) and what lies in its folder:

- its processes (zombies too): their share of the anonymous memory they map, resident or
  swapped (Pss_Anon and SwapPss: a page shared copy-on-write with a fork counts once in
  all; file pages are the page cache's, which the kernel can drop), and their CPU time with
  that of the children they reaped;
- files in memory (tmpfs, /dev/shm, memfds), each once by device and inode, at the blocks
  it holds plus what its inode costs the kernel: those it owns in every folder it can write
  on a memory-backed filesystem (``Places``; with Landlock only its own folder), whether or
  not it still holds them; those its processes hold open, removed or not; those only a
  mapping keeps, which no one without CAP_CHECKPOINT_RESTORE can size, at the most it can
  have written to one (``Limits.file_size``, its RLIMIT_FSIZE); its own tmpfs, where it has
  one (a mount namespace), by what that uses;
- SysV shared memory (resident and swapped) and queued messages it created or owns, whoever
  owns them now (/proc/sysvipc names creator and owner apart): by uid only.

Another uid's /proc/<pid>/fd, maps and smaps_rollup take CAP_SYS_PTRACE to read, which
Docker does not grant: a child makes itself dumpable again once it has its uid (child.py),
and the grader reads them with that uid as its filesystem uid, in this thread only
(``_reading_as``).

What cannot be counted so, the allow-list refuses (syscalls.py): shared mappings (their
pages outlive the part still mapped: a 1 GiB shared anonymous mapping unmapped but for one
page keeps 1 GiB that no size shows), and the calls that make SysV segments, queues and
memfds, counted above all the same.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .folders import DEPTH, Walk

# An inode and its name on tmpfs, in the kernel's slab: 1,042-1,045 bytes an empty file
# (Slab in /proc/meminfo, 200,000 files made in /dev/shm, Linux 6.18)
ENTRY_BYTES = 1024
MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "hugetlbfs", "devtmpfs", "mqueue"})
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Usage:
    private: int  # bytes: its processes' own memory, resident or swapped
    files: int  # bytes: files in memory it owns, holds open or maps, each once, their inodes included
    segments: int  # bytes: SysV shared memory and queued messages it created or owns
    cpu: float  # seconds, its processes' and those they reaped
    too_deep: bool = False  # it nested folders in memory deeper than a walk goes (folders.DEPTH)

    @property
    def memory(self) -> int:
        return self.private + self.files + self.segments

    def parts(self) -> str:
        return (f"its processes {self.private >> 20} MiB, files in memory {self.files >> 20} MiB, "
                f"SysV shared memory {self.segments >> 20} MiB")


@dataclass(frozen=True)
class Places:
    """Where memory can be held as files, as this process sees the machine: the device of
    every memory-backed filesystem (and of the kernel's own, which holds memfds and shared
    mappings), and the folders on them that others may write (found once, at start)."""
    devices: frozenset[int]
    shared: tuple[str, ...]

    @classmethod
    def find(cls) -> "Places":
        mounts = _memory_mounts()
        devices = {dev for dev, _ in mounts}
        try:
            fd = os.memfd_create("autograder-probe", os.MFD_CLOEXEC)
            devices.add(os.fstat(fd).st_dev)
            os.close(fd)
        except (OSError, AttributeError):
            pass  # no memfds here: nothing of a child's can be on that filesystem either
        shared: dict[tuple[int, int], str] = {}  # by identity: a mount point shows in the walk of the one below it
        for _, point in mounts:
            try:
                st = os.stat(point, follow_symlinks=False)
            except OSError:
                continue
            if st.st_mode & stat.S_IWOTH:
                shared.setdefault((st.st_dev, st.st_ino), point)
            if st.st_mode & stat.S_IXOTH:
                for e in Walk(point, _searchable).entries():
                    if stat.S_ISDIR(e.stat.st_mode) and e.stat.st_mode & stat.S_IWOTH:
                        shared.setdefault((e.stat.st_dev, e.stat.st_ino), e.path)
        return cls(frozenset(devices), tuple(shared.values()))

    def holds(self, path: str) -> bool:
        """Whether ``path`` lies on a memory-backed filesystem."""
        try:
            return os.stat(path).st_dev in self.devices
        except OSError:
            return False


def _searchable(st: os.stat_result) -> bool:
    return bool(st.st_mode & stat.S_IXOTH)


def _memory_mounts() -> list[tuple[int, str]]:
    """(device, mount point) of every memory-backed filesystem in this mount namespace."""
    try:
        lines = open("/proc/self/mountinfo").read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        fields = line.split()
        try:
            fstype = fields[fields.index("-") + 1]
            major, minor = fields[2].split(":")
        except (ValueError, IndexError):
            continue
        if fstype in MEMORY_FILESYSTEMS:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            out.append((os.makedev(int(major), int(minor)), point))
    return out


# ---------------------------------------------------------------- processes and SysV IPC

def processes_of(uid: int) -> Iterator[tuple[str, str]]:
    """(pid, its /proc status) of every process, zombies included, whose real uid is
    ``uid``; a process that ends while being read is left out."""
    needle = f"\nUid:\t{uid}\t"  # the first of the four uids is the real one
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                text = f.read()
        except OSError:
            continue
        if needle in text:
            yield entry, text


def _kib(status: str, key: str) -> int | None:
    m = re.search(rf"^{key}:\s+(\d+) kB", status, re.M)
    return int(m.group(1)) << 10 if m else None


def _private(pid: str, status: str, exact: bool) -> int:
    """A process's own memory: the anonymous pages it maps, resident or swapped (RssAnon
    and VmSwap of its status). ``exact``: its proportional share of them instead
    (smaps_rollup's Pss_Anon and SwapPss: a page its fork shares copy-on-write counts half
    in each, once in all), which costs the kernel a walk of its page tables (4 ms for a
    child with numpy here), so it is asked only when the first figure is over the limit;
    where the kernel does not say (before Linux 5.8, or unreadable), the first figure."""
    if not exact:
        return (_kib(status, "RssAnon") or 0) + (_kib(status, "VmSwap") or 0)
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            rollup = f.read()
    except OSError:
        rollup = ""
    pss = _kib(rollup, "Pss_Anon")
    if pss is not None:
        return pss + (_kib(rollup, "SwapPss") or 0)
    return (_kib(status, "RssAnon") or 0) + (_kib(status, "VmSwap") or 0)


@dataclass(frozen=True)
class Segment:
    kind: str  # "shm", "sem" or "msg"
    id: int
    bytes: int  # memory it holds: resident and swapped pages, or queued messages


def segments_of(uid: int) -> list[Segment]:
    """The SysV IPC objects ``uid`` created or owns, in this IPC namespace: by creator too,
    since the owner can hand one to any uid (IPC_SET) and the creator may still remove it."""
    found = []
    for kind, ident, size in (("shm", "shmid", ("rss", "swap")), ("sem", "semid", ()), ("msg", "msqid", ("cbytes",))):
        try:
            lines = open(f"/proc/sysvipc/{kind}").read().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        names = lines[0].split()
        for line in lines[1:]:
            fields = line.split()
            if len(fields) != len(names):
                continue
            row = dict(zip(names, fields, strict=True))
            try:
                if str(uid) in (row["uid"], row["cuid"]):
                    found.append(Segment(kind, int(row[ident]), sum(int(row[k]) for k in size)))
            except (KeyError, ValueError):
                continue
    return found


# ---------------------------------------------------------------- reading another uid's /proc

@contextmanager
def _reading_as(uid: int | None):
    """Read /proc/<pid>/fd, maps and root of ``uid``'s (dumpable) processes: as root without
    CAP_SYS_PTRACE, only with ``uid`` as this thread's filesystem uid and gid. Changing them
    makes the kernel clear this process's dumpable flag, which is set back after."""
    if uid is None or os.geteuid() != 0 or uid == 0:
        yield
        return
    dumpable = _libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    old_gid = _libc.setfsgid(uid)
    old_uid = _libc.setfsuid(uid)
    try:
        yield
    finally:
        _libc.setfsuid(old_uid)
        _libc.setfsgid(old_gid)
        if dumpable > 0:
            _libc.prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0)


@functools.lru_cache(maxsize=8)
def _maps_on(devices: frozenset[int]) -> re.Pattern:
    """The lines of /proc/<pid>/maps of files on ``devices``: only those are parsed."""
    names = "|".join(sorted({f"{os.major(d):02x}:{os.minor(d):02x}" for d in devices})) or "(?!)"
    return re.compile(rf"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ ({names}) (\d+) *(.*)$", re.M)


def _held(pid: str, devices: frozenset[int], bound: int, files: dict[tuple[int, int], int]) -> None:
    """Add to ``files`` what one process holds in memory-backed files: open, or mapped only."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        fds = []
    for fd in fds:
        try:
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_dev in devices:
            files[(st.st_dev, st.st_ino)] = st.st_blocks * 512 + ENTRY_BYTES
    try:
        with open(f"/proc/{pid}/maps") as f:
            maps = f.read()
    except OSError:
        return
    for m in _maps_on(devices).finditer(maps):
        major, minor = m.group(3).split(":")
        key = (os.makedev(int(major, 16), int(minor, 16)), int(m.group(4)))
        path = m.group(5)
        if key in files or path.startswith("/SYSV"):  # SysV: segments_of's
            continue
        if path.endswith(" (deleted)"):  # nothing but this mapping keeps it: its size cannot be read
            files[key] = max(bound, int(m.group(2), 16) - int(m.group(1), 16)) + ENTRY_BYTES


def _own_tmpfs(pid: str, folder: str) -> int:
    """What the child's own tmpfs uses (a mount of its own, in its mount namespace)."""
    try:
        s = os.statvfs(f"/proc/{pid}/root{folder}")
    except OSError:
        return 0
    return (s.f_blocks - s.f_bfree) * s.f_frsize + (s.f_files - s.f_ffree) * ENTRY_BYTES


@dataclass(frozen=True)
class Holder:
    """Whose usage to count, and where: a child's first process (its pid as the grader sees
    it), its folder, and whether that is a tmpfs of its own (a mount namespace); and its own
    uid where it has one (full, uid), whose processes, files and SysV IPC are its. Without
    one (none), its processes are those of its session (the allow-list refuses setsid and
    setpgid) and its files those in its folder; its SysV IPC the allow-list refuses.

    ``dumpable``: its processes cannot make themselves undumpable (the allow-list refuses
    prctl), so their /proc folders belong to their uid, and one stat of each folder tells
    which to read (a read of /proc/<pid>/status costs some 60 us, a stat a sixth of that)."""
    pid: int
    folder: str
    own_mount: bool
    uid: int | None = None
    dumpable: bool = False

    def processes(self) -> Iterator[tuple[str, str]]:
        """(pid, its /proc status) of each of its processes, zombies included."""
        owner = self.uid if self.uid is not None else os.getuid()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if self.dumpable and os.stat(f"/proc/{entry}").st_uid != owner:
                    continue
                if self.uid is None:
                    with open(f"/proc/{entry}/stat", "rb") as f:
                        if int(f.read().rpartition(b")")[2].split()[3]) != self.pid:  # its session
                            continue
                with open(f"/proc/{entry}/status") as f:
                    status = f.read()
            except (OSError, ValueError, IndexError):
                continue
            if self.uid is None or f"\nUid:\t{self.uid}\t" in status:  # the real uid, the first of four
                yield entry, status

    def owns(self, st: os.stat_result) -> bool:
        return self.uid is None or st.st_uid == self.uid


def measure(who: Holder, places: Places, roots: tuple[str, ...], bound: int, exact: bool = False) -> Usage:
    """What ``who`` holds now. ``roots``: the folders on memory-backed filesystems it can
    write (``walked``); ``bound``: the most it can write to one file; ``exact``: its
    processes' shares of the pages they share (``_private``), not all of them each."""
    tick = os.sysconf("SC_CLK_TCK")
    private, cpu = 0, 0.0
    files: dict[tuple[int, int], int] = {}
    pids = {}
    for pid, status in who.processes():
        pids[pid] = status
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
            cpu += sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
        except (OSError, ValueError):
            continue
    too_deep = False
    for root in roots:
        # Deeper than a walk goes, only a folder the child made or may write counts against it:
        # there it could hide what it holds. Another's folders it can only pass through (an
        # earlier child's, not yet reclaimed; another sandbox's) must not get it stopped.
        walk = Walk(root, lambda st: who.owns(st) or bool(st.st_mode & stat.S_IXOTH),
                    deep=lambda st: who.owns(st) or bool(st.st_mode & stat.S_IWOTH))
        for e in walk.entries():
            if who.owns(e.stat):
                files[(e.stat.st_dev, e.stat.st_ino)] = e.stat.st_blocks * 512 + ENTRY_BYTES
        too_deep |= walk.too_deep
    own = 0
    with _reading_as(who.uid):
        for pid, status in pids.items():
            private += _private(pid, status, exact)
            _held(pid, places.devices, bound, files)
        if who.own_mount:
            own = _own_tmpfs(str(who.pid), who.folder)
    segments = sum(s.bytes for s in segments_of(who.uid)) if who.uid is not None else 0
    return Usage(private, sum(files.values()) + own, segments, cpu, too_deep)


def walked(who: Holder, places: Places, landlock: bool) -> tuple[str, ...]:
    """The folders on memory-backed filesystems ``who`` can write: its own folder where that
    is one (not a mount of its own: that is measured whole), and, where it has a uid of its
    own and Landlock does not stop it, every folder others may write. (Without a uid of its
    own and without Landlock or namespaces, what it writes there is the grader's user's:
    docs/isolation.md, the grader refuses that unless told to go on.)"""
    own = (who.folder,) if not who.own_mount and places.holds(who.folder) else ()
    return own + (places.shared if who.uid is not None and not landlock else ())


class Watch:
    """protocol.Reader's watch for one child: why it must be stopped, or ""."""

    def __init__(self, who: Holder, memory: int, places: Places, landlock: bool, bound: int):
        self.who, self.memory, self.places, self.bound = who, int(memory), places, bound
        self.roots = walked(who, places, landlock)
        self.started = time.monotonic()

    def __call__(self) -> str:
        u = measure(self.who, self.places, self.roots, self.bound)
        if u.memory > self.memory:  # forks count the pages they share each: count them once
            u = measure(self.who, self.places, self.roots, self.bound, exact=True)
        if u.too_deep:
            return f"nested folders in memory more than {DEPTH} deep"
        if u.memory > self.memory:
            return f"used more than {self.memory >> 20} MiB of memory ({u.parts()})"
        if u.cpu > time.monotonic() - self.started + 1.0:
            return "used more than one CPU core across its processes"
        return ""
