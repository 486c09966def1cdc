"""Facts of Gradescope's container, each read once per submission: who the student is, and how
much memory a submission may use."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import GraderError
from ..sandbox import DEFAULT_MEMORY

# What the grader itself needs beside a submission: its process (numpy, the reference, the
# judging) and the zygote. Both with a child, grading ps1 here: about 115 MiB resident at the
# peak (ps over the run's processes every 50 ms); doubled.
GRADER_HEADROOM = 256 << 20
LEAST_MEMORY = 128 << 20  # below this a submission could not even import numpy; a smaller container gets this
_NO_LIMIT = 1 << 60  # cgroup v1 writes "no limit" as a number near 2**63


def student(metadata: Path) -> str:
    """The student whose inputs are drawn: the first user's email in submission_metadata.json;
    a group's members' emails, sorted, joined with "+". Without one the seeding would be the
    same for everyone, so a missing or malformed file is the grader's failure, not a grade."""
    try:
        doc = json.loads(Path(metadata).read_text(encoding="utf-8"))
        emails = sorted({u["email"].strip() for u in doc["users"]})
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:  # AttributeError: an email not a string
        raise GraderError(f"no student in {metadata} ({type(e).__name__}: {e})") from e
    if not emails or not all(emails):
        raise GraderError(f"no student email in {metadata}")
    return "+".join(emails)


def memory_limit(proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The memory limit on this process in bytes: the smallest v2 ``memory.max`` or v1
    ``memory.limit_in_bytes`` of its cgroup and the groups above it; None where no limit is set
    or none is readable. A container sees its own group mounted as the hierarchy's root while
    /proc/self/cgroup names the host's path, so the group is the longest tail of that path that
    exists under the mount."""
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        parts = [p for p in path.strip().split("/") if p]
        if controllers == "":  # v2: "0::/path"
            base, name = root, "memory.max"
        elif "memory" in controllers.split(","):  # v1: "4:memory:/path"
            base, name = root / "memory", "memory.limit_in_bytes"
        else:
            continue
        tail = next((parts[i:] for i in range(len(parts) + 1) if base.joinpath(*parts[i:], name).is_file()), None)
        if tail is None:
            continue
        for depth in range(len(tail), -1, -1):  # the group, then each group above it
            limits.append(_limit(base.joinpath(*tail[:depth], name)))
    found = [n for n in limits if n is not None]
    return min(found) if found else None


def _limit(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and int(text) < _NO_LIMIT else None  # "max" (v2) or ~2**63 (v1): none


def submission_memory(limit: int | None) -> int:
    """What one submission may use inside a container of ``limit`` bytes: the default where
    there is no limit, else the limit less the grader's headroom (never more than the default)."""
    if limit is None:
        return DEFAULT_MEMORY
    return max(LEAST_MEMORY, min(DEFAULT_MEMORY, limit - GRADER_HEADROOM))
