"""The engine's small parts, one behaviour each: combined judges fail closed, the message
templates fill in, and diagnosis names the catalogued mistake that reproduces an output."""
from __future__ import annotations

import numpy as np
import pytest

from autograder import misconceptions
from autograder.assignments import ASSIGNMENTS, exercise
from autograder.checks import Call, Check, Fail, Spec, Verdict, all_of, each, provided, run_judge, tolerance
from autograder.errors import GraderError
from autograder.grade import plan
from autograder.reference import Answers, load
from autograder.sandbox.frames import CallOutcome

OK = CallOutcome.returned(np.zeros(2))


def passing(outcomes, ref):
    return Verdict(True, "fine")


def failing_quietly(outcomes, ref):
    """A judge bug of the kind each() once let through: it returns a failing verdict."""
    return Verdict(False, "returned, not raised", "missing_scale")


def raising(outcomes, ref):
    raise Fail("raised", "scale_by_dk")


def check_of(judge, n_calls: int = 2) -> Check:
    call = Call("softmax", (np.zeros((2, 2)),))
    return Check("softmax", Spec("a combined judge", 1), (call,) * n_calls, judge)


# ---------------------------------------------------------------- combined judges

@pytest.mark.parametrize("combine", [each, all_of], ids=["each", "all_of"])
def test_combined_judge_passes_when_every_part_passes(combine):
    assert run_judge(check_of(combine(passing, passing)), [OK, OK], None).passed is True


@pytest.mark.parametrize("combine", [each, all_of], ids=["each", "all_of"])
@pytest.mark.parametrize("order", ["first", "last"])
def test_combined_judge_fails_on_a_returned_failing_verdict(combine, order):
    judges = (failing_quietly, passing) if order == "first" else (passing, failing_quietly)
    verdict = run_judge(check_of(combine(*judges)), [OK, OK], None)
    assert (verdict.passed, verdict.message, verdict.misconception) == (False, "returned, not raised", "missing_scale")


@pytest.mark.parametrize("combine", [each, all_of], ids=["each", "all_of"])
def test_combined_judge_fails_on_a_raised_failure(combine):
    verdict = run_judge(check_of(combine(passing, raising)), [OK, OK], None)
    assert (verdict.passed, verdict.misconception) == (False, "scale_by_dk")


@pytest.mark.parametrize("combine", [each, all_of], ids=["each", "all_of"])
def test_combined_judge_of_a_non_verdict_is_a_grader_error(combine):
    with pytest.raises(GraderError, match="instead of a Verdict"):
        run_judge(check_of(combine(passing, lambda o, r: True)), [OK, OK], None)


def test_each_with_fewer_outcomes_than_judges_is_a_grader_error():
    with pytest.raises(GraderError):
        run_judge(check_of(each(passing, passing), n_calls=1), [OK], None)


@pytest.mark.parametrize("combine", [each, all_of], ids=["each", "all_of"])
def test_combined_judge_of_nothing_is_refused(combine):
    with pytest.raises(ValueError):
        combine()


def test_provided_fails_when_the_guard_returns_a_failing_verdict():
    verdict = run_judge(check_of(provided(passing, failing_quietly, "counts only with the guard:")), [OK, OK], None)
    assert not verdict.passed and verdict.message.startswith("counts only with the guard:")


def test_provided_fails_when_the_judge_returns_a_failing_verdict():
    verdict = run_judge(check_of(provided(failing_quietly, passing, "guard")), [OK, OK], None)
    assert (verdict.passed, verdict.misconception) == (False, "missing_scale")


# ---------------------------------------------------------------- message templates

@pytest.mark.parametrize("mistake", sorted(set(misconceptions.explanations()) - {"crashed"}))
def test_every_explanation_fills_in_without_numbers(mistake):
    text = misconceptions.explain(mistake, func="softmax")
    assert text and "{" not in text and "}" not in text


@pytest.mark.parametrize("mistake", sorted(set(misconceptions.explanations()) - {"crashed"}))
def test_every_explanation_fills_in_with_numbers(mistake):
    text = misconceptions.explain(mistake, func="softmax", d_k=16, limit=10)
    assert text and "{" not in text and "}" not in text


def test_scale_by_dk_quotes_both_divisors():
    assert "d_k = 16 instead of sqrt(d_k) = 4" in misconceptions.explain("scale_by_dk", d_k=16)


def test_missing_scale_quotes_the_scale():
    assert "by 1/sqrt(d_k) = 1/4" in misconceptions.explain("missing_scale", d_k=16)


def test_timeout_quotes_the_limit_and_the_function():
    text = misconceptions.explain("timeout", func="causal_mask", limit=2.5)
    assert text.startswith("causal_mask ran past the time limit of 2.5 s")


def test_not_implemented_names_the_function():
    assert misconceptions.explain("not_implemented", func="ov_circuit").startswith("ov_circuit still raises")


@pytest.mark.parametrize(("func", "args", "numbers"), [
    ("scaled_dot_product_attention", (np.zeros((3, 8)), np.zeros((4, 8)), np.zeros((4, 2))), {"d_k": 8}),
    ("wired_attention", (np.zeros((3, 6)), np.zeros((6, 5)), np.zeros((6, 5))), {"d_k": 5, "d_model": 6}),
    ("attention_with_biases", (np.zeros((3, 6)), np.zeros((6, 4)), np.zeros((6, 4)), np.zeros((6, 4))), {"d_k": 4}),
    ("multi_head_attention", (np.zeros((3, 8)), np.zeros((8, 8)), np.zeros((8, 8)), np.zeros((8, 8)),
                              np.zeros((8, 8)), 4), {"d_k": 2, "d_model": 8, "n_heads": 4}),
    ("previous_token_head", (4, 6), {"T": 6}),
    ("sinusoidal_positions", (3, 4), {"d": 4}),
])
def test_explanations_read_their_numbers_from_the_exercise_declaration(func, args, numbers):
    assert misconceptions.context(Call(func, args)) == numbers


def test_an_exercise_without_numbers_quotes_none():
    assert misconceptions.context(Call("softmax", (np.zeros((2, 2)),))) == {}


def test_inputs_of_another_form_quote_no_numbers():
    assert misconceptions.context(Call("scaled_dot_product_attention", ("not", "arrays"))) == {}


# ---------------------------------------------------------------- diagnosis

def part(value, k: int):
    return value[k] if isinstance(value, tuple) else value


def output_of(fn, call, k: int = 0):
    with np.errstate(all="ignore"):
        return part(fn(*call.args, **call.kwargs), k)


def shown_part(mistake, call) -> int | None:
    """The first part of the output in which the mistake shows on this call (a float array
    that differs from the answer's), or None."""
    ref = load()
    try:
        with np.errstate(all="ignore"):
            got, want = ref.edited[mistake.name](*call.args, **call.kwargs), ref.solution(mistake.func)(*call.args,
                                                                                                       **call.kwargs)
    except Exception:  # noqa: BLE001 - the mistake does not apply to these inputs (a crash is graded elsewhere)
        return None
    for k in range(len(want) if isinstance(want, tuple) else 1):
        g, w = part(got, k) if isinstance(got, tuple) == isinstance(want, tuple) else got, part(want, k)
        if isinstance(g, np.ndarray) and g.dtype.kind == "f" and not (
                g.shape == np.shape(w) and np.allclose(g, w, equal_nan=True)):
            return k
    return None


def diagnosis_cases():
    """Every call of every exercise's checks for one student on which one of the catalogue's
    own mistakes of that exercise shows, with the part of the output where it shows."""
    ref = load()
    cases = []
    for assignment in ASSIGNMENTS:
        for name, checks in plan(assignment, "diagnosis").items():
            calls = list({id(c): c for check in checks for c in check.calls}.values())
            for m in (m for m in ref.catalogue if m.func == name):
                cases += [(m, c, k) for c in calls if (k := shown_part(m, c)) is not None]
    return cases


CASES = diagnosis_cases()


def test_every_array_mistake_shows_on_some_call():
    shown = {m.name for m, _, _ in CASES}
    # floats, shapes, or weight matrices whose mistakes show only when the model runs
    not_arrays = ("score_spread", "attention_shapes", "previous_token_head", "key_bias_effect", "induction_heads")
    arrays = {m.name for m in load().catalogue if m.func not in not_arrays}
    assert arrays <= shown


def reproduces(fn, call, k: int, got) -> bool:
    try:
        other = np.asarray(output_of(fn, call, k))
    except Exception:  # noqa: BLE001 - a variant that does not apply to these inputs reproduces nothing
        return False
    atol, rtol = tolerance(got, *[a for a in call.args if isinstance(a, np.ndarray)])
    return other.shape == got.shape and np.allclose(other, got, atol=atol, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize(("mistake", "call", "k"), CASES, ids=[f"{m.name}-{i}" for i, (m, _, _) in enumerate(CASES)])
def test_diagnosis_names_the_mistake_whose_output_it_is_and_none_where_another_gives_it_too(mistake, call, k):
    ref = load()
    got = output_of(ref.edited[mistake.name], call, k)
    found = misconceptions.diagnose(Answers(ref), call, got, lambda v: part(v, k),
                                    *tolerance(got, *[a for a in call.args if isinstance(a, np.ndarray)]))
    twins = {m for m, fn in ref.mistakes(mistake.func) if m != mistake.id and reproduces(fn, call, k, got)}
    assert found == (None if twins else mistake.id), twins


class _TwoMistakes:
    """A reference whose function has two catalogued mistakes, one of them under two entries."""

    def __init__(self, same_output: bool):
        doubled = lambda x: 2 * x  # noqa: E731
        self._variants = (("doubled", doubled), ("doubled", doubled),
                          ("other", doubled if same_output else (lambda x: 3 * x)))

    def mistakes(self, func, inherited=True):
        return self._variants


@pytest.mark.parametrize(("same_output", "named"), [(False, "doubled"), (True, None)])
def test_an_output_two_different_mistakes_give_names_neither(same_output, named):
    call = Call("f", (np.arange(3.0),))
    got = 2 * np.arange(3.0)
    assert misconceptions.diagnose(_TwoMistakes(same_output), call, got, lambda v: v, 1e-9, 1e-9) == named


def test_diagnosis_names_nothing_for_an_output_no_mistake_makes():
    ref = load()
    Q, K, V = (np.random.default_rng(3).standard_normal((4, 8)) for _ in range(3))
    call = Call("scaled_dot_product_attention", (Q, K, V))
    noise = ref.solution(call.func)(Q, K, V)[0] + 0.01
    assert misconceptions.diagnose(Answers(ref), call, noise, lambda v: v[0], 1e-6, 1e-6) is None


def test_every_exercise_is_declared_with_a_visible_and_a_hidden_check():
    for name in (n for names in ASSIGNMENTS.values() for n in names):
        specs = exercise(name).specs
        assert any(s.visible for s in specs) and any(not s.visible for s in specs), name


def test_the_readmes_points_are_the_declarations():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    rows = re.finditer(r"^\| `(\w+)` \| [^|]+ \| (\d+(?:\.\d+)?) \|", readme, re.M)
    table = {m[1]: float(m[2]) for m in rows if m[1] in ASSIGNMENTS}
    assert table == {a: float(sum(exercise(e).points for e in names)) for a, names in ASSIGNMENTS.items()}
