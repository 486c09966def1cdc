"""A class folder's submissions, found: nbgrader's submitted/<student>/<assignment>/*.ipynb,
or a flat folder of <student>.py / <student>.ipynb. Nothing is opened here (intake.py reads
one submission)."""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .assignments import ASSIGNMENTS

SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Entry:
    student: str  # the name on disk; not UTF-8 bytes are surrogate-escaped (os.fsdecode)
    path: Path  # what to grade; it may turn out to be a link, a pipe or missing: load() says so
    base: Path | None = None  # the class folder: no link below it is followed on the way to path


class ClassFolderError(ValueError):
    """The class folder is missing, unreadable or holds no submission, or a student named to
    grade has no submission in it: nothing to grade."""


def class_folder(root: Path, assignment: str) -> Path:
    """The folder that holds the students: ``root``, or its nbgrader ``submitted/``."""
    root = Path(root)
    sub = root / "submitted"
    if not sub.is_dir() or sub.is_symlink():
        return root
    if (root / "nbgrader_config.py").is_file():
        return sub  # nbgrader's course folder
    # A student may be called "submitted": then submitted/<assignment>/ is their work and
    # root is already the class folder (descending would silently drop the class).
    return root if (sub / assignment).is_dir() else sub


def discover(root: Path, assignment: str) -> list[Entry]:
    """Submissions under ``root``: nbgrader's submitted/<student>/<assignment>/*.ipynb
    (``root`` may be the course folder or its submitted/), or a flat folder of
    <student>.py / <student>.ipynb. Sorted by student; a notebook wins over a .py.

    Nothing is followed through a link and nothing is opened here; anything that looks like
    a submission is listed, whatever it is (a link, a pipe, a device, a folder), so that
    grading gives that student a reason instead of leaving them out. Raises
    ClassFolderError when the folder cannot be listed."""
    folder = class_folder(root, assignment)
    try:
        children = sorted(os.scandir(folder), key=lambda d: d.name)
    except OSError as e:
        raise ClassFolderError(f"cannot read the class folder {folder}: {e.strerror}") from None
    nbgrader: dict[str, Entry] = {}
    flat: dict[str, Entry] = {}
    for child in children:
        name, path = child.name, Path(child.path)
        if name.startswith("."):
            continue
        try:
            is_dir, is_link = child.is_dir(follow_symlinks=False), child.is_symlink()
        except OSError:
            continue
        if is_dir and _lexists(path / assignment):
            nbgrader[name] = Entry(name, path / assignment / _notebook_in(path / assignment, assignment), folder)
        elif is_link and not name.endswith(SUFFIXES) and os.path.isdir(path / assignment):
            # A student folder that is a link (to anywhere): listed, so the student is told; the
            # stat above looks at the target but reads nothing; load() refuses to go through it.
            nbgrader[name] = Entry(name, path / assignment / f"{assignment}.ipynb", folder)
        elif name.endswith(SUFFIXES) and (not is_dir or not _lexists(path / assignment)):
            stem, suffix = os.path.splitext(name)
            if stem and (stem not in flat or suffix == ".ipynb"):
                flat[stem] = Entry(stem, path, folder)
    found = {**flat, **nbgrader}
    return [found[s] for s in sorted(found)]


def _lexists(path: Path) -> bool:
    return os.path.lexists(path)


def _notebook_in(folder: Path, assignment: str) -> str:
    """The notebook to grade in submitted/<student>/<assignment>/: <assignment>.ipynb if
    there, else the first notebook; a link or a file that is not a folder is left to load()."""
    preferred = f"{assignment}.ipynb"
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return preferred
        notebooks = sorted(n for n in os.listdir(folder) if n.endswith(".ipynb") and not n.startswith("."))
    except OSError:
        return preferred
    return preferred if preferred in notebooks or not notebooks else notebooks[0]


def nothing_to_grade(root: Path, assignment: str) -> str:
    """Why ``discover`` found nothing, in one line: where it looked, what it expected, and the
    problem sets the folder does hold submissions of."""
    folder = class_folder(root, assignment)
    found: set[str] = set()
    try:
        for child in os.scandir(folder):
            if child.is_dir(follow_symlinks=False):
                try:
                    found.update(n for n in os.listdir(child.path) if n in ASSIGNMENTS)
                except OSError:
                    pass
    except OSError:
        pass
    hint = f"; it holds {', '.join(sorted(found))} submissions: is --assignment right?" if found else ""
    return (f"no submissions for {assignment} in {folder} "
            f"(expected <student>/{assignment}/*.ipynb or <student>.py|.ipynb){hint}")
