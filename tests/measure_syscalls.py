"""Measure the syscalls sandbox children make, to derive the seccomp allow-list from.

Grades the whole hand-written corpus (tests/submissions/*/*.py and the notebooks) in one
sandbox under ``strace -ff``, and prints, per syscall, how many children made it after
their own seccomp filter was in force (and their descendants: a submission's forks). The
allow-list itself lives in autograder/sandbox/syscalls.py: this says what it must hold,
that file says why.

    python tests/measure_syscalls.py [ASSIGNMENT...]     (as root; strace installed)
"""
from __future__ import annotations

import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

CALL = re.compile(r"^(?:\[pid\s+\d+\]\s+)?([a-z_0-9]+)\((.*)")
FORKED = re.compile(r"^(?:clone|clone3|fork|vfork)\(.*\)\s+=\s+(\d+)")


def _calls(path: Path) -> tuple[list[str], bool]:
    """(the syscalls after the process's seccomp filter went on, whether it went on here)."""
    names, on = [], False
    for line in path.read_text(errors="replace").splitlines():
        m = CALL.match(line)
        if not m:
            continue
        if on:
            names.append(m.group(1))
        elif m.group(1) in ("prctl", "seccomp") and ("PR_SET_SECCOMP" in line or "SECCOMP_SET_MODE_FILTER" in line):
            on = True
    return names, on


def measure(assignments: list[str]) -> collections.Counter:
    from test_grading_corpus import SUBMISSIONS, with_root

    out = Path(tempfile.mkdtemp(prefix="measure-syscalls-"))
    try:
        counts: collections.Counter = collections.Counter()
        for assignment in assignments:
            files = [str(with_root(p)) for p in sorted((SUBMISSIONS / assignment).glob("*"))
                     if p.suffix in (".py", ".ipynb")]
            trace = out / assignment
            trace.mkdir()
            subprocess.run(["strace", "-ff", "-qq", "-o", str(trace / "t"), sys.executable,
                            str(ROOT / "tests" / "isolation_runner.py"), assignment, *files],
                           stdout=subprocess.DEVNULL, check=True)
            by_pid = {int(p.suffix[1:]): p for p in trace.glob("t.*")}
            confined: set[int] = set()
            parsed = {pid: _calls(p) for pid, p in by_pid.items()}
            for pid, (_, on) in parsed.items():
                if on:
                    confined.add(pid)
            grew = True
            while grew:  # a confined process's children are confined
                grew = False
                for pid in list(confined):
                    for line in by_pid[pid].read_text(errors="replace").splitlines():
                        m = FORKED.match(line)
                        if m and int(m.group(1)) in by_pid and int(m.group(1)) not in confined:
                            confined.add(int(m.group(1)))
                            grew = True
            for pid in confined:
                names, on = parsed[pid]
                if not on:  # a descendant: all it did was under the filter
                    names = [m.group(1) for line in by_pid[pid].read_text(errors="replace").splitlines()
                             if (m := CALL.match(line))]
                counts.update(set(names))
        return counts
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    assignments = sys.argv[1:] or ["ps1", "ps2", "ps3", "ps4"]
    counts = measure(assignments)
    for name, n in sorted(counts.items()):
        print(f"{name:28} {n}")


if __name__ == "__main__":
    main()
