"""What holds at each isolation level and kernel variant: the data docs/isolation.md's
table is generated from, and that tests/test_census_paths.py (the disk) and
tests/test_resources.py (memory, processes, sockets, signals) check at every variant.

    python tests/isolation_table.py           print the table
    python tests/isolation_table.py --write   put it into docs/isolation.md (between its markers)

Each guarantee is a rule on the variant (``GUARANTEES``), not a hand-filled cell: the census
asserts, per variant, exactly what the rule says holds.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "isolation.md"
BEGIN, END = "<!-- census table: begin (tests/isolation_table.py) -->", "<!-- census table: end -->"


@dataclass(frozen=True)
class Variant:
    level: str  # what the grader runs as: full (root), uid (root without CAP_SYS_ADMIN), none (not root)
    missing: frozenset[str] = frozenset()  # kernel features hidden (tests/kernel_variants.py)

    @property
    def landlock(self) -> bool:
        return "landlock" not in self.missing

    @property
    def namespaced(self) -> bool:
        """An allow-list root of its own: root's namespaces, or a user namespace's."""
        return self.level == "full" or (self.level == "none" and "userns" not in self.missing)

    @property
    def isolates(self) -> bool:
        """Anything at all between the submission and the grader's user (else: refused)."""
        return self.level != "none" or self.namespaced or self.landlock

    @property
    def id(self) -> str:
        return "-".join([self.level, *(f"no-{m}" for m in sorted(self.missing))])

    @property
    def title(self) -> str:
        where = {"full": "`full`", "uid": "`uid`", "none": "`none`"}[self.level]
        lacks = [{"landlock": "Landlock", "userns": "user namespaces"}[m] for m in sorted(self.missing)]
        return where + (", no " + ", no ".join(lacks) if lacks else "")


VARIANTS = [
    Variant("full"), Variant("full", frozenset({"landlock"})),
    Variant("uid"), Variant("uid", frozenset({"landlock"})),
    Variant("none"), Variant("none", frozenset({"landlock"})),
    Variant("none", frozenset({"userns"})), Variant("none", frozenset({"userns", "landlock"})),
]

# guarantee -> the rule that says where it holds
GUARANTEES = {
    "the grader grades (else it refuses, in one line, unless --allow-unisolated)": lambda v: v.isolates,
    "the child reads exactly the View (stdlib, the preloaded packages, their libraries, 2 devices) "
    "and its own folder": lambda v: v.namespaced or v.landlock,
    "the course, wherever it lies, is out of reach": lambda v: v.namespaced or v.landlock,
    "paths outside the View do not exist for it (no stat, no name)": lambda v: v.namespaced,
    "no other process's /proc is readable": lambda v: v.namespaced or v.landlock,
    "writes only its own folder and /dev/null": lambda v: v.landlock,
    "writes nothing outside its own folder but /dev/null and /dev/urandom": lambda v: v.namespaced or v.landlock,
    # tests/test_resources.py: an attack for each, graded at every variant
    "files it writes in memory outside its own folder (/dev/shm) count in its memory limit, or it cannot "
    "write them": lambda v: v.isolates,
    "memory no folder or process size shows (memfds, removed files kept open or only mapped, SysV segments "
    "given away, shared memory unmapped but a page) counts in its memory limit, or cannot be made": lambda v: True,
    "its processes' memory and CPU are limited per submission, not per process": lambda v: True,
    "what it leaves (files in memory, SysV IPC, folders nested thousands deep) is removed after it":
        lambda v: v.isolates,
    "no socket reaches another sandbox or the outside": lambda v: True,
    "no signal reaches the grader, its sandbox process or a classmate": lambda v: True,
    "no pipe of another process opens for writing (a classmate's child waiting for its job)": lambda v: v.isolates,
}


def holds(v: Variant, guarantee: str) -> bool:
    return GUARANTEES[guarantee](v)


def render() -> str:
    head = "| guarantee | " + " | ".join(v.title for v in VARIANTS) + " |"
    rule = "|---|" + "---|" * len(VARIANTS)
    rows = [f"| {g} | " + " | ".join("yes" if f(v) else "**no**" for v in VARIANTS) + " |"
            for g, f in GUARANTEES.items()]
    return "\n".join([head, rule, *rows])


def write() -> None:
    text = DOC.read_text()
    before, _, rest = text.partition(BEGIN)
    _, _, after = rest.partition(END)
    DOC.write_text(before + BEGIN + "\n" + render() + "\n" + END + after)


if __name__ == "__main__":
    write() if sys.argv[1:] == ["--write"] else print(render())
