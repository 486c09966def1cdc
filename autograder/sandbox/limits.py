"""What one submission may use: every limit in one place, read by the handle, the zygote
and the child alike."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    memory: int = 2 << 30  # bytes: per submission where a cgroup can hold it, per process otherwise
    processes: int = 64  # per submission (its own uid; a pids cgroup where there is one)
    file_size: int = 16 << 20  # bytes, any one file it writes
    disk: int = 64 << 20  # bytes, its own folder (a tmpfs at the full level)
    output: int = 8_000  # characters of its stdout and stderr kept for feedback
    result: int = 64 << 20  # bytes one exercise's outcomes may take on the wire

    def to_dict(self) -> dict:
        return asdict(self)


DEFAULT_MEMORY = Limits.memory
