"""What one submission may use: the limits the handle, the zygote and the child all read,
in one place. (Time is not here: CPU seconds follow from the timeout, and one core is the
cgroup's and the uid level's watch's rule.)"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    # bytes: per submission in its cgroup (full level), and what Sandbox.run gives by default
    # per process (RLIMIT_AS) and per submission at the uid level (its watch)
    memory: int = 2 << 30
    processes: int = 64  # per submission: RLIMIT_NPROC on its uid (when set as root), a pids cgroup where there is one
    file_size: int = 16 << 20  # bytes, any one file it writes
    disk: int = 64 << 20  # bytes, its own folder where that is a tmpfs (with namespaces); not limited otherwise
    output: int = 8_000  # characters of its stdout and stderr kept for feedback
    result: int = 64 << 20  # bytes one exercise's outcomes may take on the wire

    def to_dict(self) -> dict:
        return asdict(self)


DEFAULT_MEMORY = Limits.memory
