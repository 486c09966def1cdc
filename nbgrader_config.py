# The repository root is this course's nbgrader directory.
c = get_config()  # noqa: F821  (nbgrader injects get_config)

c.CourseDirectory.course_id = "attention"
# Released student notebooks live in assignments/ (nbgrader's default is release/).
c.CourseDirectory.release_directory = "assignments"

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.enforce_metadata = True

# Autograde takes every grade cell's points from the sandboxed engine, never from the
# student's kernel (where any cell can rebind, patch or print whatever it likes):
# GradeWithEngine grades the notebook before the kernel runs, RecordEngineGrades writes the
# engine's feedback and points into the grade cells just before SaveAutoGrades reads them.
# nbgrader's own list, with the two steps added.
c.Autograde.autograde_preprocessors = [
    "autograder.nbgrader_bridge.GradeWithEngine",
    "nbgrader.preprocessors.Execute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "autograder.nbgrader_bridge.RecordEngineGrades",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Feedback must never show hidden tests or their inputs (nbgrader issues #917, #1363).
c.ClearHiddenTests.enforce_metadata = True
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "autograder.nbgrader_bridge.ScrubGradedTracebacks",  # a traceback quotes its cell's source
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

c.Exchange.root = "exchange"
