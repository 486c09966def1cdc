"""Issue 8: text stored in results is capped on the grader's side, and grades.csv and the
feedback page cannot be turned against the people who open them."""
import csv
import io
from pathlib import Path

import pytest

from autograder.grade import MAX_OUTPUT, MAX_TEST_OUTPUT, grade
from autograder.names import MAX_LINE
from autograder.results import CellEnd, CellProblem
from autograder.report.feedback import feedback_html
from autograder.report.table import grades_csv, neutralise
from autograder.sandbox import ExerciseRun, SandboxResult
from autograder.sandbox.frames import CallOutcome

ROOT = Path(__file__).resolve().parent.parent
CORRECT = ROOT / "tests" / "submissions" / "ps2" / "correct_straightforward.py"
FLOOD = "<" * (1 << 20)  # 1 MiB stands for the 64 MiB flood: the caps do not depend on the size


class FloodingSandbox:
    """Answers like a sandbox whose submission flooded one channel with "<"."""

    def __init__(self, channel):
        self.channel = channel

    def run(self, cells, exercises, timeout, memory):
        # A message past frames.MAX_LINE does not parse: only the grader's own typed values can carry one.
        outcome = (CallOutcome.raised("ValueError", FLOOD) if self.channel == "message"
                   else CallOutcome.returned(FLOOD))
        runs = {name: (ExerciseRun("crashed", detail=FLOOD) if self.channel == "crash detail"
                       else ExerciseRun("ok", (outcome,) * len(calls))) for name, calls in exercises}
        problems = [CellProblem(0, CellEnd.RAISED, FLOOD, FLOOD)] if self.channel == "cell problem" else []
        return SandboxResult(runs, problems, (FLOOD,) if self.channel == "printed" else (), 0.1)


CHANNELS = ["message", "returned value", "crash detail", "cell problem", "printed"]


@pytest.fixture(params=CHANNELS)
def flooded(request):
    return grade(CORRECT, "ps2", sandbox=FloodingSandbox(request.param), student="ada")


def test_each_tests_output_is_capped(flooded):
    assert all(len(t.output) <= MAX_TEST_OUTPUT + 100 for t in flooded.tests)


def test_the_results_output_is_capped(flooded):
    assert len(flooded.output) <= MAX_OUTPUT


def test_a_flooded_cells_problem_is_kept_typed_at_one_line():
    (problem,) = grade(CORRECT, "ps2", sandbox=FloodingSandbox("cell problem"), student="ada").cell_problems
    assert len(problem.message) <= MAX_LINE and len(problem.error) <= MAX_LINE


def test_the_results_file_stays_small(flooded):
    assert len(flooded.to_json()) < 400_000  # 36 tests of at most a few kB each


def test_a_cut_says_it_was_cut(flooded):
    texts = [flooded.output] + [t.output for t in flooded.tests]
    cut = [t for t in texts if "<" * 250 in t]
    assert all("cut by the grader" in t or "the last 2000 characters" in t or "…" in t for t in cut)


def test_the_feedback_page_escapes_everything_and_stays_small(flooded):
    page = feedback_html("<script>alert(1)</script>", "ps2", flooded)
    assert "<script>" not in page and "<<" not in page
    assert len(page) < 2_000_000


@pytest.mark.parametrize("cell", ["=1+1", "+A1", "-cmd|' /C calc'!A0", "@SUM(A1)", "\tx", "\rx", "=", "-"])
def test_a_cell_that_starts_a_formula_is_neutralised(cell):
    assert neutralise(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-1", "-1.5", "+3", "1e5", "-2.5e-3", "0", "ada", "'quoted"])
def test_numbers_and_plain_text_are_left_alone(cell):
    assert neutralise(cell) == cell


def test_a_negative_score_stays_a_number_in_grades_csv():
    rows = [{"student": "=evil()", "score": -1, "max_score": 36, "exercises": {"causal_mask": -1}}]
    table = list(csv.reader(io.StringIO(grades_csv(rows, ("causal_mask",)))))
    assert table[1] == ["'=evil()", "-1", "36", "-1"]
