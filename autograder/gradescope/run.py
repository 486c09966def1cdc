"""The entry point Gradescope's ``run_autograder`` calls once per submission, as root:

    python -m autograder.gradescope.run --root /autograder --assignment ps1 [--visibility V] [--timeout S]

It finds what was uploaded in ``ROOT/submission``, the student in
``ROOT/submission_metadata.json`` and the memory in the container's cgroup, grades in the
sandbox (at the ``uid`` level where Docker withholds CAP_SYS_ADMIN, as on Gradescope) and
writes ``ROOT/results/results.json``, whatever was uploaded. Only the grader's own failure
writes no results: Gradescope then shows the submission as an autograder error (not the
student's fault, regraded with "Regrade"), and the cause goes to standard output, which
Gradescope shows the instructor.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import course
from ..errors import GraderError
from ..sandbox import launch
from . import VISIBILITIES, container

# Only what launching the sandbox needs is imported above (grade_upload launches it first, and
# each import before that is one more millisecond every submission waits); the rest after it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..results import Results

DEFAULT_ROOT = "/autograder"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autograder.gradescope.run")
    p.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", DEFAULT_ROOT)))
    p.add_argument("--assignment", required=True)
    p.add_argument("--visibility", choices=VISIBILITIES, default=None)
    p.add_argument("--timeout", type=float, default=None, help="seconds per exercise (default: the grader's, 10)")
    args = p.parse_args(argv)
    results_file = args.root / "results" / "results.json"
    try:
        text = grade_upload(args.root, args.assignment, visibility=args.visibility, timeout=args.timeout)
    except Exception as e:  # noqa: BLE001 - the grader's own failure, whatever it is: never a grade
        from ..names import one_line

        results_file.unlink(missing_ok=True)
        print(f"autograder: the grader failed, not the submission; no results were written, so Gradescope "
              f"shows an autograder error (regrade once the cause is fixed): {type(e).__name__}: "
              f"{one_line(str(e), 500)}")
        return 1
    from ..results import write_atomic

    write_atomic(results_file, text + "\n")
    return 0


def _use_the_zips_course(folder: Path) -> None:
    """Grade for the zip's course (its declarations, its solutions/). run_autograder starts a
    process of its own, which has chosen no course yet; a process that already grades for one
    (the tests') may grade a zip of the same course, with the zip's solutions."""
    if course.chosen() is None:
        course.use(folder)
        return
    name = course.read_manifest(folder)["name"]
    if name != course.current().name:
        raise GraderError(f"this process grades for course {course.current().name}, not the zip's {name}")
    os.environ["AUTOGRADER_SOLUTIONS"] = str(folder / "solutions")


def grade_upload(root: Path, assignment: str, *, visibility: str | None, timeout: float | None = None) -> str:
    """The results.json text for the upload in ``root``; raises only for the grader's failure.
    The sandbox is launched first, before this process reads the upload and imports numpy and
    the course's checks: both start at once, on a container's two cores."""
    root = Path(root)
    submission, metadata, results = root / "submission", root / "submission_metadata.json", root / "results"
    solutions = root / "source" / "solutions"
    if not solutions.is_dir() or not (root / "source" / course.COURSE_FILE).is_file():
        raise GraderError(f"no course with reference solutions at {root / 'source'}: was setup.sh run from the zip?")
    _use_the_zips_course(root / "source")
    results.mkdir(parents=True, exist_ok=True)
    _private(root / "source", submission, results, metadata)
    limits = {"memory": container.submission_memory(container.memory_limit())}  # the sandbox's Limits
    launched = launch.zygote([root / "source", submission, results, metadata], limits, ahead=False)
    from ..sandbox import Sandbox

    # The zygote starts while the upload is read and its checks are drawn. Where there is
    # nothing to grade it has started for nothing, and is ended with the sandbox.
    with Sandbox(launched=launched) as sandbox:
        graded, found = _grade_upload(root, assignment, submission, metadata, sandbox, timeout)
    from . import spec

    doc = spec.to_gradescope(graded, visibility=visibility, found=found.line)
    if found.path is not None:
        doc["extra_data"]["memory_mib"] = limits["memory"] >> 20
    return spec.dumps(doc)


def _grade_upload(root: Path, assignment: str, submission: Path, metadata: Path, sandbox, timeout: float | None):
    """The upload's Results (every check failed with the reason when there is nothing to
    grade), and what upload.find said of it."""
    from . import upload

    student = container.student(metadata)
    found = upload.find(submission, assignment)
    if found.path is None:
        from ..grade import ungraded

        graded = ungraded(assignment, student, found.line)
        graded.problems = []  # the line is the output, once
        return graded, found
    _spared_by_the_oom_killer()  # after the zygote started: it and the children do not inherit this
    from ..grade import DEFAULT_TIMEOUT  # numpy and the checks: while the zygote starts

    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    return _grade_file(found.path, submission, assignment, student, sandbox, timeout), found


def _grade_file(path: Path, base: Path, assignment: str, student: str, sandbox, timeout: float) -> Results:
    """Grade exactly the bytes read (no link followed), as grade-batch does, under a name that
    says their kind (``HW.IPYNB`` is a notebook)."""
    import dataclasses

    from ..graded import grade_snapshot
    from ..intake import snapshot

    snap = snapshot(path, base)
    snap = dataclasses.replace(snap, name=path.stem + path.suffix.lower())
    return grade_snapshot(snap, assignment, sandbox=sandbox, student=student, timeout=timeout)[0]


def _spared_by_the_oom_killer() -> None:
    """Where the container runs out of memory between two looks of the uid level's watch, the
    kernel kills a submission's process (or the zygote: a grader failure, not a grade), never
    the process that writes results.json."""
    try:
        Path("/proc/self/oom_score_adj").write_text("-1000")
    except OSError:
        pass  # not root, or no /proc: the watch alone


def _private(*paths: Path) -> None:
    """Readable by root only: the reference, the upload, the results and the metadata (emails),
    whatever else a submission's uid may be allowed to read."""
    for p in paths:
        if p.exists() and not p.is_symlink():
            os.chmod(p, 0o700 if p.is_dir() else 0o600)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # once per container: its interpreter's teardown would only add to the student's wait
