"""``autograder gradescope ASSIGNMENT --out FILE.zip``: Gradescope's autograder zip.

At the zip's root, as Gradescope's specification asks: ``setup.sh`` (run once, as root, when
Gradescope builds the image) and ``run_autograder`` (copied to /autograder/run_autograder and
run once per submission). Beside them: the package's wheel, built from this checkout;
``requirements.txt``, the grader's runtime dependencies pinned to releases that have wheels
for the image's Python (``--python``; the wheel goes in with ``--no-deps``: nbgrader, Jupyter
and matplotlib are for the course folder, not for grading); and the course itself, so that
/autograder/source is a course folder: its ``course.toml``, its package of declarations, and
``solutions/``, the reference answers and the catalogue of mistakes the hidden checks need,
which only the instructor's zip holds (students never see it).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import course, reference
from ..grade import DEFAULT_TIMEOUT
from . import spec

# Gradescope's documented default base image is Ubuntu 22.04 (gradescope/autograder_samples,
# docs/base_images.md), whose python3 is 3.10; 24.04's is 3.12. For each Python the zip may
# be built for, what grading imports beyond the standard library, pinned to a release with
# manylinux wheels for it (numpy 2.2 is the last line for 3.10): tests/test_gradescope.py
# asks PyPI for exactly these wheels with `pip download --python-version X --only-binary`.
# pyseccomp (pure Python, over the image's libseccomp.so.2) builds the sandbox's seccomp filter.
PINS = {
    "3.10": ("numpy==2.2.6", "pyseccomp==0.1.2", "tomli==2.2.1"),
    "3.11": ("numpy==2.4.6", "pyseccomp==0.1.2"),
    "3.12": ("numpy==2.4.6", "pyseccomp==0.1.2"),
}
PYTHONS = tuple(PINS)
DEFAULT_PYTHON = "3.10"  # Ubuntu 22.04, Gradescope's default image
_EPOCH = (1980, 1, 1, 0, 0, 0)  # every entry's time: the same checkout gives the same zip

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image. It installs the
# grader into a virtual environment of its own (images whose system Python refuses
# `pip install`, PEP 668, work too), world-readable so the sandboxed submissions can import
# numpy, and makes the reference solutions readable by root only.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$ROOT/source"
VENV="$ROOT/venv"
if ! command -v python3 >/dev/null || ! python3 -c "import ensurepip, venv" 2>/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv
fi
BUILT_FOR="{python}"  # autograder gradescope --python
HAS=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$HAS" = "$BUILT_FOR" ] || echo "setup.sh: this zip was built for Python $BUILT_FOR, the image has $HAS" >&2
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --only-binary=:all: -r "$SOURCE/requirements.txt" || {{
    echo "setup.sh: cannot install $(tr '\n' ' ' < "$SOURCE/requirements.txt")for Python $HAS;" \
         "build the zip for this image: autograder gradescope ... --python $HAS" >&2
    exit 1
}}
# --no-deps: nbgrader, Jupyter and matplotlib serve the course folder, not grading
"$VENV/bin/python" -m pip install -q --no-deps --no-warn-conflicts "$SOURCE"/*.whl
"$VENV/bin/python" -c "import autograder.gradescope.run, numpy"
chmod -R go+rX "$VENV"
chmod -R go-rwx "$SOURCE"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope copies this to /autograder/run_autograder and runs it, as root, once per
# submission. It always writes /autograder/results/results.json for whatever was uploaded;
# only the grader's own failure writes none (the cause is in this script's output).
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
exec "$ROOT/venv/bin/python" -m autograder.gradescope.run --root "$ROOT" {args}
"""


@dataclass(frozen=True)
class Bundle:
    path: Path
    entries: list[str]  # the zip's file names
    pins: list[str]  # requirements.txt's lines


def build(assignment: str, out: Path, *, visibility: str | None = None, timeout: float = DEFAULT_TIMEOUT,
          wheel: Path | None = None, python: str = DEFAULT_PYTHON) -> Bundle:
    """Write the zip to ``out``, for an image whose python3 is ``python`` (one of PYTHONS).
    ``wheel``: the package's wheel, when one is already built."""
    if python not in PINS:
        raise ValueError(f"no requirements for Python {python}; choose one of {', '.join(PYTHONS)}")
    solutions = reference.solutions_dir()
    if not (solutions / "mistakes.py").is_file():
        raise FileNotFoundError(f"no reference solutions at {solutions} (set AUTOGRADER_SOLUTIONS or run "
                                "from the course checkout)")
    if visibility is not None and visibility not in spec.VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(spec.VISIBILITIES)}")
    pins = list(PINS[python])
    args = f"--assignment {assignment} --timeout {timeout:g}" + (f" --visibility {visibility}" if visibility else "")
    with tempfile.TemporaryDirectory() as tmp:
        wheel = Path(wheel) if wheel else _build_wheel(Path(tmp))
        files: dict[str, tuple[bytes, int]] = {
            "setup.sh": (SETUP_SH.format(python=python).encode(), 0o755),
            "run_autograder": (RUN_AUTOGRADER.format(args=args).encode(), 0o755),
            "requirements.txt": ("\n".join(pins).encode() + b"\n", 0o644),
            wheel.name: (wheel.read_bytes(), 0o644),
        }
        for src in sorted(solutions.glob("*.py")):
            files[f"solutions/{src.name}"] = (src.read_bytes(), 0o644)
        files.update(course_files(course.current()))
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(f".{out.name}.partial")
        try:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
                for name, (data, mode) in files.items():
                    info = zipfile.ZipInfo(name, _EPOCH)
                    info.external_attr = (0o100000 | mode) << 16  # a regular file with its mode (unzip keeps it)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    z.writestr(info, data)
            partial.replace(out)  # a reader sees the old zip or the whole new one
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return Bundle(out, list(files), pins)


def course_files(chosen: course.Course) -> dict[str, tuple[bytes, int]]:
    """The course's manifest and its package of declarations, as the zip's root holds them."""
    files = {course.COURSE_FILE: (chosen.folder(course.COURSE_FILE).read_bytes(), 0o644)}
    package = chosen.package_dir
    for src in sorted(package.rglob("*")):
        if src.is_file() and src.suffix in (".py", ".json") and "__pycache__" not in src.parts:
            files[f"{package.name}/{src.relative_to(package).as_posix()}"] = (src.read_bytes(), 0o644)
    return files


def _build_wheel(folder: Path) -> Path:
    checkout = Path(__file__).resolve().parents[2]
    if not (checkout / "pyproject.toml").is_file():
        raise FileNotFoundError(f"{checkout} is not the course checkout (no pyproject.toml): the zip's wheel "
                                "is built from it")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder), str(checkout)],
                          capture_output=True, text=True)
    wheels = list(folder.glob("attention_autograder-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise RuntimeError(f"pip wheel failed: {(done.stderr or done.stdout).strip()[-300:]}")
    return wheels[0]
