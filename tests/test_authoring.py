"""Authoring is what docs/authoring.md says: in a copy of a course, adding an exercise to a
problem set and adding a new problem set each touch only the course's own files (the ones
the recipe lists), `autograder notebooks` rebuilds the rest, and the engine's own course
suite (tests/test_course_contract.py) then passes against the copy, run as a process of its
own with AUTOGRADER_COURSE naming it. The copy holds no engine code: nothing under autograder/
is needed."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COURSE_PARTS = ("course.toml", "nbgrader_config.py", "attention_course", "solutions", "templates", "source",
                "assignments")
# What `autograder notebooks --release` writes: never edited by hand.
GENERATED = ("source/", "assignments/", "attention_course/worked_examples.json")

# ---------------------------------------------------------------- a new exercise in ps1

SCALE_SCORES = {
    "attention_course/exercises/scale_scores.py": '''
        """scale_scores(S, d_k): the scores over sqrt(d_k)."""
        import numpy as np

        from autograder.checks import Call, Spec, leaves_inputs_unchanged, matches_reference, matches_worked
        from autograder.exercise import Boundary, Exercise

        F = "scale_scores"


        def checks(rng):
            c_hand = Call(F, (np.array([[4.0, 8.0], [-4.0, 0.0]]), 16))
            c_rand = Call(F, (rng.standard_normal((3, 4, 5)), 64))
            return [
                Spec("four scores of width 16, by hand", 1, visible=True).bind((c_hand,), matches_worked(c_hand)),
                Spec("matches the reference", 2).bind((c_rand,), matches_reference(c_rand)),
                leaves_inputs_unchanged(c_rand),
            ]


        def numbers(call):
            return {"d_k": call.args[1]}


        DOMAIN = (
            Boundary("S", "any float array: batch axes", ("four scores of width 16, by hand", "matches the reference")),
            Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
        )

        EXERCISE = Exercise(F, "ps1", build=checks, numbers=numbers, domain=DOMAIN)
    ''',
}
SCALE_SCORES_APPENDED = {
    "attention_course/__init__.py": 'EXERCISES = EXERCISES + ("scale_scores",)\n',
    "solutions/ps1.py": '''

        def scale_scores(S, d_k):
            """Scores over sqrt(d_k), so that they spread like N(0, 1)."""
            return S / np.sqrt(d_k)  # (..., T_q, T_k)
    ''',
    "solutions/mistakes.py": ('MISTAKES = MISTAKES + (Mistake("scale_scores", "scale_by_dk", '
                              'swap("np.sqrt(d_k)", "d_k")),)\n'),
    "templates/ps1.py": '''

        # %% [markdown]
        # ## One more exercise: `scale_scores`
        #
        # Divide the scores by $\\sqrt{d_k}$.

        # %% [solution] scale_scores

        # %% [tests] scale_scores
    ''',
}

# ---------------------------------------------------------------- a new problem set, ps5

MEAN_POOL = {
    "attention_course/exercises/mean_pool.py": '''
        """mean_pool(X): a sequence's summary, the mean of its tokens."""
        import numpy as np

        from autograder.checks import Call, Spec, leaves_inputs_unchanged, matches_reference, matches_worked
        from autograder.exercise import Boundary, Exercise

        F = "mean_pool"


        def checks(rng):
            c_hand = Call(F, (np.arange(12.0).reshape(4, 3),))
            c_rand = Call(F, (rng.standard_normal((7, 5)),))
            return [
                Spec("four tokens of width 3, by hand", 1, visible=True).bind((c_hand,), matches_worked(c_hand)),
                Spec("matches the reference", 2).bind((c_rand,), matches_reference(c_rand)),
                leaves_inputs_unchanged(c_rand),
            ]


        DOMAIN = (
            Boundary("X", "(T, d), T >= 1", ("four tokens of width 3, by hand", "matches the reference")),
            Boundary("inputs", "left unchanged", ("leaves its inputs unchanged",)),
        )

        EXERCISE = Exercise(F, "ps5", build=checks, domain=DOMAIN)
    ''',
    "solutions/ps5.py": '''
        """ps5: pooling a sequence."""
        import numpy as np  # noqa: F401  (the notebook's given cell imports it too)


        def mean_pool(X):
            """The mean of the tokens (rows). X (T, d) -> (d,)."""
            return X.mean(axis=0)  # (d,)
    ''',
    "templates/ps5.py": '''
        # %% [markdown]
        # # Problem set 5: pooling
        #
        # A sequence's summary is the mean of its tokens, the rows of `X`.

        # %% [given]
        import numpy as np

        # %% [solution] mean_pool

        # %% [tests] mean_pool
    ''',
}
MEAN_POOL_APPENDED = {
    "attention_course/__init__.py": 'EXERCISES = EXERCISES + ("mean_pool",)\n',
    "solutions/mistakes.py": ('MISTAKES = MISTAKES + (Mistake("mean_pool", "pooled_wrong_axis", '
                              'swap("X.mean(axis=0)", "X.mean(axis=-1)")),)\n'),
    "attention_course/explanations.py": '''
        EXPLANATIONS["pooled_wrong_axis"] = (
            "The mean ran over each token's features instead of over the tokens: the rows of X are the "
            "tokens, so the sequence's summary is X.mean(axis=0).")
    ''',
}


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def write(course: Path, new: dict[str, str], appended: dict[str, str]) -> None:
    for path, text in new.items():
        (course / path).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    for path, text in appended.items():
        with (course / path).open("a", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))


def run(*argv, course: Path, cwd: Path = ROOT, timeout: int = 600) -> subprocess.CompletedProcess:
    # Not an xdist worker's variables: the run started here is a pytest of its own.
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTEST_XDIST"))},
           "AUTOGRADER_COURSE": str(course)}
    return subprocess.run([sys.executable, *map(str, argv)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def authored(tmp_path_factory) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A copy of the attention course with scale_scores added to ps1 and ps5 added, rebuilt;
    with the digests of its files before and after."""
    course = tmp_path_factory.mktemp("authoring") / "course"
    course.mkdir()
    for part in COURSE_PARTS:
        (shutil.copytree if (ROOT / part).is_dir() else shutil.copy)(ROOT / part, course / part)
    before = digests(course)
    write(course, SCALE_SCORES, SCALE_SCORES_APPENDED)
    write(course, MEAN_POOL, MEAN_POOL_APPENDED)
    done = run("-m", "autograder", "notebooks", "--release", course=course, cwd=course)
    assert done.returncode == 0, done.stderr
    return course, before, digests(course)


def test_authoring_touches_only_the_files_the_recipe_names(authored):
    _, before, after = authored
    touched = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    by_hand = {p for p in touched if not p.startswith(GENERATED)}
    assert by_hand == {*SCALE_SCORES, *SCALE_SCORES_APPENDED, *MEAN_POOL, *MEAN_POOL_APPENDED}


def test_the_recipe_names_those_files():
    recipe = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    for path in ("exercises/<name>.py", "__init__.py", "solutions/<set>.py", "solutions/mistakes.py",
                 "templates/<set>.py", "explanations.py", "autograder notebooks --release"):
        assert path in recipe, path


def test_the_new_set_and_exercise_are_the_courses(authored):
    course, _, _ = authored
    code = "from autograder.assignments import ASSIGNMENTS; print(list(ASSIGNMENTS)); print(ASSIGNMENTS['ps1'][-1])"
    done = run("-c", code, course=course, cwd=course)
    assert done.returncode == 0, done.stderr
    sets, last = done.stdout.splitlines()
    assert sets.endswith("'ps5']") and last == "scale_scores"


@pytest.mark.parametrize("which", ["authored copy", "block course"])
def test_the_engines_course_suite_passes_against_it(authored, tmp_path, which):
    if which == "authored copy":
        course = authored[0]
    else:
        course = tmp_path / "block-course"
        shutil.copytree(ROOT / "examples" / "block-course", course, ignore=shutil.ignore_patterns("__pycache__"))
    done = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_course_contract.py", course=course,
               timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout and "skipped" not in done.stdout
