"""What formgrader reads besides the grades, written for ``grade-batch --gradebook`` in an
nbgrader course folder.

formgrader (nbgrader's ``NbGraderAPI``, which its REST handlers call) counts a submission as
autograded only when ``autograded/<student>/<assignment>/`` exists and the gradebook's
submission timestamp equals the one in ``submitted/<student>/<assignment>/timestamp.txt``; it
lists a notebook only when ``autograded/.../<notebook>.ipynb`` exists; nbgrader's late penalty
(``AssignLatePenalties``) is computed from that timestamp. ``nbgrader autograde`` writes all
of these; ``grade-batch --gradebook`` writes the grades in bulk (nbgrader_bridge.GradebookWriter)
and, through ``AutogradedWriter``, the rest with nbgrader's own code: the timestamp read as
nbgrader reads it (``parse_utc``) and stored with ``Gradebook.update_or_create_submission``,
the autograded notebook made from the submission by nbgrader's own sanitizing steps and
filled with the engine's report (as ``nbgrader autograde`` fills it), and the late penalty set
by nbgrader's ``AssignLatePenalties`` under the course's configuration.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .results import write_atomic

# nbgrader's sanitizing steps (Autograde.sanitize_preprocessors, less CheckCellMetadata, which
# checks what OverwriteCells has just copied from the gradebook and costs more than the rest).
SANITIZE = ("ClearOutput", "DeduplicateIds", "OverwriteKernelspec", "OverwriteCells")
TIMESTAMP = "timestamp.txt"  # nbgrader's name, in submitted/ and autograded/


def nbgrader_course(class_folder: Path) -> Path | None:
    """The nbgrader course folder whose ``submitted/`` is ``class_folder`` (None: the class is
    not in an nbgrader course, and formgrader has nothing to read)."""
    folder = Path(class_folder).absolute()
    if folder.name == "submitted" and (folder.parent / "nbgrader_config.py").is_file():
        return folder.parent
    return None


class AutogradedWriter:
    """Writes, per student graded into the gradebook, what formgrader needs besides the grades
    (see the module's docstring). Every file is read as the grader reads submissions (no link
    followed, a regular file only); the notebook is written only when the submission's bytes
    are those the results file says were graded."""

    def __init__(self, course: Path, assignment: str, db_url: str, out: Path):
        from traitlets.config.loader import PyFileConfigLoader

        from .nbgrader_bridge import _import_nbgrader_api

        _import_nbgrader_api()  # nbformat's schema, cheaply (see there)
        from nbgrader.coursedir import CourseDirectory

        self.course, self.assignment, self.db_url, self.out = Path(course), assignment, db_url, Path(out)
        self.config = PyFileConfigLoader("nbgrader_config.py", path=str(self.course)).load_config()
        self.coursedir = CourseDirectory(config=self.config, root=str(self.course))
        self.notebook = assignment  # this course has one notebook per assignment, named after it

    def _folder(self, step: str, student: str) -> Path:
        return Path(self.coursedir.format_path(step, student, self.assignment))

    def write(self, student: str) -> None:
        """Record ``student``'s submission timestamp, autograded notebook and late penalty."""
        from nbgrader.api import Gradebook
        from nbgrader.utils import parse_utc

        from .class_results import results_path
        from .intake import snapshot
        from .nbgrader_bridge import comment_unreadable, fill_engine_outputs, verdict_of
        from .results import from_json
        from .submission import Unreadable, read_submission

        submitted = self._folder(self.coursedir.submitted_directory, student)
        base = submitted.parent.parent
        try:
            stamp_text = read_submission(submitted / TIMESTAMP, base)
        except (Unreadable, FileNotFoundError):
            stamp_text = None
        timestamp = parse_utc(stamp_text.decode("utf-8").strip()) if stamp_text is not None else None
        with Gradebook(self.db_url) as gb:
            gb.update_or_create_submission(self.assignment, student, timestamp=timestamp)

        results = from_json(results_path(self.out, student).read_text(encoding="utf-8"))
        snap = snapshot(submitted / f"{self.notebook}.ipynb", base)
        if results.extra_data.get("graded", {}).get("submission") != snap.digest:
            self.withdraw(student)  # it changed since it was graded: the next run regrades it
            return
        nb, read = self._notebook(snap.data)
        resources = {"nbgrader": {"student": student, "assignment": self.assignment, "notebook": self.notebook,
                                  "db_url": self.db_url}}
        nb = self._sanitized(nb, resources)
        verdict = verdict_of(results, self.assignment)
        fill_engine_outputs(nb, verdict)
        if not read:
            comment_unreadable(nb, resources["nbgrader"], verdict)
        self._late_penalty(nb, resources)

        import nbformat

        dest = self._folder(self.coursedir.autograded_directory, student)
        dest.mkdir(parents=True, exist_ok=True)
        write_atomic(dest / f"{self.notebook}.ipynb", nbformat.writes(nb))
        if stamp_text is not None:
            write_atomic(dest / TIMESTAMP, stamp_text.decode("utf-8"))
        else:
            (dest / TIMESTAMP).unlink(missing_ok=True)

    def withdraw(self, student: str) -> None:
        """The grader failed on ``student``: no autograded copy stands (as nbgrader removes its own)."""
        shutil.rmtree(self._folder(self.coursedir.autograded_directory, student), ignore_errors=True)

    def _notebook(self, data: bytes | None):
        """The submission as a notebook and True; the released one in its place and False when
        it cannot be read (as nbgrader autograde does here: ReadOrStandIn), its zeros and reason
        the engine's."""
        import nbformat

        if data is not None:
            try:
                nb = nbformat.reads(data.decode("utf-8"), as_version=4)
                nbformat.validate(nb)
                return nb, True
            except Exception:  # noqa: BLE001 - whatever nbformat refuses: the engine said why
                pass
        released = Path(self.coursedir.format_path(self.coursedir.release_directory, ".", self.assignment))
        return nbformat.read(os.fspath(released / f"{self.notebook}.ipynb"), as_version=4), False

    def _sanitized(self, nb, resources):
        import nbgrader.preprocessors as steps

        for name in SANITIZE:
            nb, resources = getattr(steps, name)(config=self.config).preprocess(nb, resources)
        return nb

    def _late_penalty(self, nb, resources) -> None:
        from nbgrader.preprocessors import AssignLatePenalties

        AssignLatePenalties(config=self.config).preprocess(nb, resources)
