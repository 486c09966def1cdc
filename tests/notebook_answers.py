"""The answer cells of a generated notebook, run in the test's own process: the functions a
notebook's check cells receive. Only for make_class's notebooks (the course's own answers
and its catalogue of mistakes), never for a hostile file."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def answer_functions(notebook: Path) -> dict:
    namespace: dict = {"np": np}  # the notebook's first cell imports numpy as np
    for cell in json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]), namespace)
    return namespace
