"""A course: the folder the engine grades for, found once per process, and what the engine
reads from it. The engine knows no chapter; everything a chapter says lives in its course.

A course's root holds ``course.toml`` (``name``, ``package``) and:

    <package>/                 its declarations, which ship to students (no answers):
        __init__.py            EXERCISES: the exercise modules, in the order the notebooks teach
                               them; PRELOAD (optional): modules a submission may import
        exercises/<name>.py    one per exercise: ``EXERCISE = Exercise(...)``, its checks
        explanations.py        EXPLANATIONS, FOR_EXERCISE (optional), fields(numbers)
        worked_examples.json   the answers on the visible inputs (`autograder notebooks` makes it)
    solutions/                 the reference answers (<set>.py) and mistakes.py: never shipped
    templates/<set>.py         the notebooks' templates
    source/, assignments/      nbgrader's source and released notebooks

Which course: the one ``use`` names (every command's ``--course DIR``), else
``$AUTOGRADER_COURSE``, else the one the current directory lies in, else the course installed
with the package (a student's install: its visible checks, no solutions).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from functools import cached_property
from pathlib import Path
from types import ModuleType

from .errors import GraderError

# What this module imports, `autograder grade` imports before it launches the sandbox (it
# needs the course to know what to hide), so every import here is on the student's wait:
# typing's TYPE_CHECKING without typing, and Course without dataclasses (inspect, ast...).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .exercise import Exercise

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 (Gradescope's default image)
    import tomli as tomllib

COURSE_FILE = "course.toml"
ENV = "AUTOGRADER_COURSE"
ENTRY_POINTS = "autograder.courses"  # installed courses: name = its declarations' package


class CourseError(GraderError):
    """No course, or a course folder that does not say what the engine needs (one line)."""


class Course:
    """A course: its folder, its name, its declarations' package."""

    def __init__(self, root: Path | None, name: str, package: ModuleType):
        self.root = root  # None: a course installed without its folder (a student's install)
        self.name = name
        self.package = package

    def __repr__(self) -> str:
        return f"Course(root={self.root!r}, name={self.name!r})"

    @cached_property
    def package_dir(self) -> Path:
        return Path(self.package.__file__).resolve().parent  # asked for per check: resolved once

    @cached_property
    def exercises(self) -> dict[str, Exercise]:
        """Every exercise's declaration, in notebook order."""
        names = getattr(self.package, "EXERCISES", None)
        if not isinstance(names, (tuple, list)) or not names:
            raise CourseError(f"{self.package_dir}/__init__.py: declare EXERCISES, the exercise modules in order")
        found: dict[str, Exercise] = {}
        for module in names:
            try:
                declared = importlib.import_module(f"{self.package.__name__}.exercises.{module}").EXERCISE
            except (ImportError, AttributeError) as e:
                raise CourseError(f"course {self.name}: exercise module {module!r}: {e}") from e
            if declared.name in found:
                raise CourseError(f"course {self.name}: two exercises are named {declared.name!r}")
            found[declared.name] = declared
        return found

    @cached_property
    def assignments(self) -> dict[str, tuple[str, ...]]:
        """Each problem set's exercises, in notebook order; the sets in order of their first."""
        sets: dict[str, tuple[str, ...]] = {}
        for ex in self.exercises.values():
            sets[ex.assignment] = sets.get(ex.assignment, ()) + (ex.name,)
        return sets

    @cached_property
    def explanations(self) -> ModuleType:
        return importlib.import_module(f"{self.package.__name__}.explanations")

    @property
    def preload(self) -> tuple[str, ...]:
        """Modules a submission may import, imported in the zygote before it confines itself."""
        return tuple(getattr(self.package, "PRELOAD", ()))

    @property
    def worked_examples(self) -> Path:
        return self.package_dir / "worked_examples.json"

    def folder(self, name: str) -> Path:
        """One of the course folder's parts (solutions, templates, source, assignments)."""
        if self.root is None:
            raise CourseError(f"course {self.name} is installed without its folder (no {name}/): "
                              "pass --course DIR, the course's folder")
        return self.root / name

    @property
    def solutions(self) -> Path:
        override = os.environ.get("AUTOGRADER_SOLUTIONS")
        return Path(override).resolve() if override else self.folder("solutions")


def read_manifest(root: Path) -> dict:
    path = root / COURSE_FILE
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"{root}: not a course folder (no {COURSE_FILE})") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise CourseError(f"{path}: {e}") from None
    for key in ("name", "package"):
        if not isinstance(doc.get(key), str) or not doc[key].isidentifier():
            raise CourseError(f"{path}: `{key}` must be a name (letters, digits, _)")
    return doc


def _import_package(name: str, folder: Path) -> ModuleType:
    """The course's package, imported from ``folder`` under its own name. One course per
    process: a package of that name already imported from elsewhere is refused, not mixed."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        where = Path(getattr(loaded, "__file__", "") or "").resolve().parent
        if where != folder.resolve():
            raise CourseError(f"a course package {name!r} is already loaded from {where}, not {folder}")
        return loaded
    init = folder / "__init__.py"
    if not init.is_file():
        raise CourseError(f"{folder}: the course's package is missing (no __init__.py)")
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load(root: Path) -> Course:
    root = Path(root).resolve()
    doc = read_manifest(root)
    return Course(root, doc["name"], _import_package(doc["package"], root / doc["package"]))


def find_root(start: Path) -> Path | None:
    """The course folder ``start`` lies in: the nearest ancestor holding course.toml."""
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / COURSE_FILE).is_file():
            return folder
    return None


def installed() -> Course | None:
    """The course installed with the package, if exactly one is. Its folder is known when the
    package sits in it (an editable install, a checkout)."""
    from importlib import metadata  # here: importing it costs every command 60 ms, most need no installed course

    points = list(metadata.entry_points(group=ENTRY_POINTS))
    if len(points) != 1:
        return None
    package = importlib.import_module(points[0].value)
    parent = Path(package.__file__).resolve().parent.parent
    try:
        doc = read_manifest(parent)
        root = parent if doc["package"] == package.__name__ else None
    except CourseError:
        root = None
    return Course(root, points[0].name, package)


_current: Course | None = None


def use(root: Path) -> Course:
    """Grade for the course at ``root`` from now on, here and in every process started from
    here (nbgrader's preprocessors, the pytest face's inner run, local workers inherit it)."""
    global _current
    chosen = load(root)
    if _current is not None and _current.root != chosen.root:
        raise CourseError(f"this process already grades for {_current.root}; start another for {chosen.root}")
    _current = chosen
    os.environ[ENV] = str(chosen.root)
    return chosen


def chosen() -> Course | None:
    """The course this process grades for, if one has been chosen yet."""
    return _current


def current(from_cwd: bool = True) -> Course:
    """The course this process grades for (see the module's docstring for which). A face that
    runs inside a student's folder passes ``from_cwd=False``: a course.toml the student wrote
    there must never choose the code the grader imports."""
    global _current
    if _current is None:
        if os.environ.get(ENV):
            return use(Path(os.environ[ENV]))
        here = find_root(Path.cwd()) if from_cwd else None
        if here is not None:
            return use(here)
        found = installed()
        if found is None:
            raise CourseError("no course here: pass --course DIR (a folder holding course.toml), "
                              f"or set {ENV}")
        _current = found
    return _current
