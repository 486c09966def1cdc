"""How far a batch has got, on the terminal that started it."""
from __future__ import annotations

import sys
import time


class Progress:
    """A one-line progress bar with rate and ETA on a terminal; silent otherwise (CI logs)."""

    def __init__(self, total: int, done: int, enabled: bool):
        self.total, self.done, self.enabled = total, done, enabled
        self.start, self.new = time.monotonic(), 0
        self._draw()

    def step(self) -> None:
        self.done += 1
        self.new += 1
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        elapsed = time.monotonic() - self.start
        rate = self.new / elapsed if elapsed > 0 and self.new else 0.0
        eta = (self.total - self.done) / rate if rate else 0.0
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                         f"{rate:5.1f}/s ETA {eta:4.0f}s ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
