"""The nbgrader configuration every course shares: no kernel at autograde (the engine grades
each notebook in its sandbox), the engine's feedback steps, and the course's own folder as
the grader's course. A course's nbgrader_config.py is two lines::

    from autograder.nbgrader_setup import configure
    configure(get_config(), "attention")  # the course id
"""
from __future__ import annotations

import os
from pathlib import Path


FEEDBACK_TEMPLATE = "autograder_feedback"


def feedback_template_dirs() -> list[str]:
    """Where nbconvert finds the feedback template: this package's, then nbgrader's (which it
    extends), found without importing nbgrader."""
    import importlib.util

    nbgrader = importlib.util.find_spec("nbgrader")
    if nbgrader is None or not nbgrader.submodule_search_locations:
        return [str(Path(__file__).parent / "report" / "nbconvert")]
    theirs = Path(list(nbgrader.submodule_search_locations)[0]) / "server_extensions" / "formgrader" / "templates"
    return [str(Path(__file__).parent / "report" / "nbconvert"), str(theirs)]


def configure(c, course_id: str, folder: str | None = None) -> None:
    """Configure nbgrader (``c``, its config object) to grade for the course in ``folder``:
    by default the folder nbgrader runs in when it is a course (holds course.toml); an nbgrader
    folder kept apart from its course names the course's folder here."""
    from . import course

    c.CourseDirectory.course_id = course_id
    # nbgrader's preprocessors grade for this course, and so do the processes they start.
    chosen = Path(folder) if folder else Path(os.getcwd())
    if folder or (chosen / course.COURSE_FILE).is_file():
        course.use(chosen)
    # Released student notebooks live in assignments/ (nbgrader's default is release/).
    c.CourseDirectory.release_directory = "assignments"

    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    c.ClearSolutions.enforce_metadata = True

    # Autograde runs no student code outside the grader's sandbox: no Jupyter kernel (nbgrader's
    # Execute, which would run the notebook as this user, next to gradebook.db, source/ and every
    # submission, is left out on purpose). GradeWithEngine grades the notebook in the sandbox;
    # RecordEngineGrades writes the engine's feedback and points into the grade cells (and a note
    # into every other code cell) just before SaveAutoGrades reads them. GradeWithEngine refuses
    # to grade when either list holds a step not known to run no code (nbgrader_bridge.SAFE_STEPS).
    # nbgrader's own list, without Execute, with the two steps added, and without its closing
    # CheckCellMetadata: the sanitizing pass just checked this same notebook's cell metadata, and
    # nothing since changes metadata (no kernel; our steps write outputs only). That check costs
    # more than the engine's grading (nbgrader validates each cell against a schema it re-checks
    # every time). docs/nbgrader.md.
    c.Autograde.autograde_preprocessors = [
        "autograder.nbgrader_bridge.GradeWithEngine",
        "nbgrader.preprocessors.IgnorePattern",
        "nbconvert.preprocessors.ClearMetadataPreprocessor",
        "nbgrader.preprocessors.LimitOutput",
        "autograder.nbgrader_bridge.RecordEngineGrades",
        "nbgrader.preprocessors.SaveAutoGrades",
        "autograder.nbgrader_bridge.RecordEngineComment",
        "nbgrader.preprocessors.AssignLatePenalties",
    ]
    # A notebook nbgrader cannot read is autograded as the released one in its place, graded
    # from the submitted file (0, the reason in its comment), not left "needs autograding".
    c.Autograde.exporter_class = "autograder.nbgrader_bridge.ReadOrStandIn"

    # Feedback must never show hidden tests or their inputs (nbgrader issues #917, #1363).
    c.ClearHiddenTests.enforce_metadata = True
    c.GenerateFeedback.preprocessors = [
        "nbgrader.preprocessors.GetGrades",
        "nbgrader.preprocessors.ClearHiddenTests",
        "autograder.nbgrader_bridge.ScrubGradedTracebacks",  # a traceback quotes its cell's source
        "autograder.nbgrader_bridge.RenderMathOffline",  # the notebook's LaTeX as MathML
        "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    ]
    # The feedback page is nbgrader's own template with nothing loaded at view time (no MathJax
    # from a CDN: the math is MathML already) and the engine's report wrapping its long lines
    # (report/nbconvert/autograder_feedback). Set on GenerateFeedback's exporter alone, so
    # formgrader's pages keep their own template.
    c.GenerateFeedback.HTMLExporter.template_name = FEEDBACK_TEMPLATE
    c.GenerateFeedback.HTMLExporter.extra_template_basedirs = feedback_template_dirs()

    # Exchange.root is not set here: instructors and students must read the same absolute path,
    # and students never read the course's file. It goes once in a file both read
    # (/etc/jupyter/nbgrader_config.py); nbgrader's default is /srv/nbgrader/exchange.
    # A relative one here would name another folder for everyone who runs nbgrader elsewhere.
