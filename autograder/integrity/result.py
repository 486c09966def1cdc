"""What one integrity run found: the model run.py makes and page.py renders."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .intake import Unread
from .scoring import Pair


@dataclass
class IntegrityResult:
    pairs: list[Pair]  # reported, most suspicious first
    flagged: list[Pair]  # of those, the ones at or above the threshold
    unread: list[Unread]  # could not be read: listed, compared with nothing
    students: int  # compared
    threshold: float
    seconds: float
    csv: Path
    html: Path
