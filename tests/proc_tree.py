"""Who is whose child, from /proc: for tests that find the processes a grader started."""
import os
from pathlib import Path


def parents() -> dict[int, int]:
    """Every process's parent (field 4 of /proc/PID/stat, after the name in parentheses, which
    may hold spaces and parentheses itself); a process that ends while being read is left out."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                found[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    return found


def children(pid: int) -> list[int]:
    return [child for child, parent in parents().items() if parent == pid]


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (not ``root`` itself)."""
    tree = parents()
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        kids = [c for c, p in tree.items() if p == parent]
        found += kids
        frontier += kids
    return found
