"""Gradescope: the autograder zip, graded as Gradescope grades it.

The simulated Gradescope (the tests marked slow) builds the zip with ``autograder gradescope``,
unpacks it into a temporary root laid out as /autograder (``AUTOGRADER_ROOT`` points the
scripts there), runs ``setup.sh`` once against a local wheelhouse (numpy repacked from this
venv: no index is asked), then runs ``run_autograder`` as Gradescope's Docker does, as root
without CAP_SYS_ADMIN, once per kind of upload. The rest checks the pieces on their own.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

from autograder import cli
from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.gradescope import bundle, container, run, spec, upload
from autograder import results as results_module
from autograder.results import Results

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402

import kernel_variants  # noqa: E402  tests/kernel_variants.py

PS1_FULL = sum(exercise_points(e) for e in ASSIGNMENTS["ps1"])
NO_SYS_ADMIN = ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", "--"]
ADA = {"users": [{"email": "ada@example.edu", "id": 1, "name": "Ada"}]}
GROUP = {"users": [{"email": "zoe@example.edu", "id": 3, "name": "Zoe"},
                   {"email": "ben@example.edu", "id": 2, "name": "Ben"}]}
GROUP_STUDENT = "ben@example.edu+zoe@example.edu"
MISTAKE = "scale_by_dk:wired_attention"


# ---------------------------------------------------------------- the simulated Gradescope

def repack(name: str, out: Path) -> Path:
    """An installed distribution as a wheel again (its files, a fresh RECORD): the local
    package index setup.sh installs from, with no download."""
    dist = distribution(name)
    tag = next(line.split(":", 1)[1].strip() for line in dist.read_text("WHEEL").splitlines()
               if line.startswith("Tag:"))
    stem = f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}"
    info = f"{stem}.dist-info"
    wheel, record = out / f"{stem}-{tag}.whl", []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
        for f in dist.files:
            name_ = str(f)
            if name_.startswith("..") or "__pycache__" in name_ or name_ in (
                    f"{info}/RECORD", f"{info}/INSTALLER", f"{info}/REQUESTED", f"{info}/direct_url.json"):
                continue
            data = Path(dist.locate_file(f)).read_bytes()
            z.writestr(name_, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name_},sha256={digest},{len(data)}")
        z.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return wheel


LOCAL_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def installed_version(name: str) -> str | None:
    try:
        return distribution(name).version
    except PackageNotFoundError:  # tomli: only Python 3.10's zips need it, and this is not 3.10
        return None


def wheelhouse(requirements: list[str], out: Path) -> Path:
    """The wheels setup.sh installs, for this machine's Python: the installed one repacked when
    it is the pinned version (no index asked), else the pinned wheel from PyPI."""
    for line in requirements:
        name, pinned = line.split("==")
        if installed_version(name) == pinned:
            repack(name, out)
        else:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--no-deps",
                            "-d", str(out), line], check=True, capture_output=True, timeout=300)
    return out


def setup_root(zip_file: Path, wheels: Path) -> Path:
    """/autograder after Gradescope built the image: the zip in source/, setup.sh run."""
    # Where others may traverse, as /autograder is: pytest's own folders (mode 700) would hide
    # the reference from a submission's uid whatever the autograder does.
    top = Path(tempfile.mkdtemp(prefix="autograder-gs-test-"))
    top.chmod(0o755)
    root = top / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(zip_file) as z:  # as unzip does, modes kept
        for info in z.infolist():
            z.extract(info, root / "source")
            (root / "source" / info.filename).chmod((info.external_attr >> 16) & 0o777)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels),
           "PIP_CONFIG_FILE": os.devnull, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")  # as Gradescope does
    return root


def runner(root: Path, missing: frozenset[str] = frozenset()):
    """Run the autograder in ``root`` on one upload ({name: bytes}) as Gradescope does, on a
    kernel without ``missing`` (tests/kernel_variants.py); its results.json."""
    def run(files: dict[str, bytes], metadata: dict = ADA, cgroup: Path | None = None) -> dict:
        for folder in ("submission", "results"):
            shutil.rmtree(root / folder, ignore_errors=True)
            (root / folder).mkdir()
        for name, data in files.items():
            (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, Path):
                (root / "submission" / name).symlink_to(data)
            else:
                (root / "submission" / name).write_bytes(data)
        (root / "submission_metadata.json").write_text(json.dumps(metadata))
        enter = (lambda: (cgroup / "cgroup.procs").write_text(str(os.getpid()))) if cgroup else None
        cmd = kernel_variants.variant_cmd([*NO_SYS_ADMIN, str(root / "run_autograder")], missing)
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True,
                              env={"PATH": os.environ["PATH"], "AUTOGRADER_ROOT": str(root)}, preexec_fn=enter)
        assert done.returncode == 0, done.stdout + done.stderr
        text = (root / "results" / "results.json").read_text()
        assert len(text.encode()) < spec.MAX_BYTES
        return json.loads(text)
    return run


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory, built_wheel) -> Path:
    """The zip for an image whose python3 is this machine's, which the simulation runs."""
    out = tmp_path_factory.mktemp("zip") / "ps1-autograder.zip"
    assert cli.main(["gradescope", "ps1", "--out", str(out), "--wheel", str(built_wheel),
                     "--python", LOCAL_PYTHON]) == 0
    return out


@pytest.fixture(scope="module")
def gradescope_root(zip_path, tmp_path_factory) -> Path:
    if os.geteuid() != 0:
        pytest.skip("Gradescope runs the autograder as root (CI runs as root)")
    with zipfile.ZipFile(zip_path) as z:
        requirements = z.read("requirements.txt").decode().split()
    root = setup_root(zip_path, wheelhouse(requirements, tmp_path_factory.mktemp("wheelhouse")))
    yield root
    shutil.rmtree(root.parent)


@pytest.fixture(scope="module")
def gradescope(gradescope_root):
    return runner(gradescope_root)


def notebook(archetype: str) -> bytes:
    return make_class.archetype_notebook("ps1", archetype).encode()


def assert_to_the_spec(doc: dict) -> None:
    assert set(doc) <= set(spec.TOP_KEYS)
    assert doc["output_format"] == "text" and doc["test_output_format"] == "text"
    assert doc["score"] == sum(t["score"] for t in doc["tests"])
    for t in doc["tests"]:
        assert set(t) <= set(spec.TEST_KEYS)
        assert t["output_format"] == "text"
        assert "expected" not in t["extra_data"].get("heatmap", {})


@pytest.fixture(scope="module")
def mistaken(gradescope) -> dict:
    return gradescope({"My Homework (1).ipynb": notebook(MISTAKE)})


@pytest.mark.slow
def test_a_right_notebook_under_any_name_gets_full_marks_at_the_uid_level(gradescope):
    doc = gradescope({"My Homework (1).ipynb": notebook("correct")})
    assert_to_the_spec(doc)
    assert doc["score"] == sum(t["max_score"] for t in doc["tests"]) == PS1_FULL
    assert doc["output"].splitlines()[0] == "Graded My Homework (1).ipynb."
    assert doc["extra_data"]["isolation"] == "uid"
    assert doc["extra_data"]["memory_mib"] == container.submission_memory(container.memory_limit()) >> 20


@pytest.mark.slow
def test_a_mistaken_notebook_is_explained_to_the_spec(mistaken):
    assert_to_the_spec(mistaken)
    failed = [t for t in mistaken["tests"] if t["status"] == "failed"]
    # Each failed check that names a mistake names this one. On the river bank (d = 4 = d_k
    # squared) dividing by d_k and by sqrt(d) give the same weights, so those name neither.
    named = {tag for t in failed for tag in t["tags"] if tag.startswith("misconception:")}
    assert failed and named == {"misconception:scale_by_dk"}
    assert sum("misconception:scale_by_dk" in t["tags"] for t in failed) > len(failed) // 2
    assert 0 < mistaken["score"] < PS1_FULL


@pytest.mark.slow
def test_grade_with_the_email_as_student_gives_the_same_results_test_by_test(mistaken, tmp_path):
    path = tmp_path / "My Homework (1).ipynb"
    path.write_bytes(notebook(MISTAKE))
    assert cli.main(["grade", str(path), "--assignment", "ps1", "--student", "ada@example.edu",
                     "--results", str(tmp_path / "r.json")]) == 0
    local = json.loads((tmp_path / "r.json").read_text())
    key = lambda t: (t["name"], t["score"], t["status"], t["output"], t["tags"], t["visibility"])  # noqa: E731
    assert [key(t) for t in mistaken["tests"]] == [key(t) for t in local["tests"]]


@pytest.mark.slow
def test_a_group_is_seeded_by_its_sorted_emails(gradescope, mistaken, tmp_path):
    group = gradescope({"ps1.ipynb": notebook(MISTAKE)}, metadata=GROUP)
    path = tmp_path / "ps1.ipynb"
    path.write_bytes(notebook(MISTAKE))
    assert cli.main(["grade", str(path), "--assignment", "ps1", "--student", GROUP_STUDENT,
                     "--results", str(tmp_path / "r.json")]) == 0
    local = json.loads((tmp_path / "r.json").read_text())
    assert [t["output"] for t in group["tests"]] == [t["output"] for t in local["tests"]]
    assert [t["output"] for t in group["tests"]] != [t["output"] for t in mistaken["tests"]]  # other inputs


@pytest.mark.slow
@pytest.mark.parametrize("files, found", [
    ({}, "Nothing was uploaded"),
    ({"a.ipynb": "released", "b.ipynb": "correct"}, "Found 2 files that could be the homework (a.ipynb, b.ipynb)"),
    ({"hw.zip": b"PK\x05\x06" + bytes(18)}, "Found a zip archive (hw.zip)"),
    ({"notes.txt": os.urandom(300)}, "Found no notebook, only notes.txt"),
], ids=["nothing", "two-notebooks", "zip", "garbage"])
def test_an_upload_with_nothing_to_grade_gets_zero_and_one_line(gradescope, files, found):
    def content(v):
        if v == "released":
            return (ROOT / "assignments" / "ps1" / "ps1.ipynb").read_bytes()
        return notebook(v) if isinstance(v, str) else v
    doc = gradescope({name: content(v) for name, v in files.items()})
    assert_to_the_spec(doc)
    assert doc["score"] == 0 and sum(t["max_score"] for t in doc["tests"]) == PS1_FULL
    assert doc["output"].splitlines()[0].startswith(found)


@pytest.mark.slow
def test_a_py_file_is_graded(gradescope):
    doc = gradescope({"answers.py": (ROOT / "solutions" / "ps1.py").read_bytes()})
    assert doc["score"] == PS1_FULL
    assert doc["output"].startswith("Graded answers.py.")


@pytest.mark.slow
def test_a_submission_cannot_read_the_reference_the_metadata_or_the_results(gradescope, gradescope_root):
    secrets = [gradescope_root / "source" / "solutions" / "ps1.py", gradescope_root / "submission_metadata.json",
               gradescope_root / "results"]
    snoop = "\n".join(f"try:\n    print('READ', len(open({str(p)!r}).read()))\nexcept OSError as e:\n"
                      f"    print('DENIED', type(e).__name__)" for p in secrets[:2])
    snoop += f"\ntry:\n    open({str(secrets[2] / 'results.json')!r}, 'w').write('{{}}')\n    print('WROTE')\n" \
             "except OSError as e:\n    print('DENIED', type(e).__name__)\n"
    doc = gradescope({"snoop.py": snoop.encode()})
    printed = doc["output"]
    assert printed.count("DENIED") == 3 and "READ" not in printed and "WROTE" not in printed
    assert doc["score"] == 0 and doc["extra_data"]["isolation"] == "uid"


@pytest.mark.slow
def test_the_reference_upload_results_and_metadata_are_roots_alone_without_landlock_too(gradescope, gradescope_root):
    gradescope({"ps1.ipynb": notebook("correct")})
    modes = {name: (gradescope_root / name).stat().st_mode & 0o777
             for name in ("source", "submission", "results", "submission_metadata.json")}
    assert modes == {"source": 0o700, "submission": 0o700, "results": 0o700, "submission_metadata.json": 0o600}
    numpy_init = next((gradescope_root / "venv").glob("lib/python*/site-packages/numpy/__init__.py"))
    assert numpy_init.stat().st_mode & 0o004  # what a submission imports stays readable


@pytest.fixture(scope="module")
def without_landlock(gradescope_root):
    """The autograder on a kernel without Landlock, as Gradescope's older hosts are reported to run."""
    return runner(gradescope_root, frozenset({"landlock"}))


@pytest.mark.slow
def test_without_landlock_a_right_notebook_gets_full_marks_at_the_uid_level(gradescope, without_landlock):
    with_it = gradescope({"ps1.ipynb": notebook("correct")})
    doc = without_landlock({"ps1.ipynb": notebook("correct")})
    assert doc["score"] == PS1_FULL and doc["extra_data"]["isolation"] == "uid"
    assert "landlock" not in doc["extra_data"]["isolation_layers"]
    assert set(doc["extra_data"]["isolation_layers"]) == set(with_it["extra_data"]["isolation_layers"]) - {"landlock"}


@pytest.mark.slow
def test_without_landlock_a_submission_still_cannot_read_the_reference_or_write_results(gradescope_root,
                                                                                        without_landlock):
    secret = gradescope_root / "source" / "solutions" / "ps1.py"
    snoop = (f"try:\n    print('READ', len(open({str(secret)!r}).read()))\nexcept OSError as e:\n"
             f"    print('DENIED', type(e).__name__)\n"
             f"try:\n    open({str(gradescope_root / 'results' / 'results.json')!r}, 'w').write('{{}}')\n"
             "    print('WROTE')\nexcept OSError as e:\n    print('DENIED', type(e).__name__)\n")
    doc = without_landlock({"snoop.py": snoop.encode()})
    assert doc["output"].count("DENIED") == 2 and "READ" not in doc["output"] and "WROTE" not in doc["output"]
    assert doc["score"] == 0


@pytest.mark.slow
def test_the_default_zips_numpy_grades_as_the_local_one_does(built_wheel, mistaken, tmp_path_factory):
    """The default zip (Ubuntu 22.04's Python 3.10) pins an older numpy: set up here with that
    numpy (its wheel for this machine's Python), the same notebooks get the same results."""
    if os.geteuid() != 0:
        pytest.skip("Gradescope runs the autograder as root (CI runs as root)")
    out = tmp_path_factory.mktemp("zip310") / "ps1.zip"
    assert cli.main(["gradescope", "ps1", "--out", str(out), "--wheel", str(built_wheel)]) == 0
    requirements = list(bundle.PINS[bundle.DEFAULT_PYTHON])  # numpy first
    root = setup_root(out, wheelhouse(requirements, tmp_path_factory.mktemp("wheels310")))
    try:
        installed = next((root / "venv").glob("lib/python*/site-packages/numpy-*.dist-info")).name
        assert installed == f"numpy-{requirements[0].split('==')[1]}.dist-info"
        grade = runner(root)
        assert grade({"ps1.ipynb": notebook("correct")})["score"] == PS1_FULL
        older = grade({"My Homework (1).ipynb": notebook(MISTAKE)})
        key = lambda t: (t["name"], t["score"], t["status"], t["tags"])  # noqa: E731
        assert [key(t) for t in older["tests"]] == [key(t) for t in mistaken["tests"]]
    finally:
        shutil.rmtree(root.parent)


@pytest.mark.slow
def test_a_link_is_not_followed(gradescope, gradescope_root):
    doc = gradescope({"ps1.ipynb": gradescope_root / "source" / "solutions" / "ps1.py"})
    assert doc["score"] == 0
    assert "symbolic link" in doc["output"]


@pytest.mark.slow
def test_a_garbage_notebook_gets_zero_and_says_why(gradescope):
    doc = gradescope({"ps1.ipynb": b"\xff\xfe not a notebook"})
    assert_to_the_spec(doc)
    assert doc["score"] == 0
    assert "ps1.ipynb is not UTF-8 text" in doc["output"]


@pytest.fixture
def memory_cgroup():
    """A cgroup holding Gradescope's default 768 MB, where this machine lets root make one."""
    for base in (Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup")):
        limit_file = "memory.limit_in_bytes" if base.name == "memory" else "memory.max"
        if not (base / limit_file).exists() and not (base / "cgroup.controllers").exists():
            continue
        group = base / f"autograder-gs-test-{os.getpid()}"
        try:
            group.mkdir()
            (group / limit_file).write_text(str(768 << 20))
        except OSError:
            if group.exists():
                group.rmdir()
            continue
        yield group
        group.rmdir()  # every process in it has ended: run_autograder was waited for
        return
    pytest.skip("no memory cgroup can be made here")


@pytest.mark.slow
def test_in_a_768_mb_container_a_submission_gets_the_limit_less_the_grader(gradescope, memory_cgroup):
    doc = gradescope({"ps1.ipynb": notebook("correct")}, cgroup=memory_cgroup)
    assert doc["extra_data"]["memory_mib"] == container.submission_memory(768 << 20) >> 20 < 768
    assert doc["score"] == PS1_FULL


def test_the_graders_own_failure_writes_no_results(tmp_path, capsys):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "results.json").write_text('{"score": 37}')  # an earlier run's
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission_metadata.json").write_text(json.dumps(ADA))
    assert run.main(["--root", str(tmp_path), "--assignment", "ps1"]) == 1  # no source/solutions: no setup.sh
    assert not (tmp_path / "results" / "results.json").exists()
    assert "the grader failed, not the submission" in capsys.readouterr().out


HOG = """
def score_spread(d, n_rows, n_keys, rng):  # three processes of 300 MB each, in a 768 MB container
    import os
    kids = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            hog = np.ones(300 * 2**20 // 8)
            hog[::512] = 2.0
            os._exit(0 if hog.sum() else 1)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
    raise RuntimeError("still here")
"""


@pytest.mark.slow
def test_processes_that_together_outgrow_the_container_cost_their_exercise_only(gradescope, memory_cgroup):
    reference = (ROOT / "solutions" / "ps1.py").read_text()
    doc = gradescope({"ps1.py": (reference + HOG).encode()}, cgroup=memory_cgroup)
    spread = [t for t in doc["tests"] if "exercise:score_spread" in t["tags"]]
    assert spread and all(t["score"] == 0 for t in spread)
    assert doc["score"] == PS1_FULL - sum(t["max_score"] for t in spread)


# ---------------------------------------------------------------- the zip

@pytest.mark.slow
def test_the_zip_holds_the_scripts_the_wheel_the_reference_and_pins(zip_path):
    with zipfile.ZipFile(zip_path) as z:
        names = set(z.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
        pins = z.read("requirements.txt").decode().split()
        run = z.read("run_autograder").decode()
        setup = z.read("setup.sh").decode()
    assert {"setup.sh", "run_autograder", "requirements.txt", "solutions/mistakes.py", "solutions/ps1.py"} <= names
    assert [n for n in names if n.endswith(".whl")] == [n for n in names if n.startswith("attention_autograder-")]
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert pins == list(bundle.PINS[LOCAL_PYTHON])
    assert "--assignment ps1" in run and f'BUILT_FOR="{LOCAL_PYTHON}"' in setup


def test_the_default_is_gradescopes_default_image_ubuntu_22_04_python_3_10(tmp_path, built_wheel, capsys):
    assert bundle.DEFAULT_PYTHON == "3.10"
    out = tmp_path / "ps1.zip"
    assert cli.main(["gradescope", "ps1", "--out", str(out), "--wheel", str(built_wheel)]) == 0
    with zipfile.ZipFile(out) as z:
        assert z.read("requirements.txt").decode().split() == list(bundle.PINS["3.10"])
        assert 'BUILT_FOR="3.10"' in z.read("setup.sh").decode()
    assert any(pin.startswith("tomli==") for pin in bundle.PINS["3.10"])  # course.toml: no tomllib before 3.11
    said = capsys.readouterr().out
    assert f"{out.stat().st_size // 1000} kB; for Python 3.10: {', '.join(bundle.PINS['3.10'])}" in said


def test_the_zip_carries_the_course(tmp_path, built_wheel):
    """/autograder/source is a course folder: its manifest, its declarations, its solutions."""
    out = tmp_path / "ps1.zip"
    assert cli.main(["gradescope", "ps1", "--out", str(out), "--wheel", str(built_wheel)]) == 0
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
    assert {"course.toml", "attention_course/__init__.py", "attention_course/worked_examples.json",
            "attention_course/exercises/softmax.py", "solutions/ps1.py"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("python", bundle.PYTHONS)
def test_every_pinned_requirement_has_a_wheel_for_its_python_on_pypi(python, tmp_path):
    """Only one Python is on this machine: pip downloads the wheels each image would install."""
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--python-version", python,
                           "--only-binary=:all:", "--no-deps", "-d", str(tmp_path), *bundle.PINS[python]],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-500:]
    tag = "cp" + python.replace(".", "")
    wheels = sorted(p.name for p in tmp_path.glob("*.whl"))
    assert len(wheels) == len(bundle.PINS[python])
    assert all(f"-{tag}-" in w or w.endswith("-py3-none-any.whl") for w in wheels), wheels


def test_a_python_with_no_pins_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no requirements for Python 3.9; choose one of 3.10, 3.11, 3.12"):
        bundle.build("ps1", tmp_path / "x.zip", python="3.9")
    assert not (tmp_path / "x.zip").exists()


def test_an_unknown_assignment_writes_no_zip(tmp_path, capsys):
    assert cli.main(["gradescope", "ps9", "--out", str(tmp_path / "x.zip")]) == 2
    assert "unknown assignment 'ps9'" in capsys.readouterr().err
    assert not (tmp_path / "x.zip").exists()


# ---------------------------------------------------------------- results.json to the spec

def _results(tests: list[results_module.TestResult], printed: str = "") -> Results:
    return Results(score=sum(t.score for t in tests), max_score=sum(t.max_score for t in tests), execution_time=0.5,
                   problems=[], tests=tests, extra_data={"isolation": "uid", "isolation_layers": ["uid per child"]},
                   printed=printed)


def _test(name: str, passed: bool, visibility: str, output: str = "ok", heatmap=None) -> results_module.TestResult:
    return results_module.TestResult(name=f"softmax: {name}", score=2 if passed else 0, max_score=2,
                      status="passed" if passed else "failed", output=output, visibility=visibility,
                      tags=["exercise:softmax"], extra_data={"heatmap": heatmap} if heatmap else {})


@pytest.fixture
def mixed() -> Results:
    return _results([_test("a", True, "visible"), _test("b", False, "after_due_date")], printed="<b>printed</b>")


def test_no_top_level_max_score_and_text_formats(mixed):
    doc = spec.to_gradescope(mixed)
    assert "max_score" not in doc and set(doc) <= set(spec.TOP_KEYS)
    assert (doc["output_format"], doc["test_output_format"], doc["test_name_format"]) == ("text", "text", "text")
    assert "<b>printed</b>" in doc["output"]  # shown as text, never rendered


# Each field's type as gradescope/autograder_samples docs/specs.md shows it: "score": 44.0,
# "execution_time": 136 (seconds), "output" a string, "visibility" one of its words,
# "extra_data" {}; per test "score": 2.0, "max_score": 2.0, "name", "number": "1.1",
# "output", "tags": ["tag1", ...], "visibility", "extra_data" {}. Added later: "status"
# ("passed"/"failed") and the *_format keys ("text", "html", "simple_format", "md", "ansi").
TOP_TYPES = {"score": (int, float), "execution_time": int, "output": str, "output_format": str,
             "test_output_format": str, "test_name_format": str, "visibility": str, "stdout_visibility": str,
             "extra_data": dict, "tests": list, "leaderboard": list}
TEST_TYPES = {"score": (int, float), "max_score": (int, float), "status": str, "name": str, "name_format": str,
              "number": str, "output": str, "output_format": str, "tags": list, "visibility": str, "extra_data": dict}


@pytest.mark.parametrize("seconds", [0.0, 0.4, 2.5, 136.7])
def test_every_field_has_the_specifications_type(mixed, seconds):
    doc = spec.to_gradescope(dataclasses.replace(mixed, execution_time=seconds))
    assert set(TOP_TYPES) == set(spec.TOP_KEYS) and set(TEST_TYPES) == set(spec.TEST_KEYS)
    for key, value in doc.items():
        assert isinstance(value, TOP_TYPES[key]) and not isinstance(value, bool), key
    assert type(doc["execution_time"]) is int and abs(doc["execution_time"] - seconds) <= 0.5
    for t in doc["tests"]:
        for key, value in t.items():
            assert isinstance(value, TEST_TYPES[key]) and not isinstance(value, bool), key
        assert all(isinstance(tag, str) for tag in t["tags"])
        assert t["status"] in ("passed", "failed") and t["visibility"] in (*spec.VISIBILITIES, "after_published")
    assert json.loads(spec.dumps(doc)) == doc


@pytest.mark.parametrize("visibility", spec.VISIBILITIES)
def test_a_visibility_choice_applies_to_every_test(mixed, visibility):
    doc = spec.to_gradescope(mixed, visibility=visibility)
    assert {t["visibility"] for t in doc["tests"]} == {visibility}


def test_by_default_each_test_keeps_its_own_visibility(mixed):
    assert [t["visibility"] for t in spec.to_gradescope(mixed)["tests"]] == [t.visibility for t in mixed.tests]


@pytest.mark.parametrize("visibility, total_shown", [(None, True), ("visible", False), ("after_due_date", True),
                                                     ("hidden", True)])
def test_the_total_is_in_the_output_whenever_a_test_is_not_visible(mixed, visibility, total_shown):
    doc = spec.to_gradescope(mixed, visibility=visibility)
    assert (f"Total: {mixed.score:g} / {mixed.max_score:g} points" in doc["output"]) == total_shown


def test_heatmaps_keep_only_the_students_weights_cut_to_a_corner():
    side = 4 * spec.HEATMAP_SIDE
    got = [[1.0 / side] * side for _ in range(side)]
    doc = spec.to_gradescope(_results([_test("a", False, "visible", heatmap={"expected": got, "got": got})]))
    heatmap = doc["tests"][0]["extra_data"]["heatmap"]
    assert set(heatmap) == {"got", "shape"} and heatmap["shape"] == [side, side]
    assert len(heatmap["got"]) == len(heatmap["got"][0]) == spec.HEATMAP_SIDE


def test_a_huge_results_file_is_cut_under_gradescopes_limit():
    big = "\u00e9<" * 20_000  # 140 kB once json writes \u00e9 as six bytes
    heatmap = {"got": [[0.5] * spec.HEATMAP_SIDE] * spec.HEATMAP_SIDE}
    tests = [_test(f"t{i}", False, "visible", output=big, heatmap=heatmap) for i in range(300)]
    text = spec.dumps(spec.to_gradescope(_results(tests, printed=big)))
    assert len(text.encode()) < spec.MAX_BYTES


def test_a_findings_expected_array_stays_out_of_the_document():
    import numpy as np

    from autograder.checks import compare, failed
    from autograder.grade import to_test_result
    from autograder.spec import Spec

    expected = np.full((2, 2), 0.123456)
    fail = failed(comparison=compare(np.zeros((2, 2)), expected, "softmax's output", 1e-6, 1e-6))
    test = to_test_result("softmax", Spec("a", 1), fail.verdict)
    assert test.finding.comparison is not None and "0.123456" in json.dumps(vars(test.finding.comparison))
    doc = spec.to_gradescope(_results([test]))
    assert doc["tests"][0]["extra_data"] == {} and "0.123456" not in spec.dumps(doc)


def test_an_unknown_visibility_is_refused(mixed):
    with pytest.raises(ValueError, match="visibility"):
        spec.to_gradescope(mixed, visibility="sometimes")


# ---------------------------------------------------------------- the container's facts

@pytest.mark.parametrize("metadata, student", [(ADA, "ada@example.edu"), (GROUP, GROUP_STUDENT)])
def test_the_student_is_the_email_or_the_groups_sorted_emails(tmp_path, metadata, student):
    (tmp_path / "m.json").write_text(json.dumps(metadata))
    assert container.student(tmp_path / "m.json") == student


@pytest.mark.parametrize("text", ["", "{}", '{"users": []}', '{"users": [{"id": 1}]}', '{"users": [{"email": ""}]}',
                                  '{"users": [{"email": null}]}', '{"users": [{"email": 7}]}', '{"users": "ada"}'])
def test_no_student_email_is_the_graders_failure(tmp_path, text):
    (tmp_path / "m.json").write_text(text)
    with pytest.raises(container.GraderError):
        container.student(tmp_path / "m.json")


def _cgroups(tmp_path: Path, proc: str, files: dict[str, str]) -> int | None:
    for rel, text in files.items():
        (tmp_path / "fs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fs" / rel).write_text(text)
    (tmp_path / "cgroup").write_text(proc)
    return container.memory_limit(tmp_path / "cgroup", tmp_path / "fs")


@pytest.mark.parametrize("proc, files, limit", [
    ("0::/\n", {"memory.max": f"{768 << 20}\n"}, 768 << 20),  # v2, the container's own namespace
    ("0::/\n", {"memory.max": "max\n"}, None),
    ("4:memory:/docker/abc\n0::/\n", {"memory/memory.limit_in_bytes": f"{768 << 20}\n"}, 768 << 20),  # v1, mounted as /
    ("4:memory:/a/b\n", {"memory/memory.limit_in_bytes": "9223372036854771712\n",
                         "memory/a/memory.limit_in_bytes": f"{1 << 30}\n",
                         "memory/a/b/memory.limit_in_bytes": "9223372036854771712\n"}, 1 << 30),  # a parent's limit
    ("", {}, None),
], ids=["v2", "v2-max", "v1-container", "v1-parent", "none"])
def test_the_memory_limit_comes_from_the_cgroup(tmp_path, proc, files, limit):
    assert _cgroups(tmp_path, proc, files) == limit


@pytest.mark.parametrize("limit, memory", [(None, container.DEFAULT_MEMORY),
                                           (768 << 20, (768 << 20) - container.GRADER_HEADROOM),
                                           (64 << 30, container.DEFAULT_MEMORY),
                                           (200 << 20, container.LEAST_MEMORY)])
def test_a_submission_gets_the_container_less_the_graders_headroom(limit, memory):
    assert container.submission_memory(limit) == memory


# ---------------------------------------------------------------- what was uploaded

def _upload(tmp_path: Path, files: dict[str, bytes]) -> upload.Upload:
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return upload.find(tmp_path, "ps1")


def test_of_two_notebooks_the_one_with_the_exercises_is_graded(tmp_path):
    found = _upload(tmp_path, {"scratch.ipynb": b'{"cells": []}', "ps1.ipynb": notebook("correct")})
    assert found.path == tmp_path / "ps1.ipynb"
    assert "also uploaded: scratch.ipynb" in found.line


def test_the_same_notebook_twice_is_graded_once(tmp_path):
    found = _upload(tmp_path, {"ps1.ipynb": notebook("correct"), "ps1 (1).ipynb": notebook("correct")})
    assert found.path is not None and "the same file was uploaded as" in found.line


def test_checkpoints_and_hidden_files_are_not_uploads(tmp_path):
    found = _upload(tmp_path, {".ipynb_checkpoints/ps1-checkpoint.ipynb": b"{}", ".hidden.py": b"",
                               "sub/ps1.ipynb": notebook("correct")})
    assert found.path == tmp_path / "sub" / "ps1.ipynb"


def test_a_link_is_listed_but_never_followed(tmp_path):
    (tmp_path / "ps1.ipynb").symlink_to(ROOT / "solutions" / "ps1.py")
    found = upload.find(tmp_path, "ps1")
    assert found.path == tmp_path / "ps1.ipynb"  # grade() then refuses to read it and says so


@pytest.fixture
def nested(tmp_path):
    """1,200 nested folders (deeper than Python's recursion limit), made and removed in loops."""
    chain = [tmp_path / "d"]
    for _ in range(1199):
        chain.append(chain[-1] / "d")
    for folder in chain:
        folder.mkdir()
    yield chain[-1]
    for folder in reversed(chain):
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()


def test_more_nested_folders_than_the_recursion_limit_stop_the_listing_with_a_line(tmp_path, nested):
    (nested / "ps1.ipynb").write_bytes(notebook("correct"))
    found = upload.find(tmp_path, "ps1")
    assert found.path is None
    assert found.line.startswith(f"Found no notebook among the first {upload.MAX_ENTRIES} files and folders")


def test_a_notebook_below_hundreds_of_folders_is_found(tmp_path, nested):
    shallow = tmp_path.joinpath(*["d"] * (upload.MAX_ENTRIES - 10))
    (shallow / "ps1.ipynb").write_bytes(notebook("correct"))
    assert upload.find(tmp_path, "ps1").path == shallow / "ps1.ipynb"


def test_a_name_that_is_not_utf8_is_shown_escaped(tmp_path):
    name = os.fsdecode(b"hw\xff.ipynb")
    (tmp_path / name).write_bytes(notebook("correct"))
    found = upload.find(tmp_path, "ps1")
    assert found.path == tmp_path / name and found.line == "Graded hw\\xff.ipynb."
