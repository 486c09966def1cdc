"""The path census: what a sandboxed child can reach equals what the declared View says.

At each isolation level and kernel variant (``VARIANTS``), a probe child (census_paths_probe.py)
tries every path of the machine (the tree as root sees it, walked here) and every path it
can list, and reports what it can stat, list, create in, read and write. ``expected``
derives the same report from the View the zygote declared, the variant, and the files'
owners and modes; the two must be equal. Copies of the course lie under /usr/src, /opt,
/home and inside the environment's site-packages, each hidden as the course is: where the
sandbox holds, none of them may appear at all.

Where the View cannot hold (no Landlock and no namespaces: the uid level on a kernel without
Landlock, or the none level without either, run with --allow-unisolated), the expectation is
the file modes alone: exactly what any other user may reach, the copies of the course
included. docs/isolation.md's table is generated from ``VARIANTS`` and ``holds`` below
(tests/isolation_table.py), and ``test_the_doc_table_is_the_census`` keeps it so.

Rules, not caps: FIFOs, sockets and block devices are stat'ed, never opened; in /proc a
process's folder is never walked into (its folder, status and cmdline are tried); paths that
changed while the census ran (other processes on the machine create and delete files) are
not compared; for character devices and the kernel's own files (/proc, /sys), which check
more than their modes (a terminal one has none, a ring buffer restricted by sysctl), the
modes give an upper bound.
"""
from __future__ import annotations

import bisect
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.sandbox.view import READ_FILE, WRITE_FILE, View, inside
from isolation_table import VARIANTS, Variant, holds
from kernel_variants import variant_cmd
from test_grading_corpus import ROOT
from test_isolation import HOW, _unprivileged

pytestmark = pytest.mark.slow  # eight variants, each a walk of the whole machine

RUNNER = ROOT / "tests" / "census_paths_runner.py"
NOBODY = 65534
COPY_PLACES = ("/usr/src", "/opt", "/home")  # where a course is found in images (/usr/src/app...)
MARKER = "census-marker-solution.py"
KERNEL_FILES = ("/proc", "/sys")


# ---------------------------------------------------------------- the machine as root sees it

@dataclass
class Entry:
    mode: int
    uid: int
    gid: int
    ino: int
    ctime: float


def _entry(st: os.stat_result) -> Entry:
    return Entry(st.st_mode, st.st_uid, st.st_gid, st.st_ino, st.st_ctime)


_TYPES = {"f": stat.S_IFREG, "d": stat.S_IFDIR, "l": stat.S_IFLNK, "c": stat.S_IFCHR, "b": stat.S_IFBLK,
          "p": stat.S_IFIFO, "s": stat.S_IFSOCK}


def walk_machine() -> dict[str, Entry]:
    """Every path on the machine, by lstat, symbolic links not followed (find(1), for speed:
    a Python walk of this machine's ~750,000 paths takes a minute); in /proc, the folders of
    processes are not walked into (their status and cmdline are listed)."""
    out = subprocess.run(["find", "/", "-path", "/proc/[0-9]*", "-prune", "-printf", _FORMAT, "-o", "-printf", _FORMAT],
                         capture_output=True, timeout=600).stdout
    found: dict[str, Entry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        ino, perm, uid, gid, ctime, kind, path = record.split(b" ", 6)
        found[os.fsdecode(path)] = Entry(_TYPES[kind.decode()] | int(perm, 8), int(uid), int(gid), int(ino),
                                         float(ctime))
    for p in [p for p in found if p.startswith("/proc/") and p[6:].isdigit()]:
        for leaf in ("status", "cmdline"):
            try:
                found[f"{p}/{leaf}"] = _entry(os.lstat(f"{p}/{leaf}"))
            except OSError:
                pass
    return found


_FORMAT = "%i %m %U %G %C@ %y %p\\0"


def read_only_mounts() -> list[str]:
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        f = line.split()
        if "ro" in f[5].split(","):
            out.append(f[4].replace("\\040", " "))
    return out


class Machine:
    """The tree a variant's grader runs in: the machine's, except that at the none level
    (tests/test_isolation.py's ``_unprivileged``) /root is an empty tmpfs (mode 755) holding
    only the Python installation's folder."""

    def __init__(self, tree: dict[str, Entry], level: str, pids: list[int] = ()):
        self.tree, self.level = dict(tree), level
        for pid in pids:  # the grader's and the zygote's, started after the walk: as any process's
            for leaf in ("", "/status", "/cmdline"):
                if f"/proc/1{leaf}" in tree:
                    self.tree.setdefault(f"/proc/{pid}{leaf}", tree[f"/proc/1{leaf}"])
        self.keep = "/" + "/".join(os.path.realpath(sys.base_prefix).strip("/").split("/")[:2])
        self.ro = Nearest(read_only_mounts())
        self.root_hidden = level == "none" and self.keep.startswith("/root/")

    def get(self, path: str) -> Entry | None:
        if self.root_hidden and inside(path, "/root"):
            if path == "/root":
                return Entry(stat.S_IFDIR | 0o755, 0, 0, 0, 0.0)
            if not inside(path, self.keep):
                return None
        return self.tree.get(path)

    def paths(self) -> list[str]:
        return [p for p in self.tree if self.get(p) is not None]

    def below(self, folders) -> list[str]:
        """The paths in (or equal to) any of ``folders``."""
        if not hasattr(self, "_sorted"):
            self._sorted = sorted(self.tree)
        out = []
        for f in folders:
            i = bisect.bisect_left(self._sorted, f)
            while i < len(self._sorted) and inside(self._sorted[i], f):
                out.append(self._sorted[i])
                i += 1
            j = bisect.bisect_left(self._sorted, f.rstrip("/") + "/")
            while j < len(self._sorted) and inside(self._sorted[j], f):
                out.append(self._sorted[j])
                j += 1
        return sorted({p for p in out if self.get(p) is not None})

    def read_only(self, path: str) -> bool:
        if self.level == "none" and inside(path, "/root"):
            return False  # the tmpfs over /root, or the bind of the installation
        return self.ro(path) is not None


def allowed(e: Entry, bit: int, uid: int, gid: int) -> bool:
    """May a process of ``uid``/``gid``, no other group, no capability, do ``bit`` (4 read,
    2 write, 1 search) on a file of this owner and mode?"""
    shift = 6 if e.uid == uid else 3 if e.gid == gid else 0
    return bool((e.mode >> shift) & bit)


class Modes:
    """The flags file modes allow a child of ``uid``/``gid`` on each path. With ``entries``
    (the namespaced levels), only the folders inside an entry are searched by their modes:
    above them lies the allow-list root's tmpfs (mode 755)."""

    def __init__(self, m: Machine, uid: int, gid: int, entries: set[str] | None = None):
        self.m, self.uid, self.gid = m, uid, gid
        self.entry_of = None if entries is None else Nearest(entries)
        self.search: dict[str, bool] = {}

    def searchable(self, d: str) -> bool:
        if d in self.search:
            return self.search[d]
        if self.entry_of is not None and self.entry_of(d) is None:
            ok = True  # the root's own folders
        else:
            e = self.m.get(d)
            up = os.path.dirname(d)
            ok = e is not None and allowed(e, 1, self.uid, self.gid) and (up == d or self.searchable(up))
        self.search[d] = ok
        return ok

    def flags(self, path: str) -> str:
        e = self.m.get(path)
        if e is None or not self.searchable(os.path.dirname(path)):
            return ""
        uid, gid, read_only = self.uid, self.gid, self.entry_of is not None or self.m.read_only(path)
        flags = "s"
        if stat.S_ISDIR(e.mode):
            flags += "l" if allowed(e, 4, uid, gid) else ""
            flags += "c" if allowed(e, 2, uid, gid) and allowed(e, 1, uid, gid) and not read_only else ""
        elif stat.S_ISREG(e.mode) or stat.S_ISCHR(e.mode):
            flags += "r" if allowed(e, 4, uid, gid) else ""
            flags += "w" if allowed(e, 2, uid, gid) and not (stat.S_ISREG(e.mode) and read_only) else ""
        return flags


class Nearest:
    """The one of ``names`` that ``path`` is or lies in (the deepest), if any. The census asks
    for every path of the machine: each walk up stops at the first folder answered before."""

    def __init__(self, names):
        self.names = set(names)
        self.known: dict[str, str | None] = {}

    def __call__(self, path: str) -> str | None:
        chain, p = [], path
        while True:
            if p in self.names:
                found = p
                break
            if p in self.known:
                found = self.known[p]
                break
            up = os.path.dirname(p)
            if up == p:
                found = None
                break
            chain.append(p)
            p = up
        for folder in chain[1:]:  # the folders above ``path``, which other paths share
            self.known[folder] = found
        return found


# ---------------------------------------------------------------- what the View says

def expected(v: Variant, view: View, m: Machine, uid: int, gid: int, cwd: str) -> dict[str, str]:
    """What the child must reach: derived from the View, the variant, and the modes."""
    devices = dict(view.devices)
    entries = set(view.read)
    out: dict[str, str] = {}
    if v.namespaced:
        # Nothing but the View exists: its entries (bind mounts, read-only), the folders
        # holding them (a read-only tmpfs, mode 755), its links, the devices and the child's
        # own folder (an empty tmpfs).
        modes = Modes(m, uid, gid, entries | set(devices))
        skeleton = {"/"}
        for p in (*entries, *devices, *(x for x, _ in view.links), cwd):
            up = os.path.dirname(p)
            while up not in skeleton:
                skeleton.add(up)
                up = os.path.dirname(up)
        for d in skeleton:
            out[d] = "s" if v.landlock else "sl"
        for link, _ in view.links:
            out[link] = "s"
        for p in m.below(entries):
            if flags := modes.flags(p):
                out[p] = flags
        for d, rights in devices.items():
            flags = modes.flags(d)
            if v.landlock:
                flags = "".join(f for f in flags if f == "s" or (f == "r" and rights & READ_FILE)
                                or (f == "w" and rights & WRITE_FILE))
            out[d] = flags
        out[cwd] = "slc"
        return out
    modes = Modes(m, uid, gid)
    entry_of = Nearest(entries)
    for p in m.paths():
        flags = modes.flags(p)
        if not flags:
            continue
        if v.landlock:  # Landlock does not stop a lookup: what it denies is still stat'ed
            keep = "s"
            if p in devices:
                keep += ("r" if devices[p] & READ_FILE else "") + ("w" if devices[p] & WRITE_FILE else "")
            elif entry_of(p) is not None:
                keep += "lr"
            flags = "".join(f for f in flags if f in keep)
        out[p] = flags
    out[cwd] = "slc"
    return out


# ---------------------------------------------------------------- running the census

@pytest.fixture(scope="module")
def course_copies():
    """Copies of the course (a few marker files) where images keep one, and one inside the
    environment's site-packages (a checkout there), each readable by anyone."""
    import site

    places = [*COPY_PLACES, os.path.realpath(site.getsitepackages()[0])]
    made = []
    for place in places:
        os.makedirs(place, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="census-course-", dir=place))
        (folder / "solutions").mkdir()
        (folder / "solutions" / MARKER).write_text("ANSWER = 42\n")
        (folder / "course.toml").write_text("[course]\n")
        for p in [folder, *folder.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        made.append(str(folder))
    yield made
    for folder in made:
        shutil.rmtree(folder)


@pytest.fixture(scope="module")
def machine(course_copies):
    started = time.time()
    tree = walk_machine()
    folder = Path(tempfile.mkdtemp(prefix="census-"))  # readable by the runner as nobody
    folder.chmod(0o755)
    listing = folder / "candidates.txt"
    listing.write_bytes(b"\0".join(os.fsencode(p) for p in tree))
    listing.chmod(0o644)
    yield tree, str(listing), started
    shutil.rmtree(folder)


def _command(v: Variant, cmd: list[str]) -> list[str]:
    if v.level == "uid":
        cmd = HOW["uid"] + cmd
    elif v.level == "none":
        cmd = _unprivileged(cmd)
    return variant_cmd(cmd, v.missing)


def run_census(v: Variant, machine, copies, allow_unisolated: bool) -> dict:
    tree, listing, _ = machine
    hide = [str(ROOT), *copies]
    cmd = _command(v, [sys.executable, str(RUNNER), listing, f"1,{os.getpid()}", *hide])
    env = dict(os.environ)
    env.pop("AUTOGRADER_ALLOW_UNISOLATED", None)
    if allow_unisolated:
        env["AUTOGRADER_ALLOW_UNISOLATED"] = "1"
    started = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    out["started"] = started
    return out


@pytest.fixture(scope="module", params=VARIANTS, ids=[v.id for v in VARIANTS])
def census(request, machine, course_copies):
    if os.geteuid() != 0:
        pytest.skip("the census runs each level from root (CI runs as root)")
    v = request.param
    got = run_census(v, machine, course_copies, allow_unisolated=not v.isolates)
    if "report" in got:  # parsed once: each test below reads every path of it
        got["found"] = _report(got.pop("report"))
    return v, got


def _report(text: str) -> dict[str, str]:
    return dict(reversed(record.split("\t", 1)) for record in text.split("\0") if record)


def _unstable(path: str, machine, m: Machine, since: float) -> bool:
    """Changed while the census ran, or a process's /proc other than the ones named."""
    tree, _, listed = machine
    try:
        st = os.lstat(path)
    except OSError:
        return path in tree or not path.startswith("/proc/")
    before = tree.get(path)
    return before is None or before.ino != st.st_ino or st.st_ctime >= listed - 1


def _compare(v: Variant, got: dict, machine, course_copies) -> tuple[dict, dict]:
    tree, _, _ = machine
    m = Machine(tree, v.level, got["pids"])
    view = View.from_dict(got["view"])
    uid, gid = (NOBODY, NOBODY) if v.level == "none" else (got["uid"], got["gid"])
    want = expected(v, view, m, uid, gid, got["cwd"])
    have = got["found"]
    pids = {str(p) for p in got["pids"]}
    diff_have, diff_want = {}, {}
    for p in set(want) | set(have):
        a, b = have.get(p, ""), want.get(p, "")
        if a == b or set(a) == set(b):
            continue
        parts = p.split("/")
        if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and parts[2] not in pids:
            continue  # processes come and go: only the named ones are compared
        if _unstable(p, machine, m, got["started"]):
            continue
        e = m.get(p)
        if any(inside(p, k) for k in KERNEL_FILES) or (e is not None and stat.S_ISCHR(e.mode)):
            if set(a) <= set(b):
                continue  # the kernel checks more than the modes: they are an upper bound
        diff_have[p], diff_want[p] = a, b
    return diff_have, diff_want


def test_the_level_is_the_variants(census):
    v, got = census
    assert got.get("level") == v.level, got.get("refused") or got.get("layers")
    assert ("landlock" in got["layers"]) == v.landlock
    assert ("namespaces" in got["layers"]) == v.namespaced


def test_what_the_child_reaches_is_what_the_view_says(census, machine, course_copies):
    v, got = census
    have, want = _compare(v, got, machine, course_copies)
    sample = sorted(have)[:40]
    assert not have, f"{len(have)} paths differ, e.g.:\n" + "\n".join(
        f"  {p}: child {have[p]!r}, expected {want[p]!r}" for p in sample)


def test_no_copy_of_the_course_where_the_sandbox_holds(census, course_copies):
    v, got = census
    found = {p: f for p, f in got["found"].items() if any(inside(p, c) for c in course_copies)}
    reached = {p for p, f in found.items() if set(f) - {"s"}}  # listed, read or written, not just stat'ed
    if holds(v, "paths outside the View do not exist for it (no stat, no name)"):
        assert found == {}
    if holds(v, "the course, wherever it lies, is out of reach"):
        assert reached == set()
    else:  # file modes alone: a copy anyone may read, the child may read
        assert {os.path.join(c, "solutions", MARKER) for c in course_copies} <= reached


def test_no_other_process_where_the_sandbox_holds(census):
    v, got = census
    report = got["found"]
    others = {p: f for p, f in report.items() if p.startswith("/proc/") and p.split("/")[2].isdigit()}
    readable = {p for p, f in others.items() if set(f) - {"s"}}
    if holds(v, "no other process's /proc is readable"):
        assert readable == set(), sorted(readable)[:10]
    if v.namespaced:
        assert others == {}


def test_nothing_outside_its_folder_is_writable(census):
    v, got = census
    report = got["found"]
    writes = {p for p, f in report.items() if ("w" in f or "c" in f) and not inside(p, got["cwd"])}
    if holds(v, "writes only its own folder and /dev/null"):
        assert writes <= {"/dev/null"}, sorted(writes)[:10]
    if holds(v, "writes nothing outside its own folder but /dev/null and /dev/urandom"):
        assert writes <= {"/dev/null", "/dev/urandom"}, sorted(writes)[:10]
    else:  # the modes alone: the world-writable folders
        assert writes


def test_nothing_outside_the_view_exists_where_namespaced(census):
    v, got = census
    view = View.from_dict(got["view"])
    if not holds(v, "paths outside the View do not exist for it (no stat, no name)"):
        return
    named = [*view.read, *(d for d, _ in view.devices), *(x for x, _ in view.links), got["cwd"]]
    for p in got["found"]:
        assert any(inside(p, n) or inside(n, p) for n in named), p


def test_without_any_isolation_the_grader_refuses(machine, course_copies):
    """Not root, no user namespaces, no Landlock: the sandbox refuses, in one line, unless
    the operator allowed it (the census above ran that variant with the flag)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become nobody")
    v = next(v for v in VARIANTS if not v.isolates)
    got = run_census(v, machine, course_copies, allow_unisolated=False)
    assert "refused" in got and "\n" not in got["refused"]
    for missing in ("not root", "no user namespaces", "no Landlock", "--allow-unisolated"):
        assert missing in got["refused"]


def test_the_doc_table_is_the_census():
    from isolation_table import render

    doc = (ROOT / "docs" / "isolation.md").read_text()
    assert render() in doc, "docs/isolation.md's table is stale: python tests/isolation_table.py --write"
