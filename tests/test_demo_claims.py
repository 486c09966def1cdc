"""The comparison of the prose's numbers with the demos' output (tests/demo_claims.py), on
texts of its own: it catches what issue 22 found, and passes only what two roundings allow."""
import pytest

from demo_claims import Printed, disagreements  # tests/demo_claims.py

PRECISION = 3  # np.set_printoptions(precision=3), as every notebook sets it

SHARED = Printed("climbs back to about {} (raw", "shared : average weight on itself {}")


def test_it_catches_a_long_run_mean_quoted_above_a_demo_that_prints_its_own():
    # ps1 said 0.74 above a cell printing 0.731.
    assert disagreements(SHARED, "climbs back to about 0.74 (raw attention", "shared  : average weight on itself 0.731",
                         PRECISION) != []


def test_it_passes_the_same_number_rounded_twice():
    assert disagreements(SHARED, "climbs back to about 0.73 (raw", "shared : average weight on itself 0.731",
                         PRECISION) == []


@pytest.mark.parametrize(("prose", "ok"), [("0.330", True), ("0.336", False)])
def test_numpy_dropped_zeros_count_to_the_print_precision(prose, ok):
    # numpy prints 0.330 as "0.33": the prose's 0.336 is not what it printed.
    claim = Printed("weights $({}, {})$", "weights: [{} {}]")
    assert (disagreements(claim, f"weights $({prose}, 0.670)$", "weights: [0.33 0.67]", PRECISION) == []) is ok


def test_a_whole_number_in_the_prose_is_exact():
    claim = Printed("is exactly {} here", "change: [{}]")
    assert disagreements(claim, "is exactly 0 here", "change: [0.4]", PRECISION) != []


def test_a_stated_tolerance_replaces_the_roundings():
    claim = Printed("| 16 | {} |", "16 {}", within=0.02)
    assert disagreements(claim, "| 16 | 0.748 |", "16 0.733", PRECISION) == []
    assert disagreements(claim, "| 16 | 0.748 |", "16 0.723", PRECISION) != []


def test_words_found_twice_are_refused():
    claim = Printed("weight {}", "weight {}")
    assert disagreements(claim, "weight 0.5 and weight 0.5", "weight 0.5", PRECISION) != []


def test_a_number_of_the_words_is_never_the_end_of_a_longer_one():
    claim = Printed("d = 4: {}", "4 {}")
    assert disagreements(claim, "d = 4: 0.52", "64 0.88", PRECISION) != []
