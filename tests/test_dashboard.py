"""Issue 11: the class dashboard, the index and the student's feedback page, as HTML.

Fast: results are made here (no sandbox); tests/test_browser.py opens real pages in chromium.
"""
import dataclasses
import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import course
from autograder.checks import compare, failed, returned
from autograder.class_results import Failure, StudentRow, summarize, summarize_class
from autograder.crashes import NO_RESULT, Ended, clause
from autograder.grade import grade, to_test_result, ungraded
from autograder.misconceptions import OWN, WORDS, Audience, explain, explanations
from autograder.names import file_stem
from autograder.report.dashboard import Marks, Seen, Student, mistake_meaning, mistakes_made, write_dashboard
from autograder.report.feedback import feedback_html, heatmap_svg, markdown, printed_once
from autograder.report.index import find_dashboards, write_index
from autograder.report.outcomes import OUTCOMES
from autograder.report.render import environment
from autograder.results import RESTARTED, CellEnd, CellProblem, Kind, Results, from_json
from autograder.results import TestResult as Check
from autograder.sandbox import ExerciseRun, SandboxResult
from autograder.sandbox.frames import CallOutcome
from autograder.spec import Fail, Spec

ROOT = Path(__file__).resolve().parent.parent
CORRECT = ROOT / "tests" / "submissions" / "ps2" / "correct_straightforward.py"
SDPA = "scaled_dot_product_attention"
FOR_EXERCISE = course.current().explanations.FOR_EXERCISE
WEIGHTS = [[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.2, 0.3, 0.5]]
FLAT = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.33, 0.33, 0.34]]
HOSTILE = "<img src=x onerror=alert(1)>\n"
FLAT_VS_WEIGHTS = compare(np.array(FLAT), np.array(WEIGHTS), f"{SDPA}'s weights", 1e-6, 1e-6)


def t(exercise, title, ok, output="", mistake=None, heat=None, points=1):
    tags = [f"exercise:{exercise}"] + ([f"misconception:{mistake}"] if mistake else [])
    extra = {"heatmap": {"expected": heat[0], "got": heat[1]}} if heat else {}
    return Check(f"{exercise}: {title}", points if ok else 0, points, "passed" if ok else "failed",
                      output, "visible", tags, extra)


def judged(exercise: str, title: str, fail: Fail) -> Check:
    """A failed check as the engine records it."""
    return to_test_result(exercise, Spec(title, 1), fail.verdict)


def raising(func: str, message: str, where: str = "line 3") -> Fail:
    try:
        returned(CallOutcome.raised(message.split(":")[0], message, where), func)
    except Fail as f:
        return f
    raise AssertionError("returned() let a raised call through")


def dk_results(printed="", restarts=()) -> Results:
    """scale_by_dk in five checks of one exercise, as the engine writes it: the explanation
    (with this input's numbers) above the difference, on every check."""
    tests = [t("causal_mask", "T = 3", True)]
    for k, d_k in enumerate((16, 16, 4, 8, 16)):
        tests.append(judged(SDPA, f"check {k}", failed(mistake="scale_by_dk", func=SDPA, numbers={"d_k": d_k},
                                                       comparison=FLAT_VS_WEIGHTS,
                                                       heatmap=(WEIGHTS, FLAT) if k == 1 else None)))
    tests.append(judged("attention_shapes", "sizes", raising("attention_shapes", "ValueError: bad")))
    problems = ["notebook cell 17 raised NameError: name 'x' is not defined"] if printed else []
    return Results(sum(x.score for x in tests), sum(x.max_score for x in tests), 0.1, problems, tests,
                   {"isolation": "full"}, printed=printed, restarts=restarts)


class StubSandbox:
    """Answers like a sandbox: each exercise named ends as ``runs`` says (given its number of
    calls), every other sends nothing back; the cells' problems and the printing as given."""

    def __init__(self, runs, problems=(), printed=""):
        self.runs, self.problems, self.printed = runs, list(problems), (printed,)

    def run(self, cells, exercises, timeout, memory):
        runs = {name: self.runs[name](len(calls)) if name in self.runs else ExerciseRun("crashed", detail="x")
                for name, calls in exercises}
        return SandboxResult(runs, self.problems, self.printed, 0.1)


def graded(runs, *, path=CORRECT, problems=(), printed="", timeout=3.0) -> Results:
    """The engine's results for the exercises of ``runs`` alone, from a StubSandbox."""
    results = grade(path, "ps2", sandbox=StubSandbox(runs, problems, printed), student="ada", timeout=timeout)
    results.tests = [x for x in results.tests if x.exercise in runs]
    results.score, results.max_score = sum(x.score for x in results.tests), sum(x.max_score for x in results.tests)
    return results


def broken_notebook(folder: Path) -> Path:
    path = folder / "ps2.ipynb"
    path.write_text('{"cells": [\n\n  {oops\n')
    return path


def text(html: str) -> str:
    """What a reader sees of a piece of a page: its text, the markup gone, the characters read back."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def section(page: str, exercise: str) -> str:
    start = page.index(f"id='ex-{exercise}'")
    end = page.find("<section", start)
    return page[start:end if end > 0 else None]


# ---------------------------------------------------------------- the feedback page

def test_the_page_has_a_language_and_a_viewport_and_no_script():
    page = feedback_html("ada", "ps2", dk_results())
    assert "<html lang='en'>" in page and "name='viewport'" in page
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_the_verdict_comes_first_with_one_line_per_failed_exercise():
    page = feedback_html("ada", "ps2", dk_results())
    verdict = page[page.index("class='verdict'"):page.index("</section>")]
    assert f"{6 - 5 + 0:g} / 7" in verdict or "1 / 7" in verdict
    lines = re.findall(r"<li>.*?</li>", verdict)
    assert len(lines) == 2  # scaled_dot_product_attention and attention_shapes; causal_mask passed
    assert "scale by dk" in lines[0] and "too flat" in lines[0]
    assert "attention_shapes" in lines[1] and "raised an error" in lines[1]
    assert page.index("class='verdict'") < page.index("id='ex-causal_mask'")


def test_each_diagnosis_is_shown_once_per_exercise():
    page = feedback_html("ada", "ps2", dk_results())
    sdpa = section(page, SDPA)
    assert sdpa.count("too flat") == 1
    assert "d_k = 16" in sdpa  # the numbers of the first check that quoted them


def test_the_difference_is_shown_from_the_arrays_compared_and_no_bare_cell_number():
    page = feedback_html("ada", "ps2", dk_results(printed="hello\n"))
    sdpa = section(page, SDPA)
    assert text(sdpa).count(FLAT_VS_WEIGHTS.headline()) == 1  # the same difference is shown once
    tables = re.findall(r"<table class='array'><caption>([^<]*)</caption>(.*?)</table>", sdpa)
    assert [caption for caption, _ in tables] == ["yours", "expected"]  # the student's, then the expected
    for (_, rows), want in zip(tables, (FLAT_VS_WEIGHTS.got, FLAT_VS_WEIGHTS.expected), strict=True):
        assert re.findall(r"<td>([^<]*)</td>", rows) == [f"{v:.3f}" for r in want for v in r]
    assert not re.search(r"(?<!notebook )cell 17", page)


def test_printed_output_goes_last_collapsed_and_once_after_a_restart():
    printed = "epoch 1\nepoch 2\n" * 2
    page = feedback_html("ada", "ps2", dk_results(printed=printed, restarts=(len(printed) // 2,)))
    assert page.count("epoch 1") == 1 and "ran again after a restart" in page
    details = page.index("<details>")
    assert details > page.rindex("</section>") and "epoch 1" in page[details:]
    assert printed_once(["a\nb\n"]) == ("a\nb\n", False)


def test_a_student_who_prints_the_restart_line_has_it_shown_as_printed():
    printed = f"epoch 1\n{RESTARTED}\nepoch 1\n"
    page = feedback_html("ada", "ps2", dk_results(printed=printed))
    shown = page[page.index("<details>"):]
    assert shown.count("epoch 1") == 2 and RESTARTED in text(shown) and "ran again" not in shown


def test_a_submission_nothing_could_run_says_so_once(tmp_path):
    nothing = grade(broken_notebook(tmp_path), "ps2", sandbox=None, student="zed")  # no code: no sandbox asked
    assert {x.kind for x in nothing.tests} == {Kind.NOT_RUN}
    page = feedback_html("zed", "ps2", nothing)
    assert page.count("could be run") == 1 and page.count("broken JSON") == 1
    assert "If Jupyter cannot open it" in page  # advice that works when Jupyter cannot open it
    page = feedback_html("zed", "ps2", ungraded("ps2", "zed", nothing.problems[0]))
    assert page.count("broken JSON") == 1 and page.count("could be run") == 1


def crashing(ended: Ended):
    """An exercise whose process ended so, as the sandbox reports it."""
    return lambda calls: ExerciseRun("crashed", detail=f"{clause(ended)}, so {NO_RESULT}", ended=ended)


def test_a_crash_says_which_kind():
    results = graded({"fused_self_attention": crashing(Ended("memory", 9, 2 << 30))})
    assert len(results.tests) > 2 and {x.kind for x in results.tests} == {Kind.CRASHED}
    page = feedback_html("ada", "ps2", results)
    assert "used more memory than the limit (2048 MiB)" in page and "grows without bound" in page
    assert page.count("used more memory than the limit") == 2  # what to fix, and the first check (not every one)


def verdict_badges(page: str) -> list[str]:
    verdict = page[page.index("class='verdict'"):page.index("</section>")]
    return re.findall(r"<span class='tag bad'>([^<]*)</span>", verdict)


# Each way a process ends (crashes.Ended's kinds) has its own badge, none of them an error raised.
ENDINGS = {Ended("exit", 1): "exited", Ended("memory", 9, 2 << 30): "killed: out of memory",
           Ended("cpu", 24): "killed: out of CPU time", Ended("signal", 15): "killed by a signal",
           Ended("crash", 11): "crashed", Ended("unknown"): "stopped"}


@pytest.mark.parametrize("ended", ENDINGS, ids=[e.kind for e in ENDINGS])
def test_the_badge_of_a_process_that_ended_follows_how_it_ended(ended):
    page = feedback_html("ada", "ps2", graded({"fused_self_attention": crashing(ended)}))
    assert verdict_badges(page) == [ENDINGS[ended]]


def test_a_hang_has_its_own_badge():
    page = feedback_html("ada", "ps2", graded({"fused_self_attention": lambda calls: ExerciseRun("timeout")}))
    assert "ran out of time" in page[page.index("class='verdict'"):page.index("</section>")]


def test_an_error_raised_is_not_called_a_crash():
    page = feedback_html("ada", "ps2", dk_results())
    assert verdict_badges(page) == ["raised an error"]


def test_the_students_heatmap_is_beside_the_expected_one_with_axes_and_a_scale():
    page = feedback_html("ada", "ps2", dk_results())
    sdpa = section(page, SDPA)
    assert sdpa.index("your weights") < sdpa.index("expected weights")  # the text's order: yours, expected
    svg = heatmap_svg(WEIGHTS, "w")
    assert 'role="img"' in svg and "aria-label=" in svg and "<title>" in svg
    assert "query position" in svg and "key position" in svg
    assert 'fill="#ffffff"' in svg  # 0 is white, not grey
    assert svg.count("<rect") >= 9 + 11  # the cells and the colour scale
    cell = int(re.search(r'<rect x="\d+" y="\d+" width="(\d+)"', svg).group(1))
    assert cell >= 40  # big enough to read (the SVG scales down on a phone)
    assert int(re.search(r'width="(\d+)"', heatmap_svg([[0.1] * 12] * 12, "w")).group(1)) >= 300


def test_a_causal_mask_heatmap_is_drawn_when_results_carry_one():
    allowed = [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    test = t("causal_mask", "T = 3", False, "causal_mask(3) is wrong.", "mask_wrong_direction",
             (allowed, [list(r) for r in zip(*allowed, strict=True)]))
    page = feedback_html("ada", "ps2", Results(0, 1, 0.1, [], [test]))
    assert section(page, "causal_mask").count("<svg") == 2 and "may attend" in page


@pytest.mark.parametrize("name", [HOSTILE, "<script>alert(1)</script>", "jos\udce9"])
def test_every_name_and_text_is_escaped(name):
    r = dk_results(printed="<script>x</script>\n")
    r.tests[1].finding = dataclasses.replace(r.tests[1].finding, detail="<b>bold</b>")
    r.tests[-1].output = "<b>" + r.tests[-1].output  # a message that is all there is
    page = feedback_html(name, "ps2", r)
    assert "<img" not in page and "<script" not in page and "<b>" not in page


def test_markdown_is_rendered_after_escaping():
    assert markdown("use `axis=axis` and *where* <b>") == "use <code>axis=axis</code> and <em>where</em> &lt;b&gt;"


# ---------------------------------------------------------------- the dashboard

def funcs_of(mistake: str) -> list[str]:
    return ["softmax", SDPA, *(f for m, f in FOR_EXERCISE if m == mistake)]


@pytest.mark.parametrize("mistake", sorted(set(explanations()) - set(OWN)))
def test_explanations_on_the_instructors_page_speak_about_the_student(mistake):
    for func in funcs_of(mistake):
        text = mistake_meaning(mistake, func)
        assert text and not re.search(r"\byou(r)?\b", text, re.I), text


@pytest.mark.parametrize("mistake", sorted(explanations()))
def test_explanations_to_the_student_speak_to_them(mistake):
    for func in funcs_of(mistake):
        assert not re.search(r"the student|The fix:", explain(mistake, func=func)), mistake


@pytest.mark.parametrize("verb, agreed", [("return", "returns"), ("subtract", "subtracts"), ("divide", "divides"),
                                          ("pass", "passes"), ("try", "tries"), ("have", "has"), ("are", "is")])
def test_a_verb_named_with_the_reader_agrees_with_them(verb, agreed):
    template = f"{{you:{verb}}} it; {{You:{verb}}} it"
    assert template.format(**WORDS[Audience.INSTRUCTOR]) == f"the student {agreed} it; The student {agreed} it"
    assert template.format(**WORDS[Audience.STUDENT]) == f"you {verb} it; You {verb} it"


def test_the_instructors_words_come_from_the_template_not_from_its_text(monkeypatch):
    """Code an explanation quotes keeps its words: nothing rewrites a "you" the template did
    not mark as the reader (a rewrite of the student's text turned `you` into `the student`)."""
    words = course.current().explanations.EXPLANATIONS
    monkeypatch.setitem(words, "scale_by_dk", "{Your} loop names its counter `you`. {fix}Draw every key once.")
    about = mistake_meaning("scale_by_dk", SDPA)
    assert about == "The student's loop names its counter `you`. The fix: Draw every key once."
    assert explain("scale_by_dk", func=SDPA) == "Your loop names its counter `you`. Draw every key once."


def class_results(tmp_path) -> dict[str, Results]:
    """Six students' results: right, mistaken, hung, crashed, unreadable."""
    hung = graded({SDPA: lambda calls: ExerciseRun("timeout")})
    died = graded({SDPA: crashing(Ended("exit", 1))})
    right = Results(7, 7, 0.1, [], [t(SDPA, "w", True, heat=(WEIGHTS, WEIGHTS), points=7)])
    unreadable = grade(broken_notebook(tmp_path), "ps2", sandbox=None, student="zed")
    return {"ada": right, "ben": dk_results(), HOSTILE: dk_results(), "hal": hung, "cy": died, "zed": unreadable}


@pytest.fixture
def graded_class(tmp_path):
    """An OUTDIR as a batch leaves it: results and pages of five students, one not graded."""
    out = tmp_path / "out"
    (out / "feedback").mkdir(parents=True)
    students = class_results(tmp_path)
    rows = []
    for name, r in students.items():
        (out / f"{file_stem(name)}.json").write_text(r.to_json())
        (out / "feedback" / f"{file_stem(name)}.html").write_text(feedback_html(name, "ps2", r))
        rows.append(summarize(name, r))
    rows.sort(key=lambda r: r.student)
    summary = summarize_class("ps2", rows)
    index = write_dashboard(out, summary, rows, [Failure("gus", "the sandbox failed (no answer)")],
                            root=tmp_path / "class", timeout=3, jobs=2)
    return out, index


def test_what_a_worker_sends_the_dashboard_is_what_its_results_file_says(tmp_path):
    """grade-batch's workers send what the page keeps of each student (Seen) instead of the
    batch reading their files back: the two must agree, for every kind of results."""
    for name, r in class_results(tmp_path).items():
        sent, read = Seen.of(name, r), Seen.of(name, from_json(r.to_json()))
        assert sent == read, name
        assert sent.student.marks is not None and (sent.maps or name != "ada")


def test_the_dashboard_links_every_feedback_page_from_a_roster(graded_class):
    out, _ = graded_class
    page = (out / "class.html").read_text()
    roster = page[page.index("id='roster'"):]
    hrefs = re.findall(r"href='([^']+)'", roster)
    assert sorted(hrefs) == sorted(f"feedback/{quote(file_stem(s))}.html" for s in ["ada", "ben", HOSTILE, "hal",
                                                                                  "cy", "zed"])
    assert all((out / unquote(h)).is_file() for h in hrefs)
    assert "class='sortable'" in roster and "<button type='button'>score</button>" in roster
    assert roster.count("<tr>") == 1 + 7  # the header, six graded, gus not graded


def test_the_dashboard_lists_broken_submissions_by_name(graded_class):
    out, _ = graded_class
    page = (out / "class.html").read_text()
    broken = page[page.index("id='broken'"):page.index("<h2>Scores")]
    for heading, who in [("Could not be read", "zed"), ("Hung", "hal"), ("Crashed", "cy"), ("Not graded", "gus")]:
        part = broken[broken.index(heading):]
        assert who in part[:part.find("</ul>")], heading


def test_the_dashboard_says_who_made_each_mistake_in_which_exercise(graded_class):
    out, _ = graded_class
    page = (out / "class.html").read_text()
    row = next(r for r in page.split("class='mistake'") if "<code>scale_by_dk</code>" in r)
    assert "2 students (33%)" in row and f"<code>{SDPA}</code>" in row and "feedback/ben.html" in row
    assert "The student's attention weights are too flat" in text(row)
    assert not re.search(r"\byour?\b", row, re.I)


def test_the_dashboard_has_charts_a_class_heatmap_date_settings_and_version(graded_class):
    out, _ = graded_class
    page = (out / "class.html").read_text()
    assert "Score histogram" in page and "How each exercise went" in page
    assert "class average of the students" in page
    assert re.search(r"Graded \d{4}-\d\d-\d\d \d\d:\d\d UTC by autograder \S+", page)
    assert "3 s per exercise" in page and "worker processes" in page and "isolation" in page
    assert all('role="img"' in svg and "aria-label" in svg for svg in re.findall(r"<svg[^>]*>", page))


def test_the_dashboard_is_self_contained_and_escapes_names(graded_class):
    out, _ = graded_class
    page = (out / "class.html").read_text()
    assert "<img" not in page and page.count("<script") == 1  # the roster's sorter, inline
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", page) and "<link" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;\\n" in page  # readable, then escaped


def test_the_index_links_every_dashboard(graded_class, tmp_path):
    out, index = graded_class
    assert index == out / "index.html" and "class.html" in index.read_text()
    (tmp_path / "ps9").mkdir()
    (tmp_path / "ps9" / "class.html").write_text((out / "class.html").read_text().replace(
        "content='ps2'", "content='ps9'"))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "class.html").write_text("<p>not a dashboard</p>")
    page = write_index(tmp_path).read_text()
    assert [d.assignment for d in find_dashboards(tmp_path)] == ["ps2", "ps9"]
    assert "href='out/class.html'" in page and "href='ps9/class.html'" in page and "notes" not in page
    for href in re.findall(r"href='([^']+)'", page):
        assert (tmp_path / href).is_file()


def test_a_class_of_nobody_still_gets_a_dashboard(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    rows: list[StudentRow] = []
    write_dashboard(out, summarize_class("ps1", rows), rows, [Failure("ada", "the sandbox failed")])
    page = (out / "class.html").read_text()
    assert "ada" in page and "Not graded" in page


def test_a_cells_problem_is_tied_to_its_exercise_when_the_results_show_it(tmp_path):
    notebook = tmp_path / "ada.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "source": f"x{i} = {i}", "outputs": [], "execution_count": None}
        for i in range(10)]}))
    error = CallOutcome.raised("ValueError", "ValueError: bad shapes here", "notebook cell 4 line 2")
    results = graded({"attention_shapes": lambda calls: ExerciseRun("ok", (error,) * calls),
                      SDPA: lambda calls: ExerciseRun("timeout")}, path=notebook,
                     problems=[CellProblem(3, CellEnd.RAISED, "ValueError", "ValueError: bad shapes here"),
                               CellProblem(8, CellEnd.TIMEOUT, message="ran past the 3 s time limit")])
    page = feedback_html("ada", "ps2", results)
    assert "notebook cell 4 raised ValueError: bad shapes here (the error attention_shapes raises" in page
    assert f"notebook cell 9 ran past the 3 s time limit and was skipped ({SDPA} also ran past" in page


def test_a_statements_problem_in_a_py_file_is_tied_to_its_exercise_too():
    error = CallOutcome.raised("ValueError", "ValueError: bad shapes here", "line 9")
    results = graded({"attention_shapes": lambda calls: ExerciseRun("ok", (error,) * calls)},
                     problems=[CellProblem(2, CellEnd.RAISED, "ValueError", "ValueError: bad shapes here")])
    (line,) = results.problems
    assert line.startswith("line ") and f"{line} (the error attention_shapes raises" in feedback_html(
        "ada", "ps2", results)


def test_a_problem_that_only_reads_like_a_cells_is_tied_to_nothing():
    error = CallOutcome.raised("ValueError", "ValueError: bad shapes here", "line 9")
    results = graded({"attention_shapes": lambda calls: ExerciseRun("ok", (error,) * calls)})
    # not the sandbox's: no cell problem behind it
    results.problems = ["notebook cell 4 raised ValueError: bad shapes here"]
    assert "the error attention_shapes raises" not in feedback_html("ada", "ps2", results)


def test_the_dashboard_says_how_a_process_ended_not_that_it_raised_an_error(graded_class):
    out, _ = graded_class
    page = (out / "class.html").read_text()
    blocks = [r[:r.index("</div>")] for r in page.split("class='mistake'")[1:]]
    (block,) = [b for b in blocks if "feedback/cy.html" in b]  # cy's code called os._exit
    assert re.findall(r"<span class='tag bad'>([^<]*)</span>", block) == ["exited"]
    assert "ended the Python process" in text(block) and "raised an error" not in text(block)
    roster = page[page.index("id='roster'"):]
    row = next(r for r in roster.split("<tr>") if "feedback/cy.html" in r)
    assert ">exited</span>" in row


def test_each_sets_index_lists_every_set_graded_beside_it(graded_class, tmp_path):
    """A dashboard links its folder's index.html as the index of all sets: the set graded
    later (ps1 here) is listed in the earlier one's too; a folder that is no set's keeps its files."""
    out, _ = graded_class
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "class.html").write_text("<p>not a dashboard</p>")
    (notes / "index.html").write_text("mine")
    rows: list[StudentRow] = []
    write_dashboard(tmp_path / "ps1", summarize_class("ps1", rows), rows)
    for folder in (out, tmp_path / "ps1"):
        page = (folder / "index.html").read_text()
        hrefs = re.findall(r"href='([^']+)'", page)
        sets = sorted((folder / unquote(h)).resolve() for h in hrefs)
        assert sets == [(out / "class.html").resolve(), (tmp_path / "ps1" / "class.html").resolve()]
        assert "ps1: class dashboard" in page and "ps2: class dashboard" in page
    assert (notes / "index.html").read_text() == "mine"
    assert "href='index.html'>← all problem sets" in (out / "class.html").read_text()


# What the roster's template computed for a student's badges before Student.caught did.
ROSTER_CAUGHT = ('{{ (s.marks.mistakes | map(attribute="1") | reject("in", outcomes) | unique | sort)'
                 ' | join("\\n") }}')


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([SDPA, "softmax"]), st.one_of(
    st.sampled_from(sorted(OUTCOMES)), st.sampled_from(["mask_after_softmax", "Mask_After_Softmax", "b", "B_c"]),
    st.text(st.characters(min_codepoint=48, max_codepoint=0x24f), min_size=1, max_size=6))), max_size=8))
def test_a_students_catalogued_mistakes_are_what_the_roster_listed(mistakes):
    s = Student("s", Marks(0, {}, tuple(mistakes), "full"))
    listed = environment().from_string(ROSTER_CAUGHT).render(s=s, outcomes=OUTCOMES)
    assert s.caught == (unescape(listed).split("\n") if listed else [])


def listed_by_membership(graded: list[Student]) -> dict[str, dict[str, list[str]]]:
    """Who made which mistake where, each listed once by ``not in`` (how mistakes_made listed them)."""
    made: dict[str, dict[str, list[Student]]] = {}
    for s in graded:
        for e, m in s.marks.mistakes:
            who = made.setdefault(m, {}).setdefault(e, [])
            if s not in who:
                who.append(s)
    return {m: {e: [s.name for s in who] for e, who in where.items()} for m, where in made.items()}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from([SDPA, "softmax"]), st.sampled_from(["b", "c", "raised"])),
                         max_size=4), max_size=8))
def test_each_student_is_listed_once_under_each_mistake_they_made(mistakes):
    graded = [Student(f"s{i}", Marks(0, {}, tuple(ms), "full")) for i, ms in enumerate(mistakes)]
    assert {m.key: {e: [s.name for s in who] for e, who in m.where.items()} for m in mistakes_made(graded)} \
        == listed_by_membership(graded)
