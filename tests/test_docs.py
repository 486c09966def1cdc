"""The README and docs/ as a newcomer walks them: every link leads to a file of this
repository, and nothing points at the course team's private notes."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _id(p: Path) -> str:
    return str(p.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_link_leads_to_a_file_of_the_repository(page):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # an address outside, or an anchor of the page itself
        path = (page.parent / target.split("#")[0]).resolve()
        if not (path.is_relative_to(ROOT) and path.exists()):
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_no_page_points_outside_the_repository(page):
    assert "../shared" not in page.read_text(encoding="utf-8")


def test_the_readme_is_a_first_page():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 150
