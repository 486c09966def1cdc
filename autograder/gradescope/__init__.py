"""Grading on Gradescope: the autograder zip, and what runs inside Gradescope's container.

    bundle.py     ``autograder gradescope ASSIGNMENT --out FILE.zip``: setup.sh, run_autograder,
                  the package's wheel, the reference solutions and mistakes, pinned requirements
    upload.py     what a student uploaded: the one file to grade, or why there is none
    container.py  facts of the container: the student (submission_metadata.json), its memory
    spec.py       Results as Gradescope's results.json, to its specification
    run.py        the entry point run_autograder calls, once per submission

Gradescope's specification: github.com/gradescope/autograder_samples, docs/specs.md.
"""
