"""index.html: one page linking every assignment's class dashboard found in a folder.

A dashboard (``class.html``, dashboard.py) carries its assignment, when it was graded and a
one-line summary in ``<meta name="autograder:...">`` tags; the index reads those back, so it
can be rebuilt from the files alone: ``OUTDIR/index.html`` after a batch (that folder's
dashboard), or one index over several batches' folders (``make demo``: ps1 to ps3).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape, unescape
from pathlib import Path
from urllib.parse import quote

from ..results import write_atomic
from .feedback import page

META = re.compile(r"<meta name=['\"]autograder:(\w+)['\"] content=['\"]([^'\"]*)['\"]>")


@dataclass(frozen=True)
class Dashboard:
    href: str  # relative to the index, URL-quoted
    assignment: str
    graded: str
    summary: str


def meta_tags(**fields: str) -> str:
    """The tags a dashboard carries for the index (values escaped)."""
    return "".join(f"<meta name='autograder:{k}' content='{escape(v, quote=True)}'>" for k, v in fields.items())


def read_dashboard(path: Path, folder: Path) -> Dashboard | None:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return None
    fields = {k: unescape(v) for k, v in META.findall(head)}
    if "assignment" not in fields:
        return None
    href = "/".join(quote(p) for p in path.relative_to(folder).parts)
    return Dashboard(href, fields["assignment"], fields.get("graded", ""), fields.get("summary", ""))


def find_dashboards(folder: Path) -> list[Dashboard]:
    """``folder/class.html`` and ``folder/*/class.html``, sorted by assignment then place."""
    folder = Path(folder)
    paths = [folder / "class.html", *sorted(folder.glob("*/class.html"))]
    found = [d for p in paths if p.is_file() and (d := read_dashboard(p, folder)) is not None]
    return sorted(found, key=lambda d: (d.assignment, d.href))


def index_html(dashboards: list[Dashboard], title: str = "Grading results") -> str:
    body = [f"<h1>{escape(title)}</h1>"]
    if not dashboards:
        body.append("<p>No class dashboard here yet: run <code>autograder grade-batch</code>.</p>")
    else:
        items = "".join(f"<li><a href='{escape(d.href, quote=True)}'>{escape(d.assignment)}: class dashboard</a>"
                        f" <span class='muted'>{escape(d.summary)}"
                        f"{'; graded ' + escape(d.graded) if d.graded else ''}</span></li>" for d in dashboards)
        body.append(f"<ul class='index'>{items}</ul>")
    return page(title, body)


def write_index(folder: Path, title: str = "Grading results") -> Path:
    """Write ``folder/index.html`` over the dashboards found there; return its path."""
    path = Path(folder) / "index.html"
    write_atomic(path, index_html(find_dashboards(folder), title))
    return path


def file_uri(path: Path) -> str:
    """The ``file://`` address to open in a browser."""
    return Path(path).resolve().as_uri()
