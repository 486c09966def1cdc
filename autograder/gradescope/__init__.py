"""Grading on Gradescope: the autograder zip, and what runs inside Gradescope's container.

    bundle.py     ``autograder gradescope ASSIGNMENT --out FILE.zip``: setup.sh, run_autograder,
                  the package's wheel, the reference solutions and mistakes, pinned requirements
    upload.py     what a student uploaded: the one file to grade, or why there is none
    container.py  facts of the container: the student (submission_metadata.json), its memory
    spec.py       Results as Gradescope's results.json, to its specification
    run.py        the entry point run_autograder calls, once per submission

Gradescope's specification: github.com/gradescope/autograder_samples, docs/specs.md.
"""

# Each test's visibility on Gradescope (--visibility; None keeps each test's own). Here, not in
# spec.py: run.py's command line offers them before it launches the sandbox, and spec.py
# imports the results model, which that launch should not wait for.
VISIBILITIES = ("visible", "after_due_date", "hidden")
