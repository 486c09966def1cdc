"""What the engine asks of any course, checked on the course this run grades for: the
attention course here, and copies with an exercise and a problem set added when
tests/test_authoring.py runs this module against them (AUTOGRADER_COURSE). It iterates over
the course's declared sets, exercises and catalogue; it names none of them.

Besides grading, it holds the checks to adequacy (autograder/adequacy.py): every catalogued
mistake fails a visible check of every exercise it reaches (or its entry says why none can
see it there), loses the same points whatever the student's draw, and every exercise writes
its contract's domain down, each boundary with its checks."""
from __future__ import annotations

import base64
import copy
import json
import re

import numpy as np
import pytest

from autograder import adequacy, course, misconceptions, wire, worked_examples
from autograder.assignments import ASSIGNMENTS, exercise
from autograder.batch import run_batch
from autograder.catalogue import edit_function
from autograder.reference import load

COURSE = course.current()
ROOT = COURSE.root
SETS = list(ASSIGNMENTS)
EXERCISES = [(a, name) for a in SETS for name in ASSIGNMENTS[a]]
CATALOGUE = load().catalogue
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
TIMEOUT = 10.0


def notebook(folder: str, assignment: str) -> dict:
    return json.loads((ROOT / folder / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))


def text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def grade_id(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def answers(assignment: str) -> dict[str, str]:
    """Exercise -> the source notebook's answer cell, without nbgrader's markers."""
    return {grade_id(c)[:-len("_code")]: "\n".join(line for line in text(c).splitlines() if line.strip() not in MARKERS)
            for c in notebook("source", assignment)["cells"] if (grade_id(c) or "").endswith("_code")}


def handed_in(assignment: str, edits: dict[str, str]) -> str:
    """The released notebook with each exercise's cell holding ``edits`` (else the stub)."""
    nb = copy.deepcopy(notebook("assignments", assignment))
    for cell in nb["cells"]:
        name = (grade_id(cell) or "").removesuffix("_code")
        if (grade_id(cell) or "").endswith("_code") and name in edits:
            cell["source"] = edits[name].splitlines(keepends=True)
    return json.dumps(nb, indent=1)


def module_of(assignment: str) -> str:
    return "\n\n\n".join(answers(assignment).values())


# The table holds floats computed on the machine that ran `make notebooks`; another CPU's
# vector width changes their last bits (1.4e-15 was seen), so values compare at a tolerance
# far below any mistake's effect, while everything else (keys, which mistakes, dtypes,
# shapes, order) must be the same.
STALE = "the course's worked_examples.json is stale: run `autograder notebooks`"
RTOL, ATOL = 1e-12, 1e-12


def same_value(a, b) -> bool:
    if isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        if b.dtype.kind in "fc":
            return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(b, (tuple, list, dict)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if isinstance(b, dict):
            return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in b)
        return all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if type(b) is float:
        return type(a) is float and bool(np.isclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
    return type(a) is type(b) and a == b


def decoded(text: str) -> dict:
    doc = json.loads(text)
    as_value = lambda v: wire.decode(base64.b64decode(v))  # noqa: E731
    return {"about": doc["about"],
            "answers": {key: as_value(v) for key, v in doc["answers"].items()},
            "mistakes": [{**e, "value": as_value(e["value"])} for e in doc["mistakes"]]}


def test_the_table_is_what_the_catalogue_and_the_reference_give():
    on_disk = decoded(worked_examples.table_path().read_text(encoding="utf-8"))
    from autograder import notebooks

    fresh = decoded(notebooks.worked_examples_text())
    assert on_disk["about"] == fresh["about"], STALE
    assert sorted(on_disk["answers"]) == sorted(fresh["answers"]), STALE
    assert [(e["call"], e["mistake"], e["exercise"]) for e in on_disk["mistakes"]] == [
        (e["call"], e["mistake"], e["exercise"]) for e in fresh["mistakes"]], STALE
    assert [k for k in fresh["answers"] if not same_value(on_disk["answers"][k], fresh["answers"][k])] == [], STALE
    assert [(e["call"], e["mistake"]) for e, f in zip(on_disk["mistakes"], fresh["mistakes"], strict=True)
            if not same_value(e["value"], f["value"])] == [], STALE


def test_the_course_declares_its_sets_and_exercises():
    assert SETS and all(ASSIGNMENTS[a] for a in SETS)
    assert len({name for _, name in EXERCISES}) == len(EXERCISES)


@pytest.mark.parametrize("assignment,name", EXERCISES)
def test_each_exercise_has_a_visible_and_a_hidden_check(assignment, name):
    checks = exercise(name).checks(np.random.default_rng(0))
    assert any(c.visible for c in checks) and any(not c.visible for c in checks)


@pytest.mark.parametrize("assignment,name", EXERCISES)
def test_each_exercise_has_a_reference_answer(assignment, name):
    assert callable(load().solution(name))


@pytest.mark.parametrize("assignment,name", EXERCISES)
def test_the_released_notebook_has_its_stub_and_its_check_cell_worth_its_points(assignment, name):
    cells = {grade_id(c): c for c in notebook("assignments", assignment)["cells"]}
    assert cells[f"{name}_code"]["metadata"]["nbgrader"]["solution"] is True
    assert "raise NotImplementedError()" in text(cells[f"{name}_code"])
    assert cells[name]["metadata"]["nbgrader"]["points"] == exercise(name).points


@pytest.mark.parametrize("assignment", SETS)
def test_the_source_notebook_is_what_the_templates_build(assignment):
    from autograder import notebooks

    on_disk = (ROOT / "source" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8")
    assert on_disk == notebooks.notebook_text(assignment), "source/ is stale: run `autograder notebooks`"


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict[str, dict]]:
    """Per set: the right answers, the untouched release, and each of the set's catalogued
    mistakes (the right answers with that one edit), graded by grade-batch; results by student."""
    out: dict[str, dict[str, dict]] = {}
    for assignment in SETS:
        subs = tmp_path_factory.mktemp(f"{assignment}-class")
        right = answers(assignment)
        students = {"right": right, "stub": {}}
        source = module_of(assignment)
        for mistake in CATALOGUE:
            if mistake.func in right:
                edited = dict(right, **{mistake.func: edit_function(source, mistake.func, mistake.edit)})
                # The whole edited module in the exercise's cell; the others as they were.
                students[mistake.name.replace(":", "_")] = edited
        for student, edits in students.items():
            (subs / f"{student}.ipynb").write_text(handed_in(assignment, edits), encoding="utf-8")
        results = tmp_path_factory.mktemp(f"{assignment}-out")
        assert run_batch(subs, assignment, results, jobs=2, timeout=TIMEOUT, progress=False).failures == []
        out[assignment] = {p.stem: json.loads(p.read_text()) for p in results.glob("*.json")}
    return out


@pytest.mark.parametrize("assignment", SETS)
def test_the_right_answers_get_full_marks(graded, assignment):
    results = graded[assignment]["right"]
    assert results["score"] == results["max_score"] > 0, [t["output"] for t in results["tests"] if t["score"] == 0]


@pytest.mark.parametrize("assignment", SETS)
def test_the_untouched_release_gets_nothing_and_says_so(graded, assignment):
    results = graded[assignment]["stub"]
    assert results["score"] == 0
    assert {tag for t in results["tests"] for tag in t["tags"] if tag.startswith("misconception:")} == {
        "misconception:not_implemented"}


@pytest.mark.parametrize("mistake", CATALOGUE, ids=lambda m: m.name)
def test_each_catalogued_mistake_costs_its_exercise_points_and_is_named_there(graded, mistake):
    assignment = exercise(mistake.func).assignment
    tests = graded[assignment][mistake.name.replace(":", "_")]["tests"]
    own = [t for t in tests if f"exercise:{mistake.func}" in t["tags"]]
    lost = [t for t in own if t["score"] < t["max_score"]]
    assert lost, f"{mistake.name} gets full marks"
    assert any(f"misconception:{mistake.id}" in t["tags"] for t in lost), [t["tags"] for t in lost]


# ---------------------------------------------------------------- adequacy

@pytest.fixture(scope="module")
def matrix() -> adequacy.Matrix:
    return adequacy.compute(adequacy.STUDENTS)


def _rows(matrix, mistake) -> tuple:
    rows = matrix.for_mistake(mistake.name)
    assert rows, f"{mistake.name} reaches no exercise"
    return rows


@pytest.mark.parametrize("mistake", CATALOGUE, ids=lambda m: m.name)
def test_each_catalogued_mistake_fails_a_visible_check_of_every_exercise_it_reaches(matrix, mistake):
    rows = _rows(matrix, mistake)
    owed = [r.exercise for r in rows if r.blind and not r.blind_reason]
    assert owed == [], (f"{mistake.name} passes every visible check of {', '.join(owed)}: give it a visible check "
                        "there, or say in its catalogue entry why none can see it (visible_blind={exercise: reason})")
    reached = {r.exercise: r for r in rows}
    stale = [e for e, _ in mistake.visible_blind if e not in reached or not reached[e].blind]
    assert stale == [], (f"{mistake.name}: visible_blind names {stale}, where a visible check does see it "
                         "(or where it never reaches)")
    for exercise_name, reason in mistake.visible_blind:
        print(f"{mistake.name} in {exercise_name}, visible_blind: {reason}")


@pytest.mark.parametrize("mistake", CATALOGUE, ids=lambda m: m.name)
def test_a_catalogued_mistake_loses_the_same_points_whatever_the_students_draw(matrix, mistake):
    unstable = {r.exercise: r.lost for r in _rows(matrix, mistake) if not r.stable}
    assert unstable == {}, f"{mistake.name} loses these points, student by student: {unstable}"


@pytest.mark.parametrize("mistake", sorted({m.id for m in CATALOGUE}))
def test_each_mistakes_words_speak_to_the_student_and_about_them_to_the_instructor(mistake):
    """One template, two readers (misconceptions.WORDS): the course marks its "your" and its
    fixes, so neither reading has the other's words."""
    for func in sorted({m.func for m in CATALOGUE if m.id == mistake}):
        to_them = misconceptions.explain(mistake, func=func)
        about_them = misconceptions.explain(mistake, misconceptions.Audience.INSTRUCTOR, func=func)
        assert not re.search(r"\bthe student\b|The fix:", to_them, re.I), to_them
        assert not re.search(r"\byou(r)?\b", about_them, re.I), about_them


# What may follow a bare {you}: a verb in the past, or a modal, both of which agree with "you"
# and "the student" alike. A verb in the present is written {you:verb} (misconceptions.Subject).
AGREES_WITH_BOTH = re.compile(r"\w+ed|took|made|wrote|gave|got|left|put|set|ran|split|kept|built|found|had|did|"
                              r"went|can|could|should|would|will|must|may|might|also|then|never")


def templates() -> dict[str, str]:
    words = COURSE.explanations
    return {**{m: t for m, t in words.EXPLANATIONS.items()},
            **{f"{m} in {f}": t for (m, f), t in getattr(words, "FOR_EXERCISE", {}).items()}}


@pytest.mark.parametrize("name", sorted(templates()))
def test_each_verb_after_the_reader_agrees_with_both_readers(name):
    """Read about the student, "{you} return" would say "the student return": a verb in the
    present names itself in the field, {you:return}, and agrees ("the student returns")."""
    for m in re.finditer(r"\{[Yy]ou\} (\w+)", templates()[name]):
        assert AGREES_WITH_BOTH.fullmatch(m.group(1)), f"{name}: write {{{m.group(0)[1:4]}:{m.group(1)}}}"


@pytest.mark.parametrize("mistake", CATALOGUE, ids=lambda m: m.name)
def test_a_catalogued_mistake_is_never_named_as_another_one(matrix, mistake):
    """A check names a mistake only by its output: another entry's id on this one's output is a
    wrong diagnosis (an output two mistakes share names neither)."""
    misnamed = {r.exercise: r.misnamed for r in _rows(matrix, mistake) if r.misnamed}
    assert misnamed == {}, f"{mistake.name} is named as another mistake, by exercise and check: {misnamed}"


@pytest.mark.parametrize("assignment,name", EXERCISES)
def test_each_exercise_writes_its_contracts_domain_down_with_a_check_for_each_boundary(assignment, name):
    declared = exercise(name)
    titles = {s.title for s in declared.specs}
    assert declared.domain, f"{name}: write its contract's domain down (Exercise(..., domain=(Boundary(...), ...)))"
    unknown = [(b.argument, t) for b in declared.domain for t in b.checks if t not in titles]
    assert all(b.checks for b in declared.domain) and unknown == [], f"{name}: boundaries with no such check: {unknown}"


@pytest.mark.parametrize("assignment,name", EXERCISES)
def test_an_exercise_that_takes_arrays_checks_they_are_left_unchanged(assignment, name):
    calls = [c for check in exercise(name).checks(np.random.default_rng(0)) for c in check.calls]
    takes_arrays = any(isinstance(a, np.ndarray) for c in calls for a in (*c.args, *c.kwargs.values()))
    assert not takes_arrays or any(c.echo for c in calls), f"{name} takes arrays: add leaves_inputs_unchanged"
