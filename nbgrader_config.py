# The repository root is this course's nbgrader directory.
c = get_config()  # noqa: F821  (nbgrader injects get_config)

c.CourseDirectory.course_id = "attention"
# Released student notebooks live in assignments/ (nbgrader's default is release/).
c.CourseDirectory.release_directory = "assignments"

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.enforce_metadata = True

# Feedback must never show hidden tests or their inputs (nbgrader issues #917, #1363).
c.ClearHiddenTests.enforce_metadata = True
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "autograder.nbgrader_bridge.ScrubGradedTracebacks",  # tracebacks quote the hidden lines too
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

c.Exchange.root = "exchange"
