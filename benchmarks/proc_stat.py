"""The processes of this machine as /proc/PID/stat says, for the benchmarks that time or weigh
a process tree: one reading of the file, written once."""
from __future__ import annotations

import os

TICK = os.sysconf("SC_CLK_TCK")  # the unit of stat's CPU times
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def stat(pid: int) -> list[str] | None:
    """The fields after the process's name (which may hold spaces and parentheses): [0] its
    state, [1] its parent, [7] its minor faults, [8] its reaped children's, [11:13] its user and
    system CPU, [13:15] its reaped children's, [21] its resident pages. None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def every() -> dict[int, list[str]]:
    """Every process's ``stat`` now; one that ends while being read is left out."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := stat(int(entry))) is not None:
            found[int(entry)] = fields
    return found


def family(pid: int, stats: dict[int, list[str]]) -> set[int]:
    """``pid`` and all its descendants among ``stats`` (``every``), each that is there."""
    found, frontier = {pid}, [pid]
    while frontier:
        parent = str(frontier.pop())
        kids = [c for c, fields in stats.items() if fields[1] == parent and c not in found]
        found.update(kids)
        frontier += kids
    return found & set(stats)
