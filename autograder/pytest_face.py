"""``autograder pytest``: the pytest face, safe to run inside a student's repository.

Plain ``python -m pytest --submission ...`` started in a student's repository reads that
repository: ``-m`` puts the current folder first on ``sys.path`` (so its ``autograder/``,
``numpy.py`` or ``_pytest/`` is what gets imported, as the grader's user), pytest finds its
rootdir and ini file there (``pytest.ini``, ``pyproject.toml``, ``tox.ini``, ``setup.cfg``:
``addopts``, ``pythonpath``, ``-p``), loads its ``conftest.py``, and the environment may hold
``PYTEST_ADDOPTS``/``PYTEST_PLUGINS``/``PYTHONPATH``. This command reads the submission's
bytes once (no link followed below the folder it was started from) and grades a private
copy in a fresh interpreter that sees none of that:

- ``python -I``: no current folder or script folder on ``sys.path``, no ``PYTHON*``
  variable, no user site (so no ``usercustomize``; a ``sitecustomize`` or ``.pth`` file is
  read only from the installation's own site folders);
- an environment built from nothing but a few named variables (no ``PYTEST_*`` but
  ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, so no entry-point plugin loads);
- its current folder an empty private one; ``-c`` an ini file written here (empty) and
  ``--rootdir`` a private folder, so no configuration is discovered;
  ``--noconftest``, ``-p no:cacheprovider``, and ``-p autograder.pytest_plugin`` by name;
- the JUnit XML (xunit2, its suite named for the assignment) written in the private folder,
  then placed where the operator asked (through no link below the starting folder).

The pytest process then runs no student code (the submission runs in the sandbox only), and
the plugin checks again for itself (``pytest_plugin.unsafe_reason``).
"""
from __future__ import annotations

import argparse
import errno
import os
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .names import nonempty_name as _name
from .sandbox.protocol import write_all
from .names import positive_seconds as _positive

# The variables the fresh interpreter gets from this one; everything else is dropped.
PASSED_ON = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TMPDIR", "TERM",
             "COLUMNS", "NO_COLOR", "AUTOGRADER_DEBUG", "AUTOGRADER_QUIET", "AUTOGRADER_SOLUTIONS",
             "AUTOGRADER_ALLOW_UNISOLATED", "AUTOGRADER_COURSE")


class FaceError(Exception):
    """Bad input for the command: said in one line, nothing graded."""


@dataclass(frozen=True)
class Plan:
    """What one run does: the argv and environment of the fresh pytest, and the files."""
    argv: list[str]
    env: dict[str, str]
    cwd: Path  # empty
    report: Path  # where the child writes its JUnit XML (private)
    junitxml: Path | None  # where the operator wants it


def add_parser(sub) -> None:
    """`autograder pytest` in the command's help; ``main`` parses it (checks and options mixed)."""
    _arguments(sub.add_parser("pytest", help="the grader's checks as pytest tests, safe inside a student's repository"))


def main(argv: list[str]) -> int:
    from . import course
    from .assignments import ASSIGNMENTS

    try:
        # Never the course a course.toml of the current folder names: it may be the student's.
        course.current(from_cwd=False)
    except course.CourseError as e:
        print(f"autograder: {e}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="autograder pytest", description="The grader's checks as pytest tests, "
                                     "safe to run inside a student's repository (docs/pytest-classroom.md).")
    _arguments(parser)
    args = parser.parse_intermixed_args(argv)  # node ids may follow the options, as for pytest
    if args.assignment not in ASSIGNMENTS:
        print(f"autograder: unknown assignment {args.assignment!r}; choose one of {', '.join(ASSIGNMENTS)}",
              file=sys.stderr)
        return 2
    return run(args)


def _arguments(p: argparse.ArgumentParser) -> None:
    from .assignments import ASSIGNMENTS

    p.add_argument("submission", type=Path, help="the notebook or .py file to grade")
    p.add_argument("checks", nargs="*", metavar="CHECK",
                   help="node ids to run (SET/EXERCISE or SET/EXERCISE::CHECK TITLE); default: every check")
    p.add_argument("--assignment", required=True, help=f"one of {', '.join(ASSIGNMENTS)}")
    p.add_argument("--student", type=_name, metavar="NAME", help="draw the inputs grade-batch draws for NAME")
    p.add_argument("--timeout", type=_positive, default=None, metavar="S", help="seconds per exercise (default 10)")
    p.add_argument("--visible", action="store_true", help="the notebook's visible checks only, without the reference")
    p.add_argument("--solutions", type=Path, metavar="DIR",
                   help="the reference solutions to grade with (default: $AUTOGRADER_SOLUTIONS or the installed ones)")
    p.add_argument("--junitxml", type=Path, metavar="FILE", help="write the JUnit XML report here")
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="only the checks whose node id matches EXPR (pytest -k)")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failed check")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per check")
    p.add_argument("-q", "--quiet", action="store_true", help="less output")


def run(args) -> int:
    import importlib.util

    from .names import one_line

    if importlib.util.find_spec("pytest") is None:  # not a dependency of a student's install of the grader
        print("autograder: autograder pytest needs pytest: pip install pytest", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="autograder-pytest-") as private:
            plan = prepare(args, Path(private), Path.cwd())
            code = subprocess.run(plan.argv, cwd=plan.cwd, env=plan.env, stdin=subprocess.DEVNULL).returncode
            if plan.junitxml is not None and plan.report.is_file():
                place(plan.report.read_bytes(), plan.junitxml, Path.cwd())
    except FaceError as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"autograder: {one_line(str(e), 500)}", file=sys.stderr)
        return 1
    return code


def prepare(args, private: Path, start: Path) -> Plan:
    """Snapshot the submission into ``private`` and plan the fresh pytest. ``start``: the
    folder the operator started from (below it, no link is followed)."""
    from .intake import snapshot
    from .names import one_line

    if not os.path.lexists(args.submission):
        raise FaceError(f"no such file: {one_line(str(args.submission))}")
    given = Path(os.path.abspath(args.submission))
    snap = snapshot(given, _anchor(given, start))
    if snap.name in ("", ".", "..") or "/" in snap.name or "\0" in snap.name:
        raise FaceError(f"not a file name: {snap.name!r}")
    folders = {n: private / n for n in ("run", "ini", "submission", "out")}
    for folder in folders.values():
        folder.mkdir(mode=0o700)
    copy = folders["submission"] / snap.name
    ini = folders["ini"] / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf-8")  # read instead of any file pytest would discover
    report = folders["out"] / "report.xml"
    junitxml = None
    if args.junitxml is not None:
        junitxml = Path(os.path.abspath(args.junitxml))
        _folder_fd(junitxml, start, check_only=True)  # refused now, before grading, not after
    argv = [sys.executable, "-I", "-m", "pytest", "-c", str(ini), "--rootdir", str(folders["run"]),
            "--noconftest", "-p", "no:cacheprovider", "-p", "autograder.pytest_plugin",
            f"--submission={copy}", f"--assignment={args.assignment}", f"--junitxml={report}",
            # Standard JUnit XML whatever pytest's default: the schema's, one suite named for the set.
            "-o", "junit_family=xunit2", "-o", f"junit_suite_name={args.assignment}"]
    if snap.data is None:  # graded as what it is: the results say why it was not read
        argv.append(f"--autograder-unreadable={snap.problem or 'it could not be read'}")
    else:
        copy.write_bytes(snap.data)
    # The original's folder (and the starting folder when it holds the original: a student's
    # repository): hidden from the sandbox, and the plugin refuses any module from them. Where
    # the operator started and where the report goes: hidden too, as for a plain pytest run.
    origin = {given.parent.resolve()}
    if given.is_relative_to(os.path.abspath(start)):
        origin.add(start.resolve())
    argv += [f"--autograder-origin={folder}" for folder in sorted(map(str, origin))]
    argv += [f"--autograder-hide={folder}" for folder in
             sorted({str(start.resolve()), *([str(junitxml.parent)] if junitxml else [])} - set(map(str, origin)))]
    # Values joined to their options ("--student=-x"), so none is read as an option itself.
    if args.student is not None:
        argv.append(f"--student={args.student}")
    if args.timeout is not None:
        argv.append(f"--autograder-timeout={args.timeout!r}")
    if args.visible:
        argv.append("--visible")
    if args.keyword is not None:
        argv.append(f"-k{args.keyword}")
    argv += ["-x"] * args.exitfirst + ["-v"] * args.verbose + ["-q"] * args.quiet
    prefix = f"{args.assignment}/"
    for check in args.checks:  # node ids only: a path here would make pytest collect files
        if not check.startswith(prefix):
            raise FaceError(f"{check!r} is not a check of {args.assignment} (node ids start with {prefix!r}; "
                            "`--collect-only` is not offered: run without CHECK to see them all)")
        argv.append(check)
    env = {k: os.environ[k] for k in PASSED_ON if k in os.environ}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if args.solutions is not None:
        env["AUTOGRADER_SOLUTIONS"] = os.path.abspath(args.solutions)
    return Plan(argv, env, folders["run"], report, junitxml)


def _anchor(path: Path, start: Path) -> Path | None:
    """Below which folder no link is followed: the starting folder when ``path`` lies in it
    (a student's repository, a class folder), else only the file's own name."""
    start = Path(os.path.abspath(start))
    return start if path.is_relative_to(start) and path != start else None


def _folder_fd(path: Path, start: Path, check_only: bool = False) -> int | None:
    """An open descriptor of ``path``'s folder, reached through no link below ``start``
    (when ``path`` lies in it). FaceError when a component is a link or not a folder."""
    anchor = _anchor(path, start)
    base, parts = (str(anchor), Path(os.path.relpath(path.parent, anchor)).parts) if anchor else \
        (str(path.parent), ())
    parts = tuple(p for p in parts if p != os.curdir)
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY
    try:
        fd = os.open(base, flags)
    except OSError as e:
        raise FaceError(f"cannot write {path}: {e.strerror}") from None
    for part in parts:
        try:
            nxt = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                raise FaceError(f"cannot write {path}: {part} is a symbolic link or not a folder; "
                                "the report is written through no link") from None
            raise FaceError(f"cannot write {path}: {part}: {e.strerror}") from None
        os.close(fd)
        fd = nxt
    if check_only:
        os.close(fd)
        return None
    return fd


def place(data: bytes, path: Path, start: Path) -> None:
    """Write ``data`` to ``path`` whole (a new file renamed over the old: a link there is
    replaced, never followed), through no link below ``start``."""
    fd = _folder_fd(path, start)
    temp = f".{path.name}.{os.getpid()}.tmp"
    try:
        out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
        try:
            write_all(out, data)
        finally:
            os.close(out)
        if stat.S_ISDIR(_lstat_mode(path.name, fd)):
            raise FaceError(f"cannot write {path}: it is a folder")
        os.rename(temp, path.name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        try:
            os.unlink(temp, dir_fd=fd)
        except FileNotFoundError:
            pass
        os.close(fd)


def _lstat_mode(name: str, fd: int) -> int:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return 0

