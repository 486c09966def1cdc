"""A submission of another problem set than the one graded (a ps2 notebook handed in for
ps1), told from the functions it defines and the graded cells it holds: read, never run."""
from __future__ import annotations

import json
import re

from .assignments import ASSIGNMENTS, exercises

_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def looks_like(data: bytes, suffix: str, assignment: str, notebook: dict | None = None
               ) -> tuple[str, list[str]] | None:
    """(the problem set, its exercises found) when the submission names more exercises of
    another problem set than of ``assignment`` (a function it defines, or a notebook's graded
    cell), e.g. a ps2 notebook handed in for ps1; None otherwise. Reads, never runs.
    ``notebook``: the notebook's JSON, where the grader has parsed it already (Submission.notebook)."""
    named: set[str] = set()
    if suffix == ".ipynb":
        try:
            nb = notebook if notebook is not None else json.loads(data.decode("utf-8-sig", "replace"))
        except (ValueError, RecursionError):
            return None
        cells = nb.get("cells") if isinstance(nb, dict) else None
        for cell in cells if isinstance(cells, list) else []:
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            src = cell.get("source", "")
            src = "".join(s for s in src if isinstance(s, str)) if isinstance(src, list) else src
            named.update(_DEF.findall(src) if isinstance(src, str) else ())
            meta = cell.get("metadata")
            meta = meta.get("nbgrader") if isinstance(meta, dict) else None
            if isinstance(meta, dict) and meta.get("grade") and isinstance(meta.get("grade_id"), str):
                named.add(meta["grade_id"])
    else:
        named.update(_DEF.findall(data.decode("utf-8-sig", "replace")))
    # Shares, not counts: a file with every problem set's answers names all six of ps4's and
    # all five of ps2's, and is a ps2 submission as much as a ps4 one.
    mine = len(named & set(exercises(assignment))) / len(exercises(assignment))
    share, other = max(((len(named & set(names)) / len(names), name) for name, names in ASSIGNMENTS.items()
                        if name != assignment), default=(0.0, ""))
    if share <= mine:
        return None
    return other, [name for name in ASSIGNMENTS[other] if name in named]


def other_set_line(other: str, found: list[str], assignment: str) -> str:
    return (f"This looks like a {other} submission, not {assignment}: it has {', '.join(found)}. It was graded "
            f"as {assignment}; if you handed in the wrong file, hand in your {assignment} notebook.")
