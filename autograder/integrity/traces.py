"""Traces a copied notebook carries: what only the same file, saved on one machine, has.

Each trace is a (kind, value) pair; scoring.py weighs each by how rare it is in the class
(a JupyterHub where everyone is ``jovyan`` gives every notebook the same home folder: shared
by the whole class, it weighs nothing). The kinds, and how strongly one shared trace alone
suggests a shared file (``STRENGTH``, before rarity):

- ``cell id``: nbformat gives each new cell a random id; two notebooks with the same id on a
  cell the release does not have share a file.
- ``execution counts``: the order a notebook's cells were last run in; a run top to bottom
  (1, 2, 3, ...) is what anyone gets and is not a trace.
- ``home folder``: a path like /home/NAME or /Users/NAME in a saved output or traceback.
- ``object address``: ``0x7f...`` in a saved output; it differs on every run.
- ``error``: the same unusual error (type and message) in a saved output.
- ``saved output``: the same long output of a cell the release does not have.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..names import one_line


@dataclass(frozen=True)
class Trace:
    kind: str
    value: str  # compared exactly
    shown: str  # what the report says (one line, short)


STRENGTH = {"cell id": 0.6, "execution counts": 0.5, "home folder": 0.6, "object address": 0.8,
            "error": 0.35, "saved output": 0.3}
_HOME = re.compile(r"(?:/home/|/Users/|[A-Za-z]:\\\\?Users\\\\?)([A-Za-z0-9._-]{1,64})")
_ADDRESS = re.compile(r"\b0x[0-9a-f]{8,16}\b")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
MIN_OUTPUT = 80  # characters: a shorter saved output is too likely to be what anyone's code prints
MAX_TRACES = 200  # per notebook: a hostile one with a million outputs costs no more than this
_COMMON_ERRORS = ("NotImplementedError",)  # the released stub's own: everyone who ran it has it


def notebook_traces(nb: dict, released_ids: frozenset[str], released_sources: frozenset[str]) -> set[Trace]:
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return set()
    found: set[Trace] = set()
    counts: list[int] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        cid = cell.get("id")
        if isinstance(cid, str) and cid and cid not in released_ids:
            found.add(Trace("cell id", cid, f"cell id {one_line(cid, 40)}"))
        if cell.get("cell_type") != "code":
            continue
        n = cell.get("execution_count")
        if isinstance(n, int) and not isinstance(n, bool):
            counts.append(n)
        src = cell.get("source", "")
        src = "".join(s for s in src if isinstance(s, str)) if isinstance(src, list) else src
        released = isinstance(src, str) and src in released_sources
        outputs = cell.get("outputs")
        for out in outputs if isinstance(outputs, list) else []:
            if isinstance(out, dict):
                found |= _output_traces(out, released)
        if len(found) > MAX_TRACES:
            break
    if len(counts) >= 3 and counts != list(range(counts[0], counts[0] + len(counts))):
        shown = ", ".join(map(str, counts[:8])) + (", ..." if len(counts) > 8 else "")
        found.add(Trace("execution counts", ",".join(map(str, counts)), f"execution counts {shown}"))
    return set(sorted(found, key=lambda t: (t.kind, t.value))[:MAX_TRACES])


def _output_traces(out: dict, released_cell: bool) -> set[Trace]:
    text = _ANSI.sub("", _text(out))
    found = {Trace("home folder", m.group(0), f"home folder {one_line(m.group(0), 60)}")
             for m in _HOME.finditer(text)}
    found |= {Trace("object address", m.group(0), f"object address {m.group(0)}") for m in _ADDRESS.finditer(text)}
    if out.get("output_type") == "error":
        name, value = out.get("ename"), out.get("evalue")
        if isinstance(name, str) and isinstance(value, str) and name not in _COMMON_ERRORS:
            found.add(Trace("error", f"{name}: {value}", f"error {one_line(f'{name}: {value}', 80)}"))
    if not released_cell and len(text.strip()) >= MIN_OUTPUT:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        found.add(Trace("saved output", digest, f"saved output {one_line(text, 60)!r}"))
    return found


def _text(out: dict) -> str:
    """The text of one output: a stream's text, a result's text/plain, an error's traceback."""
    parts: list[str] = []
    for value in (out.get("text"), (out.get("data") or {}).get("text/plain") if isinstance(out.get("data"), dict)
                  else None, out.get("traceback")):
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    return "\n".join(parts)[:100_000]
