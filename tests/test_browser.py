"""Issues 11 and 23: the pages in a real browser, at a desktop's 1400 px and a phone's 400 px.

Playwright drives Debian's chromium (/usr/bin/chromium, installed by `make chromium`, a
prerequisite of `make test`); nothing is downloaded at run time. A small class is graded
once with the real sandbox (a right answer, two catalogued mistakes, a crash, a hang, a
broken notebook, a name full of HTML that also prints and raises it), then its dashboard,
index and feedback pages are opened from the file system: links resolve, nothing overflows
horizontally and no text is clipped, the heatmaps and charts render with a label, text has
at least 4.5:1 contrast, the roster sorts, hostile text shows as text. Beside a copy of it,
a second set's dashboard is written from results made here (no sandbox), and nbgrader's
feedback page is made from a notebook the engine's report fills (no nbgrader loop).

Set AUTOGRADER_SCREENSHOTS=DIR to keep a PNG of every page opened.
"""
import json
import os
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pytest

from autograder.batch import run_batch
from autograder.class_results import feedback_path, summarize, summarize_class

pytestmark = pytest.mark.slow  # a batch with the real sandbox, then a browser

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402

# A file name may hold any of it but "/"; the student's code prints it and raises it too. A
# template that evaluated its values would show 49.
HOSTILE = "<img src=x onerror=alert(1)> o'neil & co {{ 7*7 }}"
CLASS = {  # student -> a sample-class archetype (examples/make_class.py) of ps2
    "ada": "correct", "ben": "scale_by_dk:scaled_dot_product_attention", "cy": "mask_wrong_direction:causal_mask",
    "dee": "crashed:fused_self_attention", "eve": "timeout:attention_shapes", "fay": "malformed",
    "gus": "prints_a_lot:scaled_dot_product_attention", HOSTILE: "correct",
}
WIDTHS = (1400, 400)


def hostile_cells(notebook: str) -> str:
    """The notebook with two cells more at its end: one prints HOSTILE, one raises it."""
    nb = json.loads(notebook)
    nb["cells"] += [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": code}
                    for code in (f"print({HOSTILE!r})", f"raise ValueError({HOSTILE!r})")]
    return json.dumps(nb)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    (base / "class").mkdir()
    for student, archetype in CLASS.items():
        text = make_class.archetype_notebook("ps2", archetype)
        (base / "class" / f"{student}.ipynb").write_text(hostile_cells(text) if student == HOSTILE else text,
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
    page.on("dialog", lambda d: (errors.append(f"dialog {d.message}"), d.dismiss()))
    page.goto(path.resolve().as_uri())
    shots = os.environ.get("AUTOGRADER_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / f"{path.parent.name}-{path.stem}-{width}.png"), full_page=True)
    return page, errors


# Text a reader cannot see all of: an SVG's text that reaches past the SVG's box (which clips
# it), and any element that hides or scrolls away part of what it holds, but for a `.scroll`
# wrapper that lets a wide table (the roster) scroll inside itself. The arrays a check
# compares are never scrolled away: they wrap instead.
CLIPPED = """() => {
    const out = [];
    for (const svg of document.querySelectorAll('svg')) {
        const box = svg.getBoundingClientRect();
        for (const t of svg.querySelectorAll('text')) {
            const r = t.getBoundingClientRect();
            if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
                out.push('svg text ' + t.textContent);
        }
    }
    for (const el of document.body.querySelectorAll('*')) {
        if (el.closest('svg') || getComputedStyle(el).overflowX === 'visible') continue;
        if (el.scrollWidth <= el.clientWidth + 1) continue;
        if (el.matches('.scroll') && !el.closest('.arrays')) continue;
        out.push(el.tagName + '.' + el.className + ' ' + el.textContent.slice(0, 60));
    }
    return out;
}"""


def check_layout(page, width: int) -> None:
    """Nothing wider than the window, no text clipped, every chart and heatmap drawn, labelled, inside it."""
    overflow = page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= width, f"the page is {overflow} px wide in a {width} px window"
    assert page.evaluate(CLIPPED) == []
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


# ---------------------------------------------------------------- hostile text, on every page

@pytest.mark.parametrize("width", WIDTHS)
def test_hostile_text_shows_as_text_on_every_page(graded, browser, width):
    """A name, what the code printed and the error it raised, all HOSTILE, are read as text on
    each page that shows them: no element made of them, no script run, no template evaluated."""
    for path in (graded / "class.html", graded / "index.html", feedback_path(graded, HOSTILE)):
        page, errors = open_page(browser, path, width)
        assert page.locator("img").count() == 0 and errors == [], path
        shown = page.evaluate("document.body.innerText")
        assert "49" not in re.findall(r"\S+", shown), path
        if path.name != "index.html":  # the index names sets, not students
            assert HOSTILE in shown, path
        page.close()
    page, _ = open_page(browser, feedback_path(graded, HOSTILE), width)
    page.locator("details summary").click()
    text = page.evaluate("document.body.innerText")
    assert f"feedback for {HOSTILE}" in text  # the name
    assert f"raised ValueError: {HOSTILE}" in text  # the error its cell raised
    assert page.locator("details pre").inner_text().strip() == HOSTILE  # what it printed
    page.close()


# ---------------------------------------------------------------- the reviewer's defects (issue 23)

def histogram_bins(page) -> list[tuple[str, int]]:
    titles = page.locator("svg.histogram rect title").evaluate_all("ts => ts.map(t => t.textContent)")
    return [(m.group(1), int(m.group(2))) for m in (re.fullmatch(r"(.+): (\d+) students?", t) for t in titles)]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_histogram_bins_are_whole_points_and_its_counts_read_right(graded, browser, width):
    page, _ = open_page(browser, graded / "class.html", width)
    bins = histogram_bins(page)
    edges = [re.fullmatch(r"(\S+) to under (\S+) points", what).groups() for what, _ in bins[:-1]]
    assert [float(a) for a, _ in edges] == [0.0] + [float(b) for _, b in edges[:-1]]  # contiguous from 0
    assert all(float(e).is_integer() for pair in edges for e in pair)  # whole points
    max_score = float(re.search(r"full marks \((\S+) points\)", bins[-1][0]).group(1))
    assert float(edges[-1][1]) == max_score
    assert sum(n for _, n in bins) == len(CLASS)
    labels = " ".join(page.locator("svg").evaluate_all(
        "ss => ss.map(s => s.textContent + ' ' + s.getAttribute('aria-label'))"))
    shown = page.evaluate("document.body.innerText") + labels
    assert not re.search(r"\b1 students\b", shown) and re.search(r"\b1 student\b", shown)
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_process_that_exited_wears_its_own_badge(graded, browser, width):
    """dee's fused_self_attention calls os._exit: "exited", on the feedback page and the dashboard, never
    "raised an error"."""
    page, _ = open_page(browser, feedback_path(graded, "dee"), width)
    assert page.locator(".verdict .tag.bad").all_inner_texts() == ["exited"]
    page.close()
    page, _ = open_page(browser, graded / "class.html", width)
    block = page.locator(".mistake", has=page.get_by_role("link", name="dee", exact=True))
    assert block.locator(".tag").all_inner_texts() == ["exited"]
    assert "raised an error" not in page.evaluate("document.body.innerText")  # nobody in this class raised one
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_arrays_compared_are_all_in_view(graded, browser, width):
    """ben's checks show his rows beside the expected ones: both whole, inside the window, with
    nothing scrolled away (they stand one above the other on a phone)."""
    page, _ = open_page(browser, feedback_path(graded, "ben"), width)
    boxes = page.locator("table.array").evaluate_all("""ts => ts.map(t => {
        const r = t.getBoundingClientRect(), box = t.parentElement;
        return {caption: t.caption.textContent, right: r.right, scrolls: box.scrollWidth > box.clientWidth};
    })""")
    assert {b["caption"].split(" ")[0] for b in boxes} == {"yours", "expected"}
    assert all(b["right"] <= width and not b["scrolls"] for b in boxes), boxes
    page.close()


def visible_outcomes(name: str, func):
    """The engine's results of the visible checks of exercise ``name`` on ``func``, run here."""
    from autograder.checks import run_judge
    from autograder.grade import to_test_result
    from autograder.sandbox import call_one, frames
    from autograder.selfcheck import visible_checks

    tests = []
    for check in visible_checks(name):
        outcomes = frames.through_wire([call_one(func, c.args, c.kwargs, c.echo) for c in check.calls])
        tests.append(to_test_result(name, check.spec, run_judge(check, outcomes, None)))
    return tests


def wired_attention(X, W_Q, W_K):
    """Right but for its third output: the scores it returns are already scaled."""
    Q, K = X @ W_Q, X @ W_K
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return weights @ X, weights, scores


@pytest.fixture(scope="module")
def beside(graded, tmp_path_factory):
    """A copy of the graded class's folder as ``ps2``, and beside it a ``ps1`` dashboard of one
    student whose wired_attention returns scaled scores (its visible checks run here, no sandbox)."""
    from autograder.report.dashboard import write_dashboard
    from autograder.report.feedback import feedback_html
    from autograder.results import Results

    base = tmp_path_factory.mktemp("sets")
    shutil.copytree(graded, base / "ps2")
    tests = visible_outcomes("wired_attention", wired_attention)
    results = Results(sum(t.score for t in tests), sum(t.max_score for t in tests), 0.1, [], tests)
    out = base / "ps1"
    (out / "feedback").mkdir(parents=True)
    (out / "ada.json").write_text(results.to_json())
    feedback_path(out, "ada").write_text(feedback_html("ada", "ps1", results))
    rows = [summarize("ada", results)]
    write_dashboard(out, summarize_class("ps1", rows), rows)
    return base


@pytest.mark.parametrize("width", WIDTHS)
def test_a_dashboard_links_the_index_of_every_set(beside, browser, width):
    page, errors = open_page(browser, beside / "ps2" / "class.html", width)
    page.get_by_role("link", name="all problem sets").click()
    check_layout(page, width)
    check_links(page)
    for a in ("ps1", "ps2"):  # the set graded later is listed in the earlier one's index too
        assert page.get_by_role("link", name=f"{a}: class dashboard").count() == 1
    assert errors == []
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_words_say_which_value_is_expected(beside, browser, width):
    page, _ = open_page(browser, feedback_path(beside / "ps1", "ada"), width)
    check_layout(page, width)
    (said,) = [t for t in page.locator(".detail p.why").all_inner_texts() if "scores (unscaled" in t]
    theirs, _, expected = said.partition(" Expected: ")
    assert expected == "bank on river is 1.62." and "bank on river" not in theirs
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_dashboard_speaks_of_the_student_in_the_third_person(beside, browser, width):
    page, _ = open_page(browser, beside / "ps1" / "class.html", width)
    check_layout(page, width)
    about = " ".join(page.locator(".mistake p").all_inner_texts())
    assert "The scores the student returns are already divided" in about
    verbs = re.findall(r"\b[Tt]he student (\w+)", about)
    assert verbs and all(re.fullmatch(r"\w+(s|ed)", v) for v in verbs), verbs
    page.close()


# ---------------------------------------------------------------- nbgrader's own feedback page

@pytest.fixture(scope="module")
def nbgrader_feedback(tmp_path_factory) -> Path:
    """What `nbgrader generate_feedback` makes of a notebook the engine's report fills: the
    released ps2 with the report (a diagnosis of one long unbroken line) in its graded cells,
    through the feedback step that draws the math and nbconvert's exporter as GenerateFeedback
    configures it under the course's nbgrader_config.py."""
    import nbformat
    from nbconvert.exporters import HTMLExporter
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.assignments import ASSIGNMENTS, exercise_points
    from autograder.nbgrader_bridge import RenderMathOffline, Verdict, fill_engine_outputs

    base = tmp_path_factory.mktemp("nbgrader-feedback")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    feedback = GenerateFeedback(coursedir=CourseDirectory(root=str(base), config=config), config=config)
    exporter = HTMLExporter(parent=feedback, config=feedback.config)
    exporter.register_preprocessor(CSSHTMLHeaderPreprocessor(), enabled=True)
    nb = nbformat.read(ROOT / "assignments" / "ps2" / "ps2.ipynb", as_version=4)
    names = ASSIGNMENTS["ps2"]
    long_line = "softmax(" + "Q@K.T/sqrt(d_k)" * 40 + ")"
    fill_engine_outputs(nb, Verdict({e: 0.0 for e in names}, {e: float(exercise_points(e)) for e in names},
                                    {e: f"The grader's checks of {e}: 0 points\n  FAIL  {long_line}\n" for e in names},
                                    "", ()))
    for cell in nb.cells:  # what GetGrades reads from the gradebook
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader["score"] = 0.0
    nb, resources = RenderMathOffline().preprocess(nb, {"nbgrader": {"notebook": "ps2", "score": 0,
                                                                     "max_score": 36, "late_penalty": 0}})
    html, _ = exporter.from_notebook_node(nb, resources)
    path = base / "ps2.html"
    path.write_text(html, encoding="utf-8")
    return path


@pytest.mark.parametrize("width", WIDTHS)
def test_nbgrader_feedback_wraps_the_diagnosis_and_draws_math_offline(nbgrader_feedback, browser, width):
    page, errors = open_page(browser, nbgrader_feedback, width)
    assert errors == []  # nothing loaded at view time: no MathJax from a CDN
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    reports = page.locator("pre", has_text="The grader's checks of").evaluate_all("""ps => ps.map(p => {
        const r = p.getBoundingClientRect();
        return {right: r.right, scrolls: p.scrollWidth > p.clientWidth};
    })""")
    assert reports and all(r["right"] <= width and not r["scrolls"] for r in reports), reports
    assert page.locator("math").count() > 10  # the notebook's LaTeX, drawn
    prose = " ".join(page.locator(".text_cell_render").all_inner_texts())
    assert "\\sqrt" not in prose and not re.search(r"\$[^$\s]", prose)  # no LaTeX left raw
    page.close()
