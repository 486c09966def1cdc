"""The grader, end to end, on a corpus of submissions with known grades.

Two kinds of submissions are graded through the real sandbox:

- generated ones: every archetype of the sample class (examples/make_class.py), that is the
  reference answers in several styles, each entry of the catalogue of mistakes
  (solutions/mistakes.py), unfinished work, a hang, a crash, a broken file; each is graded
  against what ``make_class.expected`` derives from its name;
- hand-written ones, under ``tests/submissions/<assignment>/``: hostile submissions and
  wrong answers the catalogue does not hold, compared with the expectations written in
  their header: the leading comment lines of a ``.py``, or the ``.expect`` file beside an
  ``.ipynb``. A ``.py`` whose header says ``# base: reference`` is graded after the
  reference answers of every assignment, so it holds only what it changes or adds, and an
  exercise added to the course needs no edit of it:

    # expect: full                  every exercise gets full marks
    # expect: zero <exercise>       that exercise scores 0 (may repeat)
    # expect: tag <exercise> <id>   some failed test of that exercise carries misconception:<id>
    # expect: others full           every exercise not named in a zero/tag/partial line gets full marks
    # expect: partial <exercise>    0 < score < max for that exercise
    # expect: says <exercise> <words>   some failed test of that exercise says these words
    # timeout: 1                    grade with this timeout (seconds per exercise)
    # base: reference               prepend the reference answers

Tag lines are also the whole diagnosis: the misconception ids an exercise's tests carry are
exactly the ones its tag lines name, so a file that is wrong "with no catalogued mistake"
(no tag line) proves the grader does not invent one.

Beyond the corpus: the reference solutions score full marks, the released stubs score zero
as ``not_implemented``, the ``autograder grade`` command's exit codes and output, and the
results' schema (CONTRACTS.md).
"""
from __future__ import annotations

import atexit
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder.assignments import ASSIGNMENTS, exercise_points
from autograder.grade import DEFAULT_TIMEOUT, grade, hidden_paths
from autograder.misconceptions import explanations
from autograder.sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import make_class  # noqa: E402
SUBMISSIONS = ROOT / "tests" / "submissions"
ROOTED = Path(tempfile.mkdtemp(prefix="corpus-rooted-"))  # hostile files with this checkout's path filled in
atexit.register(shutil.rmtree, ROOTED, True)
AUTOGRADER = Path(sys.executable).parent / "autograder"  # the console script of this venv

MISCONCEPTIONS = set(explanations())  # the table in CONTRACTS.md
GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


# ---------------------------------------------------------------- the corpus and its headers

def corpus() -> list[Path]:
    return sorted(p for p in SUBMISSIONS.glob("*/*") if p.suffix in (".py", ".ipynb"))


CORPUS = corpus()
CORPUS_IDS = [f"{p.parent.name}/{p.name}" for p in CORPUS]


@dataclass
class Expectation:
    assignment: str
    every_full: bool = False
    others_full: bool = False
    zero: set[str] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)
    tags: dict[str, set[str]] = field(default_factory=dict)
    says: dict[str, list[str]] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT

    def outcomes(self) -> dict[str, set[str]]:
        """For each exercise of the assignment: the outcomes ("full", "zero", "partial") allowed."""
        allowed = {}
        for ex in ASSIGNMENTS[self.assignment]:
            if ex in self.zero:
                allowed[ex] = {"zero"}
            elif ex in self.partial:
                allowed[ex] = {"partial"}
            elif ex in self.tags:
                allowed[ex] = {"zero", "partial"}
            elif self.every_full or self.others_full:
                allowed[ex] = {"full"}
            else:
                allowed[ex] = {"full", "zero", "partial"}
        return allowed

    def tag_sets(self) -> dict[str, list[str]]:
        return {ex: sorted(self.tags.get(ex, ())) for ex in ASSIGNMENTS[self.assignment]}


def header_lines(path: Path) -> list[str]:
    source = path.with_suffix(".expect") if path.suffix == ".ipynb" else path
    lines = []
    for line in source.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


def parse_header(path: Path) -> Expectation:
    assignment = path.parent.name
    exp = Expectation(assignment)
    names = set(ASSIGNMENTS[assignment])
    declared = 0
    for line in header_lines(path):
        if m := re.fullmatch(r"#\s*timeout:\s*(\S+)\s*", line):
            exp.timeout = float(m.group(1))
            continue
        if re.fullmatch(r"#\s*base:\s*reference\s*", line):
            continue
        m = re.fullmatch(r"#\s*expect:\s*(.*?)\s*", line)
        if not m:
            continue  # a description line
        words = m.group(1).split()
        declared += 1
        if words == ["full"]:
            exp.every_full = True
        elif words == ["others", "full"]:
            exp.others_full = True
        elif len(words) == 2 and words[0] in ("zero", "partial") and words[1] in names:
            getattr(exp, words[0]).add(words[1])
        elif len(words) == 3 and words[0] == "tag" and words[1] in names and words[2] in MISCONCEPTIONS:
            exp.tags.setdefault(words[1], set()).add(words[2])
        elif len(words) >= 3 and words[0] == "says" and words[1] in names:
            exp.says.setdefault(words[1], []).append(" ".join(words[2:]))
            declared -= 1  # words, not a grade: the file must still declare its grade
        else:
            raise ValueError(f"{path.name}: cannot read header line {line!r}")
    if not declared:
        raise ValueError(f"{path.name} declares no expectation")
    if exp.every_full and (exp.zero or exp.partial or exp.tags):
        raise ValueError(f"{path.name}: 'full' contradicts its other lines")
    return exp


def outcome(score: float, max_score: float) -> str:
    return "full" if score == max_score else "zero" if score == 0 else "partial"


# ---------------------------------------------------------------- grading, once per file

@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(hide=hidden_paths(SUBMISSIONS)) as sb:
        yield sb


@pytest.fixture(scope="module")
def graded(sandbox):
    cache = {}

    def get(path: Path, assignment: str, timeout: float = DEFAULT_TIMEOUT):
        key = (path, assignment, timeout)
        if key not in cache:
            cache[key] = grade(path, assignment, sandbox=sandbox, timeout=timeout)
        return cache[key]
    return get


def grade_corpus_file(graded, path: Path):
    exp = parse_header(path)
    return exp, graded(with_root(path), exp.assignment, exp.timeout)


def reference_source() -> str:
    """Every assignment's reference answers (solutions/<assignment>.py) as one file, their
    imports of each other dropped: what a student who got everything right hands in."""
    parts = []
    for name in ASSIGNMENTS:
        text = (ROOT / "solutions" / f"{name}.py").read_text()
        parts.append("\n".join(line for line in text.splitlines() if not line.startswith("from .")))
    return "\n\n".join(parts) + "\n"


def with_root(path: Path) -> Path:
    """The file as graded: hostile files name this checkout as @ROOT@, so they snoop on the
    real one wherever it is; a ``# base: reference`` file comes after the reference answers."""
    text = path.read_text(errors="replace") if path.suffix == ".py" else ""
    based = any(re.fullmatch(r"#\s*base:\s*reference\s*", line) for line in header_lines(path)) if text else False
    if "@ROOT@" not in text and not based:
        return path
    if based:
        text = reference_source() + "\n# ---- " + path.name + "\n" + text
    rooted = ROOTED / path.parent.name / path.name
    rooted.parent.mkdir(parents=True, exist_ok=True)
    rooted.write_text(text.replace("@ROOT@", str(ROOT)))
    return rooted


def scores_by_outcome(results, assignment: str) -> dict[str, str]:
    scores = results.exercise_scores()
    return {ex: outcome(scores.get(ex, 0), exercise_points(ex)) for ex in ASSIGNMENTS[assignment]}


def failures(results) -> str:
    """The failed tests' names, tags and first lines of feedback, to read when an expectation fails."""
    lines = [f"{t.name} {t.tags}: {t.output.splitlines()[0] if t.output else ''}"
             for t in results.tests if t.status != "passed"]
    return "\n".join(lines + ["output: " + results.output[:500]])


def test_corpus_covers_every_assignment():
    assert {p.parent.name for p in CORPUS} == set(ASSIGNMENTS)


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_corpus_scores(graded, path):
    exp, results = grade_corpus_file(graded, path)
    got = scores_by_outcome(results, exp.assignment)
    wrong = {ex: (got[ex], sorted(allowed)) for ex, allowed in exp.outcomes().items() if got[ex] not in allowed}
    assert not wrong, f"(got, expected) per exercise: {wrong}\n{failures(results)}"


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_corpus_misconception_tags(graded, path):
    exp, results = grade_corpus_file(graded, path)
    seen = {ex: set() for ex in ASSIGNMENTS[exp.assignment]}
    for t in results.tests:
        if t.status == "failed" and t.misconception:
            seen[t.exercise].add(t.misconception)
    assert {ex: sorted(ids) for ex, ids in seen.items()} == exp.tag_sets(), failures(results)


SAYING = [(p, ex, words) for p in CORPUS for ex, phrases in parse_header(p).says.items() for words in phrases]


@pytest.mark.parametrize(("path", "exercise", "words"), SAYING,
                         ids=[f"{p.parent.name}/{p.name}:{ex}" for p, ex, _ in SAYING])
def test_corpus_failures_say_what_happened(graded, path, exercise, words):
    exp, results = grade_corpus_file(graded, path)
    said = [t.output for t in results.tests if t.exercise == exercise and t.status == "failed"]
    assert any(words in text for text in said), said


# ---------------------------------------------------------------- the generated corpus

GENERATED = [(a, archetype) for a in ASSIGNMENTS for archetype in make_class.ARCHETYPES[a]]
GENERATED_IDS = [f"{a}/{archetype}" for a, archetype in GENERATED]


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    """The sample class's notebook of an archetype, written once."""
    folder = tmp_path_factory.mktemp("generated")
    made = {}

    def get(assignment: str, archetype: str) -> Path:
        if (assignment, archetype) not in made:
            text = make_class.archetype_notebook(assignment, archetype)
            path = folder / assignment / (archetype.replace(":", "__").replace("+", "_and_") + ".ipynb")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            made[assignment, archetype] = path
        return made[assignment, archetype]
    return get


def test_the_catalogue_is_all_in_the_generated_corpus():
    names = {archetype for a, archetype in GENERATED}
    catalogue = [m.name for a in ASSIGNMENTS for m in make_class.catalogue(a)]
    assert catalogue and set(catalogue) <= names


@pytest.mark.parametrize(("assignment", "archetype"), GENERATED, ids=GENERATED_IDS)
def test_generated_submission_gets_its_expected_grade(graded, notebooks, assignment, archetype):
    timeout = 1.0 if archetype.startswith("timeout:") else DEFAULT_TIMEOUT
    results = graded(notebooks(assignment, archetype), assignment, timeout)
    outcomes = scores_by_outcome(results, assignment)
    tags = {ex: set() for ex in ASSIGNMENTS[assignment]}
    for t in results.tests:
        if t.status == "failed" and t.misconception:
            tags[t.exercise].add(t.misconception)
    allowed = make_class.expected(assignment, archetype)
    wrong = {ex: (outcomes[ex], sorted(tags[ex]), sorted((o, sorted(t)) for o, t in allowed[ex]))
             for ex in ASSIGNMENTS[assignment] if (outcomes[ex], frozenset(tags[ex])) not in allowed[ex]}
    assert not wrong, f"(got, tags, allowed) per exercise: {wrong}\n{failures(results)}"


# ---------------------------------------------------------------- the results' schema

def results_json(graded, path: Path) -> dict:
    _, results = grade_corpus_file(graded, path)
    return json.loads(results.to_json())  # allow_nan=False: a nan anywhere fails here


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_results_have_the_schema_fields(graded, path):
    doc = results_json(graded, path)
    assert {"score", "max_score", "execution_time", "output", "tests"} <= set(doc)
    assert all(isinstance(doc[k], (int, float)) for k in ("score", "max_score", "execution_time"))
    assert isinstance(doc["output"], str)
    for t in doc["tests"]:
        assert isinstance(t["name"], str) and isinstance(t["output"], str)
        assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
        assert t["status"] in ("passed", "failed")
        assert t["visibility"] in GRADESCOPE_VISIBILITY
        assert isinstance(t["tags"], list) and all(isinstance(tag, str) for tag in t["tags"])


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_results_score_is_the_sum_of_test_scores(graded, path):
    doc = results_json(graded, path)
    assert doc["score"] == sum(t["score"] for t in doc["tests"])


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_results_max_score_is_the_assignments_total(graded, path):
    doc = results_json(graded, path)
    assert doc["max_score"] == sum(exercise_points(ex) for ex in ASSIGNMENTS[path.parent.name])


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_results_test_names_are_unique(graded, path):
    names = [t["name"] for t in results_json(graded, path)["tests"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_results_every_test_names_one_exercise_of_the_assignment(graded, path):
    tests = results_json(graded, path)["tests"]
    exercises = [[tag.split(":", 1)[1] for tag in t["tags"] if tag.startswith("exercise:")] for t in tests]
    assert all(len(e) == 1 and e[0] in ASSIGNMENTS[path.parent.name] for e in exercises)


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_results_status_agrees_with_score(graded, path):
    tests = results_json(graded, path)["tests"]
    assert all((t["status"] == "passed") == (t["score"] == t["max_score"] > 0) for t in tests)


@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_results_misconceptions_are_catalogued_and_only_on_failed_tests(graded, path):
    tests = results_json(graded, path)["tests"]
    tagged = [(t["status"], tag.split(":", 1)[1]) for t in tests for tag in t["tags"]
              if tag.startswith("misconception:")]
    assert all(status == "failed" and mid in MISCONCEPTIONS for status, mid in tagged)


# ---------------------------------------------------------------- what the corpus files alone cannot say

def test_malformed_notebook_is_explained_in_one_line(graded):
    results = graded(SUBMISSIONS / "ps1" / "malformed_notebook.ipynb", "ps1")
    lines = results.output.splitlines()
    assert len(lines) == 1 and "malformed_notebook.ipynb" in lines[0]


def test_notebook_whose_metadata_is_a_list_says_so_in_one_line(graded):
    results = graded(SUBMISSIONS / "ps1" / "notebook_metadata_list.ipynb", "ps1")
    said = [line for line in results.output.splitlines() if "metadata is a list" in line]
    assert len(said) == 1 and "notebook_metadata_list.ipynb" in said[0], results.output


def test_notebook_cell_with_a_syntax_error_is_named_in_the_output(graded):
    results = graded(SUBMISSIONS / "ps1" / "notebook_with_magics.ipynb", "ps1")
    assert any(line.startswith("notebook cell 7 has a syntax error") for line in results.output.splitlines())


def test_submission_cannot_write_next_to_itself(sandbox):
    path = SUBMISSIONS / "ps3" / "hostile_snoops_filesystem.py"
    leak = path.parent / "LEAKED_by_hostile_snoops_filesystem.txt"  # the path the file tries to write
    leak.unlink(missing_ok=True)
    grade(with_root(path), "ps3", sandbox=sandbox)
    assert not leak.exists()


# ---------------------------------------------------------------- reference and released notebooks

@pytest.fixture(scope="module")
def reference_py(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("reference") / "reference.py"
    path.write_text(reference_source())
    return path


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_reference_solutions_get_full_marks(graded, reference_py, assignment):
    results = graded(reference_py, assignment)
    assert set(scores_by_outcome(results, assignment).values()) == {"full"}, failures(results)


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_source_notebook_gets_full_marks(graded, assignment):
    results = graded(ROOT / "source" / assignment / f"{assignment}.ipynb", assignment)
    assert set(scores_by_outcome(results, assignment).values()) == {"full"}, failures(results)


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_released_notebook_scores_zero(graded, assignment):
    results = graded(ROOT / "assignments" / assignment / f"{assignment}.ipynb", assignment)
    assert results.score == 0


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_released_notebook_is_not_implemented_everywhere(graded, assignment):
    results = graded(ROOT / "assignments" / assignment / f"{assignment}.ipynb", assignment)
    assert {t.misconception for t in results.tests} == {"not_implemented"}


# ---------------------------------------------------------------- the command line

def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(AUTOGRADER), "grade", *args], capture_output=True, text=True, timeout=120)


def test_cli_writes_the_results_file_and_exits_0(tmp_path):
    out = tmp_path / "out" / "results.json"
    proc = run_cli(str(SUBMISSIONS / "ps2" / "correct_straightforward.py"), "--assignment", "ps2",
                   "--results", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["score"] == doc["max_score"] == sum(t["max_score"] for t in doc["tests"])


def test_cli_stdout_is_the_real_results_whatever_the_submission_prints():
    proc = run_cli(str(SUBMISSIONS / "ps2" / "hostile_fake_results_output.py"), "--assignment", "ps2", "--timeout", "5")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # one JSON document: the fake ones went to the captured output
    assert 0 < doc["score"] < doc["max_score"]


def test_cli_missing_file_exits_nonzero_with_one_line(tmp_path):
    missing = tmp_path / "no_such_submission.py"
    proc = run_cli(str(missing), "--assignment", "ps2")
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_submission.py" in lines[0]


def test_cli_unknown_assignment_exits_nonzero_with_one_line():
    proc = run_cli(str(SUBMISSIONS / "ps2" / "correct_straightforward.py"), "--assignment", "ps9")
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "ps9" in lines[0], proc.stderr
