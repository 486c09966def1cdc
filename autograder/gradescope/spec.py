"""Results as Gradescope's results.json, to the letter of its specification (docs/specs.md of
gradescope/autograder_samples), which is narrower than the project's own results format:

- top-level keys only from the specification (the project's top-level ``max_score`` is not);
- every text a student wrote or printed is shown as text (``output_format: "text"``), never as
  HTML or Markdown (the top level's default, ``simple_format``, renders HTML);
- under 1 MB (Gradescope's limit): heatmaps cut to a corner, outputs capped;
- ``extra_data`` holds nothing computed by the reference: the expected weights for the
  student's own inputs stay out (the feedback text already says what the student needs);
- each field of the type the specification shows (``execution_time`` whole seconds);
- a visibility choice for every test, and the total stated in the output whenever a test is
  not visible, because Gradescope then hides the total score from the student.
"""
from __future__ import annotations

import json

from ..names import cap
from ..results import Results, TestResult
from . import VISIBILITIES  # spec.VISIBILITIES, where bundle.py and the cli read them

TOP_KEYS = ("score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
            "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard")
TEST_KEYS = ("score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
             "visibility", "extra_data")
MAX_BYTES = 1_000_000  # Gradescope refuses a larger results.json
HEATMAP_SIDE = 16  # rows and columns of the student's weights kept per test (the whole shape is recorded)


def to_gradescope(results: Results, *, visibility: str | None = None, found: str = "") -> dict:
    """``results`` as a results.json document; ``found`` is the line saying what was uploaded."""
    if visibility is not None and visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}, not {visibility!r}")
    tests = [_test(t, visibility) for t in results.tests]
    lines = [found] if found else []
    if any(t["visibility"] != "visible" for t in tests):
        lines.append(_total_line(results, tests))
    if results.output:
        lines.append(results.output)
    doc = {"score": results.score, "execution_time": round(results.execution_time), "output": "\n".join(lines),
           "output_format": "text", "test_output_format": "text", "test_name_format": "text",
           "extra_data": {k: v for k, v in results.extra_data.items() if k in ("isolation", "isolation_layers")},
           "tests": tests}
    return _within_limit(doc)


def dumps(doc: dict) -> str:
    return json.dumps(doc, allow_nan=False)


def _total_line(results: Results, tests: list[dict]) -> str:
    later = sum(t["max_score"] for t in tests if t["visibility"] != "visible")
    return (f"Total: {results.score:g} / {sum(t['max_score'] for t in tests):g} points, including "
            f"{later:g} points of checks whose details are not shown yet.")


def _test(t: TestResult, visibility: str | None) -> dict:
    extra = {}
    heatmap = t.extra_data.get("heatmap")
    if isinstance(heatmap, dict) and isinstance(heatmap.get("got"), list):
        extra["heatmap"] = _corner(heatmap["got"])  # the student's own weights only
    return {"name": t.name, "name_format": "text", "score": t.score, "max_score": t.max_score, "status": t.status,
            "output": t.output, "output_format": "text", "visibility": visibility or t.visibility,
            "tags": list(t.tags), "extra_data": extra}


def _corner(rows: list) -> dict:
    """At most HEATMAP_SIDE x HEATMAP_SIDE of a (possibly nested) list of rows, and its shape."""
    shape, inner = [], rows
    while isinstance(inner, list):
        shape.append(len(inner))
        inner = inner[0] if inner else None
    while len(shape) > 2 and isinstance(rows, list) and rows:  # batch dimensions: the first map
        rows, shape = rows[0], shape[1:]
    cut = [r[:HEATMAP_SIDE] if isinstance(r, list) else r for r in rows[:HEATMAP_SIDE]]
    return {"got": cut, "shape": shape}


def _within_limit(doc: dict) -> dict:
    """Cut what can be cut (heatmaps, then outputs) until the document fits in MAX_BYTES."""
    if len(dumps(doc).encode()) < MAX_BYTES:
        return doc
    for t in doc["tests"]:
        t["extra_data"] = {}
    per_test = max(200, (MAX_BYTES // 2) // (6 * max(1, len(doc["tests"]))))  # \uXXXX: 6 bytes a character
    for t in doc["tests"]:
        t["output"] = cap(t["output"], per_test)
    doc["output"] = cap(doc["output"], MAX_BYTES // 24)  # the tests' half and this quarter leave room for the rest
    return doc
