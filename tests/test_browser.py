"""Issue 11: the pages in a real browser, at a desktop's 1400 px and a phone's 400 px.

Playwright drives Debian's chromium (/usr/bin/chromium, installed by `make chromium`, a
prerequisite of `make test`); nothing is downloaded at run time. A small class is graded
once with the real sandbox (a right answer, two catalogued mistakes, a crash, a hang, a
broken notebook, a name full of HTML), then its dashboard, index and feedback pages are
opened from the file system: links resolve, nothing overflows horizontally, the heatmaps
and charts render with a label, text has at least 4.5:1 contrast, the roster sorts.

Set AUTOGRADER_SCREENSHOTS=DIR to keep a PNG of every page opened.
"""
import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from autograder.batch import run_batch
from autograder.class_results import feedback_path

pytestmark = pytest.mark.slow  # a batch with the real sandbox, then a browser

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402

HOSTILE = "<img src=x onerror=alert(1)> o'neil & co"  # a file name may hold any of it but "/"
CLASS = {  # student -> a sample-class archetype (examples/make_class.py) of ps2
    "ada": "correct", "ben": "scale_by_dk:scaled_dot_product_attention", "cy": "mask_wrong_direction:causal_mask",
    "dee": "crashed:fused_self_attention", "eve": "timeout:attention_shapes", "fay": "malformed",
    "gus": "prints_a_lot:scaled_dot_product_attention", HOSTILE: "correct",
}
WIDTHS = (1400, 400)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    (base / "class").mkdir()
    for student, archetype in CLASS.items():
        (base / "class" / f"{student}.ipynb").write_text(make_class.archetype_notebook("ps2", archetype),
                                                          encoding="utf-8")
    result = run_batch(base / "class", "ps2", base / "out", jobs=2, timeout=2, progress=False)
    assert result.failures == []
    return base / "out"


@pytest.fixture(scope="module")
def browser():
    # `make test` installs both; a browser test that cannot run fails, it is never skipped.
    assert CHROMIUM.exists(), "no /usr/bin/chromium: run `make chromium` (apt-get install -y chromium)"
    from playwright import sync_api
    with sync_api.sync_playwright() as p:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []  # chromium's own sandbox refuses root
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield b
        b.close()


def open_page(browser, path: Path, width: int):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"loaded {r.url}") if not r.url.startswith(("file:", "data:"))
            else None)
    page.goto(path.resolve().as_uri())
    shots = os.environ.get("AUTOGRADER_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / f"{path.parent.name}-{path.stem}-{width}.png"), full_page=True)
    return page, errors


def check_layout(page, width: int) -> None:
    """Nothing wider than the window, every chart and heatmap drawn, labelled, inside it."""
    overflow = page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= width, f"the page is {overflow} px wide in a {width} px window"
    svgs = page.evaluate("""Array.from(document.querySelectorAll('svg')).map(s => {
        const r = s.getBoundingClientRect();
        return {w: r.width, h: r.height, right: r.right, label: s.getAttribute('aria-label') || '',
                title: !!s.querySelector('title'), role: s.getAttribute('role'),
                rects: s.querySelectorAll('rect').length};
    })""")
    for s in svgs:
        assert s["w"] > 50 and s["h"] > 50 and s["right"] <= width + 1, s
        assert s["role"] == "img" and s["label"] and s["title"], s
        assert s["rects"] > 0, s


def check_links(page) -> None:
    links = page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    assert links
    for href in links:
        url = urlparse(href)
        assert url.scheme == "file", href  # nothing leaves the file system
        assert Path(unquote(url.path)).is_file(), href
        if url.fragment:
            assert page.evaluate("id => !!document.getElementById(id)", unquote(url.fragment)), href


CONTRAST = """() => {
    const lum = c => { const v = c.match(/[\\d.]+/g).slice(0, 3).map(x => { x = x / 255;
        return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
        return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
    const bg = el => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor;
        if (c && !c.startsWith('rgba(0, 0, 0, 0)') && c !== 'transparent') return c; } return 'rgb(255, 255, 255)'; };
    const low = [];
    for (const el of document.body.querySelectorAll('*')) {
        if (el.closest('svg')) continue;
        const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
        if (!own) continue;
        const a = lum(getComputedStyle(el).color), b = lum(bg(el));
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        if (ratio < 4.5) low.push(el.tagName + ' ' + ratio.toFixed(2) + ' ' + el.textContent.slice(0, 40));
    }
    return low;
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_the_dashboard_renders_links_and_fits(graded, browser, width):
    page, errors = open_page(browser, graded / "class.html", width)
    check_layout(page, width)
    check_links(page)
    assert page.evaluate(CONTRAST) == []
    assert page.locator("svg.heatmap").count() >= 2  # the class's weights, beside the expected ones
    names = page.locator("#roster-table tbody td:first-child").all_inner_texts()
    assert len(names) == len(CLASS) and HOSTILE in names  # shown as text, not as markup
    for who in ("fay", "dee", "eve"):  # unreadable, crashed, hung: by name at the top
        assert page.locator("#broken").get_by_role("link", name=who).count() >= 1
    assert errors == []
    page.close()


def test_the_roster_sorts_by_score(graded, browser):
    page, _ = open_page(browser, graded / "class.html", 1400)
    score = page.locator("#roster-table th button", has_text="score")
    score.click()
    up = [float(x) for x in page.locator("#roster-table tbody td:nth-child(2)").all_inner_texts()]
    assert up == sorted(up)
    score.click()
    down = [float(x) for x in page.locator("#roster-table tbody td:nth-child(2)").all_inner_texts()]
    assert down == sorted(up, reverse=True)
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_index_links_the_dashboard(graded, browser, width):
    page, errors = open_page(browser, graded / "index.html", width)
    check_layout(page, width)
    check_links(page)
    page.get_by_role("link", name="ps2: class dashboard").click()
    assert page.title() == "ps2: class dashboard" and errors == []
    page.close()


@pytest.mark.parametrize("student", ["ben", "dee", "fay", "gus", HOSTILE])
@pytest.mark.parametrize("width", WIDTHS)
def test_a_feedback_page_renders_and_fits(graded, browser, student, width):
    page, errors = open_page(browser, feedback_path(graded, student), width)
    check_layout(page, width)
    if page.locator("a[href]").count():
        check_links(page)
    assert page.evaluate(CONTRAST) == []
    assert page.evaluate("document.documentElement.lang") == "en"
    verdict = page.locator(".verdict").bounding_box()
    first = page.locator("section[id^=ex-]").first.bounding_box()
    assert verdict["y"] < first["y"]  # the verdict opens the page
    if student == "ben":
        maps = page.locator("svg.heatmap")
        assert maps.count() >= 2
        widths = [maps.nth(i).bounding_box()["width"] for i in range(maps.count())]
        # An attention map is big enough to read, even on a phone; a 3 x 3 mask is smaller,
        # but its cells are as large (44 px).
        assert max(widths) >= min(250, width - 40) and min(widths) >= 120, widths
    if student == "gus":  # what the code printed: last, collapsed
        details = page.locator("details")
        assert details.count() == 1 and details.get_attribute("open") is None
    assert errors == []
    page.close()
