"""index.html: one page linking the class dashboards of every problem set graded side by side.

A dashboard (``class.html``, dashboard.py) carries its assignment, when it was graded and a
one-line summary in ``<meta name="autograder:...">`` tags; the index reads those back, so it
can be rebuilt from the files alone. Two indexes are written:

- ``OUTDIR/index.html`` after a batch: every set graded beside OUTDIR (``OUTDIR/class.html``
  and the dashboards of the folders next to it, ``OUTDIR/../*/class.html``: ``--out out/ps1``,
  ``--out out/ps2``...). Each dashboard links it as the index of all sets; the indexes of the
  sets beside it are written again with it, so each lists every set graded so far.
- one index over the sets in a folder's subfolders (``make demo``: ``demo-out/index.html``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from urllib.parse import quote

from ..results import write_atomic
from .render import render

INDEX = "index.html"
DASHBOARD = "class.html"
META = re.compile(r"<meta name=['\"]autograder:(\w+)['\"] content=['\"]([^'\"]*)['\"]>")


@dataclass(frozen=True)
class Dashboard:
    href: str  # relative to the index, URL-quoted
    assignment: str
    graded: str
    summary: str


def read_dashboard(path: Path, index: Path) -> Dashboard | None:
    """The dashboard at ``path`` as the index in folder ``index`` links it; None when it is no
    dashboard of the grader's."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return None
    fields = {k: unescape(v) for k, v in META.findall(head)}
    if "assignment" not in fields:
        return None
    href = "/".join(quote(p) for p in Path(os.path.relpath(path, index)).parts)
    return Dashboard(href, fields["assignment"], fields.get("graded", ""), fields.get("summary", ""))


def _found(paths, index: Path) -> list[Dashboard]:
    found = [d for p in dict.fromkeys(paths) if p.is_file() and (d := read_dashboard(p, index)) is not None]
    return sorted(found, key=lambda d: (d.assignment, d.href))


def find_dashboards(folder: Path) -> list[Dashboard]:
    """``folder/class.html`` and ``folder/*/class.html``, sorted by assignment then place."""
    folder = Path(folder)
    return _found([folder / DASHBOARD, *sorted(folder.glob(f"*/{DASHBOARD}"))], folder)


def sets_beside(out: Path) -> list[Dashboard]:
    """The dashboards of ``out`` and of the folders beside it, as ``out/index.html`` links them."""
    out = Path(out).absolute()
    return _found([out / DASHBOARD, *sorted(out.parent.glob(f"*/{DASHBOARD}"))], out)


def index_html(dashboards: list[Dashboard], title: str = "Grading results") -> str:
    return render("index.html.j2", title=title, dashboards=dashboards)


def write_index(folder: Path, title: str = "Grading results") -> Path:
    """Write ``folder/index.html`` over the dashboards in ``folder`` and its subfolders; return its path."""
    path = Path(folder) / INDEX
    write_atomic(path, index_html(find_dashboards(folder), title))
    return path


def write_set_index(out: Path) -> Path:
    """Write ``out/index.html`` over every set graded beside ``out`` (sets_beside), and again the
    index of each of those sets that has one (so an earlier set's lists the later ones too);
    return ``out``'s."""
    out = Path(out).absolute()
    # Only the grader's own sets: a folder beside OUTDIR that is no dashboard's keeps its files.
    others = [p.parent for p in sorted(out.parent.glob(f"*/{DASHBOARD}"))
              if p.parent != out and (p.parent / INDEX).is_file() and read_dashboard(p, p.parent) is not None]
    for folder in [out, *others]:
        dashboards = sets_beside(folder)
        title = "Grading results: " + ", ".join(dict.fromkeys(d.assignment for d in dashboards))
        write_atomic(folder / INDEX, index_html(dashboards, title))
    return out / INDEX


def file_uri(path: Path) -> str:
    """The ``file://`` address to open in a browser."""
    return Path(path).resolve().as_uri()
