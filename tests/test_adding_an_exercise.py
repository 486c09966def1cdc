"""A 14th exercise added at run time, graded end to end: proof that the extension points are
the ones docs/authoring.md names, and that nothing else needs an edit.

The toy exercise is `scale_scores(S, d_k)`, the scores over sqrt(d_k), in a problem set of
its own. Its three parts are the ones a real exercise has: the answer (solutions/toy.py, in a
copy of the solutions folder), one catalogued mistake (appended to that copy's
mistakes.py), and its declaration (an `Exercise` registered with the course).
"""
from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

from autograder import assignments, reference
from autograder.checks import Call, Spec, matches_reference
from autograder.exercise import Exercise
from autograder.grade import grade, hidden_paths
from autograder.sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent
F = "scale_scores"

ANSWER = '''
import numpy as np


def scale_scores(S, d_k):
    """Scores over sqrt(d_k), so that they spread like N(0, 1)."""
    return S / np.sqrt(d_k)  # (..., T_q, T_k)
'''
MISTAKE = '''
MISTAKES = MISTAKES + (Mistake("scale_scores", "scale_by_dk", swap("np.sqrt(d_k)", "d_k")),)
'''
RIGHT = "import numpy as np\n\n\ndef scale_scores(S, d_k):\n    return S * d_k ** -0.5\n"
MISTAKEN = "def scale_scores(S, d_k):\n    return S / d_k\n"

MATCHES = Spec("matches the reference", 2)
WIDE = Spec("a wide head (d_k = 256)", 1)


def build(rng):
    c_small = Call(F, (rng.standard_normal((4, 5)), 16))
    c_wide = Call(F, (rng.standard_normal((2, 3, 3)), 256))
    return [MATCHES.bind((c_small,), matches_reference(c_small)),
            WIDE.bind((c_wide,), matches_reference(c_wide))]


def d_k(call):
    return {"d_k": call.args[1]}


TOY = Exercise(F, "toy", build=build, numbers=d_k, specs=(MATCHES, WIDE))


@pytest.fixture(scope="module")
def course_with_toy(tmp_path_factory, monkeypatch_module):
    solutions = tmp_path_factory.mktemp("course") / "solutions"
    shutil.copytree(ROOT / "solutions", solutions, ignore=shutil.ignore_patterns("__pycache__"))
    (solutions / "toy.py").write_text(textwrap.dedent(ANSWER))
    with (solutions / "mistakes.py").open("a") as f:
        f.write(MISTAKE)
    monkeypatch_module.setenv("AUTOGRADER_SOLUTIONS", str(solutions))
    reference.load.cache_clear()
    assignments.register(TOY)
    yield solutions
    assignments.unregister(F)
    reference.load.cache_clear()


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def graded(course_with_toy, tmp_path_factory):
    folder = tmp_path_factory.mktemp("toy-submissions")
    (folder / "right.py").write_text(RIGHT)
    (folder / "mistaken.py").write_text(MISTAKEN)
    with Sandbox(hide=hidden_paths(folder)) as sandbox:
        yield {name: grade(folder / f"{name}.py", "toy", sandbox=sandbox) for name in ("right", "mistaken")}


def test_the_toy_is_an_assignment_with_its_declared_points(course_with_toy):
    assert assignments.ASSIGNMENTS["toy"] == (F,)
    assert assignments.exercise_points(F) == 3


def test_the_reference_loads_the_toy_answer_and_its_mistake(course_with_toy):
    ref = reference.load()
    assert ref.solution(F)(np.array([8.0]), 16) == pytest.approx([2.0])
    assert [m for m, _ in ref.mistakes(F)] == ["scale_by_dk"]


def test_a_right_toy_submission_gets_full_marks(graded):
    results = graded["right"]
    assert (results.score, results.max_score) == (3, 3), [t.output for t in results.tests]


def test_a_mistaken_toy_submission_is_diagnosed_with_its_numbers(graded):
    results = graded["mistaken"]
    assert results.score == 0
    assert {t.misconception for t in results.tests} == {"scale_by_dk"}
    assert "d_k = 16 instead of sqrt(d_k) = 4" in results.tests[0].output


def test_unregistering_an_exercise_restores_the_course():
    before = dict(assignments.ASSIGNMENTS)
    assignments.register(Exercise("throwaway", "ps1", build=build, specs=(MATCHES,)))
    assert assignments.ASSIGNMENTS["ps1"][-1] == "throwaway"
    assignments.unregister("throwaway")
    assert assignments.ASSIGNMENTS == before


def test_an_exercise_name_is_declared_once():
    with pytest.raises(ValueError, match="already declared"):
        assignments.register(Exercise("softmax", "toy", build=build, specs=(MATCHES,)))
