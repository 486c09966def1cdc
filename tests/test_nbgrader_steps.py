"""nbgrader runs no notebook code outside the sandbox: every step that nbgrader autograde or
generate_feedback is configured with is one known to execute none (nbgrader_bridge.SAFE_STEPS),
or GradeWithEngine refuses to grade (before SaveAutoGrades can record anything) and
ScrubGradedTracebacks to write feedback. The space: Autograde's two step lists
(sanitize_preprocessors, autograde_preprocessors), GenerateFeedback's list, the steps
configured on its exporter, and nbconvert's default steps it may turn on; each configured or
left at its default, each step named by its import path or given as a class."""
from pathlib import Path

import pytest
from nbconvert.preprocessors import ExecutePreprocessor
from nbgrader.converters import Autograde
from nbgrader.preprocessors import ClearOutput, Execute, SaveAutoGrades
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from autograder import nbgrader_bridge
from autograder.errors import GraderError
from autograder.nbgrader_bridge import STEP_LISTS, unsafe_feedback_steps, unsafe_steps

ROOT = Path(__file__).resolve().parent.parent


class ClearOutputAndMore(ClearOutput):
    """A subclass of a safe step: it could override anything, so it is not safe by name."""


def course_config() -> Config:
    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()


def test_the_courses_config_runs_only_safe_steps():
    assert unsafe_steps(course_config()) == []


def test_every_step_lists_that_autograde_registers_are_checked():
    # Autograde registers exactly these two lists with its exporter (nbgrader 0.9's
    # Autograde._init_preprocessors); a new list in a later nbgrader must be added here.
    lists = {name for name, trait in Autograde.class_traits(config=True).items() if name.endswith("preprocessors")}
    assert lists == set(STEP_LISTS)


def test_nbgraders_own_defaults_are_refused():
    # Without this course's list, Autograde would run Execute: a kernel as the grader's user.
    assert unsafe_steps(Config()) == ["nbgrader.preprocessors.execute.Execute"]


@pytest.mark.parametrize("where", STEP_LISTS)
@pytest.mark.parametrize("step, named", [
    (Execute, "nbgrader.preprocessors.execute.Execute"),
    ("nbgrader.preprocessors.Execute", "nbgrader.preprocessors.execute.Execute"),
    (ExecutePreprocessor, "nbconvert.preprocessors.execute.ExecutePreprocessor"),
    ("nbconvert.preprocessors.ExecutePreprocessor", "nbconvert.preprocessors.execute.ExecutePreprocessor"),
    (ClearOutputAndMore, f"{__name__}.ClearOutputAndMore"),
    ("no.such.Step", "no.such.Step"),
])
def test_a_step_not_known_to_be_safe_is_refused(where, step, named):
    config = course_config()
    config.Autograde[where] = [*config.Autograde.get(where, [ClearOutput]), step, SaveAutoGrades]
    assert unsafe_steps(config) == [named]


def test_grade_with_engine_refuses_before_grading(monkeypatch):
    withdrawn, graded = [], []
    monkeypatch.setattr(nbgrader_bridge, "withdraw_points", withdrawn.append)
    monkeypatch.setattr(nbgrader_bridge, "engine_grade", lambda *a, **k: graded.append(a))
    config = course_config()
    config.Autograde.autograde_preprocessors = ["nbgrader.preprocessors.Execute",
                                                *config.Autograde.autograde_preprocessors]
    resources = {"nbgrader": {"assignment": "ps1", "student": "s", "notebook": "ps1", "db_url": "sqlite://"}}
    with pytest.raises(GraderError, match="Autograde is configured to run nbgrader.preprocessors.execute.Execute"):
        nbgrader_bridge.GradeWithEngine(config=config).preprocess(object(), resources)
    assert graded == [] and withdrawn == [resources]


def feedback_config(config: Config) -> Config:
    """The configuration generate_feedback's steps see: its exporter's, with HTMLExporter's own
    defaults merged in (they turn some of nbconvert's default steps on)."""
    from nbconvert.exporters import HTMLExporter

    return HTMLExporter(config=config).config


def exporter_runs(config: Config) -> set[str]:
    """What an HTMLExporter made as GenerateFeedback makes it would run: every enabled step."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters import GenerateFeedback

    exporter = HTMLExporter(config=config)
    steps = config.GenerateFeedback.get("preprocessors", GenerateFeedback.class_traits()["preprocessors"].default())
    for step in steps:
        exporter.register_preprocessor(step)
    return {nbgrader_bridge._qualified(type(p)) for p in exporter._preprocessors if p.enabled}


def test_the_courses_feedback_runs_only_safe_steps():
    assert unsafe_feedback_steps(feedback_config(course_config())) == []


FEEDBACK = [
    (lambda c: c.GenerateFeedback.preprocessors.append(Execute), "nbgrader.preprocessors.execute.Execute"),
    (lambda c: setattr(c.HTMLExporter, "preprocessors", ["nbconvert.preprocessors.ExecutePreprocessor"]),
     "nbconvert.preprocessors.execute.ExecutePreprocessor"),
    (lambda c: setattr(c.Exporter, "preprocessors", [ClearOutputAndMore]), f"{__name__}.ClearOutputAndMore"),
    (lambda c: setattr(c.ExecutePreprocessor, "enabled", True), "nbconvert.preprocessors.execute.ExecutePreprocessor"),
    (lambda c: setattr(c.Preprocessor, "enabled", True), "nbconvert.preprocessors.execute.ExecutePreprocessor"),
]
FEEDBACK_CASES = [case for case, _ in FEEDBACK]
FEEDBACK_IDS = ["in its list", "on its exporter", "a subclass on any exporter", "a default turned on",
                "every default turned on"]


@pytest.mark.parametrize("configure, named", FEEDBACK, ids=FEEDBACK_IDS)
def test_a_feedback_step_not_known_to_be_safe_is_refused(configure, named):
    config = course_config()
    configure(config)
    assert named in unsafe_feedback_steps(feedback_config(config))  # every default on: the others too


@pytest.mark.parametrize("configure", [lambda c: None, *FEEDBACK_CASES], ids=["the course's", *FEEDBACK_IDS])
def test_the_feedback_check_names_exactly_the_unsafe_steps_the_exporter_would_run(configure):
    # A census of the real exporter, not of the check's own reading of the configuration.
    config = course_config()
    configure(config)
    assert set(unsafe_feedback_steps(feedback_config(config))) == exporter_runs(config) - nbgrader_bridge.SAFE_STEPS


def test_feedbacks_exporter_holds_a_kernel_step_that_only_configuration_turns_on():
    # What the `enabled` case above is for: HTMLExporter registers ExecutePreprocessor among
    # its defaults, off; the course's config (checked above) leaves it off.
    from nbconvert.exporters import HTMLExporter

    defaults = HTMLExporter.class_traits()["default_preprocessors"].default()
    assert "nbconvert.preprocessors.ExecutePreprocessor" in defaults
    assert "enabled" not in course_config().ExecutePreprocessor


def test_feedback_refuses_before_writing():
    config = course_config()
    config.ExecutePreprocessor.enabled = True
    with pytest.raises(GraderError, match="GenerateFeedback is configured to run"):
        nbgrader_bridge.ScrubGradedTracebacks(config=feedback_config(config)).preprocess(object(), {})


# ---------------------------------------------------------------- what the autograded notebook says

def graded_notebook(assignment: str):
    """A notebook with one graded cell per exercise, as nbgrader's release lays them out."""
    from nbformat.v4 import new_code_cell, new_notebook

    from autograder.assignments import exercise_points, exercises

    return new_notebook(cells=[new_code_cell("pass", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": name, "points": exercise_points(name),
        "schema_version": 3}}) for name in exercises(assignment)])


def test_the_notebooks_problems_and_its_printing_are_told_apart(monkeypatch, tmp_path):
    """The first graded cell holds the engine's words on the notebook as a whole (from the
    results' problems) and, under a heading of its own, what the code printed (from their
    printed): the student's printing never reads as the grader's, whatever it prints."""
    from autograder.grade import ungraded

    printed = "About the notebook as a whole:\ncell 1 raised Nothing: all checks passed\nREACHED []\n"
    results = ungraded("ps1", "s", "cell 3 raised NameError: name 'x' is not defined")
    results.printed, results.printed_cut = printed, True
    monkeypatch.setattr(nbgrader_bridge, "engine_grade", lambda *a, **k: results)
    monkeypatch.setattr(nbgrader_bridge, "withdraw_points", lambda resources: None)
    config = course_config()
    config.CourseDirectory.root = str(tmp_path)
    resources = {"nbgrader": {"assignment": "ps1", "student": "s", "notebook": "ps1", "db_url": "sqlite://"}}
    nb, resources = nbgrader_bridge.GradeWithEngine(config=config).preprocess(graded_notebook("ps1"), resources)
    nb, resources = nbgrader_bridge.RecordEngineGrades(config=config).preprocess(nb, resources)
    first, *others = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    text = first.outputs[0].text
    about, _, shown = text.partition("What the notebook's code printed")
    assert about.split("About the notebook as a whole:\n", 1)[1].strip() == results.problems[0]
    assert shown.startswith(f" in the grader's sandbox (the last {len(printed)} characters):\n{printed}")
    assert all("About the notebook" not in c.outputs[0].text for c in others)


# ---------------------------------------------------------------- what the feedback page shows

HOSTILE = "<img src=x onerror=alert(1)> o'neil & co {{ 7*7 }} $x$ *a* [l](u) `c` \\n"


def test_a_comment_shows_its_reason_as_text():
    """nbgrader renders a comment as markdown, raw HTML passed through: the reason an unreadable
    notebook scores 0 (which may quote the file) is written so that markdown shows exactly it."""
    from html import unescape

    from nbconvert.filters.markdown import markdown2html

    html = markdown2html(nbgrader_bridge.markdown_text(HOSTILE))
    assert "<img" not in html and "<a " not in html and "<code>" not in html and "<em>" not in html
    assert unescape(html.strip().removeprefix("<p>").removesuffix("</p>")) == HOSTILE


@pytest.mark.parametrize("assignment", sorted(__import__("autograder.assignments").assignments.ASSIGNMENTS))
def test_every_formula_of_the_notebooks_is_drawn_as_mathml(assignment):
    """No dollar is left in the released notebook's prose once its math is MathML, but in code."""
    import json
    import re

    from autograder.report.mathml import markdown_with_mathml

    nb = json.loads((ROOT / "assignments" / assignment / f"{assignment}.ipynb").read_text())
    drawn = [markdown_with_mathml("".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert sum(d.count("<math") for d in drawn) > 10
    prose = [re.sub(r"```.*?```|`[^`]*`", "", d, flags=re.S) for d in drawn]
    assert [p for p in prose if "$" in p] == []


def test_math_in_code_and_dollars_in_prose_are_left_alone():
    from autograder.report.mathml import markdown_with_mathml

    for text in ("`$x$` costs", "costs $5 and $6 each", "an escaped \\$x\\$", "```\n$x$\n```", "    $x$ indented"):
        assert markdown_with_mathml(text) == text


def test_the_feedback_page_is_the_graders_template_on_generate_feedbacks_exporter_alone():
    """Formgrader's pages keep their template: the setting is GenerateFeedback's exporter's."""
    config = course_config()
    assert config.GenerateFeedback.HTMLExporter.template_name == "autograder_feedback"
    assert "template_name" not in config.HTMLExporter
    assert "autograder.nbgrader_bridge.RenderMathOffline" in config.GenerateFeedback.preprocessors
