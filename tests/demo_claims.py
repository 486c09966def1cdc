"""Where each notebook's prose quotes numbers one of its demo cells prints, and how close the
two must be (tests/test_notebooks.py runs the demos with the reference solutions and compares).

A claim pairs words of the prose (its markdown, or a comment of a code cell) with words of a
demo's output: in each, ``{}`` is a number compared, in order, and ``{_}`` one passed over;
any whitespace matches any. Each side must be found exactly once in its notebook, so a claim
cannot drift to another place that happens to look alike.

How close: the prose and the cell each round one number, so the two may differ by half a unit
of the prose's last digit plus half a unit of the printed number's; a whole number in the prose
is exact. A number numpy prints in an array drops its trailing zeros ("0.33" is 0.330), so it
is taken to the print precision the notebook sets. A claim whose prose states its own
tolerance ("within about ±0.02", "exactly") says it as ``within``.
"""
from __future__ import annotations

import re
from typing import NamedTuple


class Printed(NamedTuple):
    prose: str
    printed: str
    within: float | None = None


NUMBER = r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?"

_WEIGHTS = "| weights | the | river | bank | |---|---|---|---| " \
           "| **the** | {} | {} | {} | | **river** | {} | {} | {} | | **bank** | {} | {} | {} |"
_MATRIX = "[[{} {} {}] [{} {} {}] [{} {} {}]]"

CLAIMS = {
    "ps1": [
        Printed(r"so the weights are $1/8.39 \approx {}$ and $7.39/8.39 \approx {}$", "softmax(0.0, 2.0) = [{} {}]"),
        Printed(r"the weights are $e^3/(e^3+2) \approx {}$ and $1/(e^3+2) \approx {}$",
                "softmax(3.0, 0.0, 0.0) = [{} {} {_}]"),
        Printed(r"\operatorname{softmax}(6, 7, 8) = ({}, {}, {})", "softmax(6.0, 7.0, 8.0) = [{} {} {}]"),
        Printed(r"\operatorname{softmax}(0, -\infty, 1) = ({}, {}, {})", "softmax(0.0, -inf, 1.0) = [{} {} {}]"),
        Printed("after a softmax along each row, the weights: " + _WEIGHTS,
                "raw weights (rows: the, river, bank): " + _MATRIX),
        Printed(r"x_{\text{bank}} = ({},\ {},\ {},\ {}),$$ with water",
                "bank's output (water, money, place, filler): [{} {} {} {}]"),
        Printed("a blend of about **{} parts water", "raw : bank carries water {_}, money {_}: {} parts"),
        Printed("a row puts on average **{}** of its weight on itself",
                "random tokens, T = 4, d = 16: average weight on itself = {}"),
        Printed("| scores | the | river | bank | |---|---|---|---| | **the** | {} | {} | {} | "
                "| **river** | {} | {} | {} | | **bank** | {} | {} | {} | Now bank",
                "scores (unscaled): " + _MATRIX),
        Printed("take the softmax of each row: " + _WEIGHTS, "wired weights (rows: the, river, bank): " + _MATRIX),
        Printed(r"x_{\text{bank}} = ({},\ {},\ {_},\ {_}),$$ water", "wired: bank carries water {}, money {}:"),
        Printed("about **{} parts water to 1 part money**, up from",
                "wired: bank carries water {_}, money {_}: {} parts"),
        Printed("up from {} to 1 with raw attention", "raw : bank carries water {_}, money {_}: {} parts"),
        Printed("bank's weight on river stays {}.", "raw attention, nothing to learn: bank -> river {}"),
        Printed("the self-weight drops to about {} on average", "separate: average weight on itself {}"),
        Printed("climbs back to about {} (raw", "shared : average weight on itself {}"),
        Printed("(raw attention: {}; separate", "raw : average weight on itself {}"),
        Printed("separate matrices: {}), as the cell below", "separate: average weight on itself {}"),
        # "a run of 500 rows, as above, typically lands within about ±0.02 of them on the weights"
        *[Printed(f"| {d} | {root} | {{_}} | {{}} | {{}} |", f"{d} {{_}} {{}} {{}}", within=0.02)
          for d, root in ((4, 2), (16, 4), (64, 8), (256, 16))],
    ],
    "ps2": [
        Printed("divide: weights $({}, {}, {})$", "weights: [[{_} {_} {_}] [{_} {_} {_}] [{} {} {}]]"),
        Printed(r"{_}\,(1,0) = ({}, {}) .$$", "out: [[{_} {_}] [{_} {_}] [{} {}]]"),
        Printed("give weights $({}, {})$", "weights: [[{_} {_} {_}] [{} {} {_}]"),
        Printed(r"its output is exactly its own value $v_{\text{the}} = ({}, {})$", "out: [[{} {}]"),
        Printed("print(weights) # row 2 about [{}, {}, {}]", "weights: [[{_} {_} {_}] [{_} {_} {_}] [{} {} {}]]"),
        Printed("print(out) # row 2 about [{}, {}], row 0", "out: [[{_} {_}] [{_} {_}] [{} {}]]"),
        Printed("row 0 exactly [{}, {}]", "out: [[{} {}]"),
        Printed("weights_b.shape) # ({}, {}, {}) ({}, {}, {})", "batched shapes: ({}, {}, {}) ({}, {}, {})",
                within=0.0),
        Printed("takes home {} of the river guide", "river guide : weight {}"),
        Printed('{} of "bridges and tolls"', "bridges and tolls: weight {}"),
        Printed("and {} of the banking handbook", "banking handbook : weight {}"),
        Printed("(the largest change is exactly {})", "largest change of a weight: {}", within=0.0),
        Printed("fused.shape) # ({}, {}, {})", "output shape: ({}, {}, {})", within=0.0),
    ],
    "ps3": [
        Printed(r'\approx {} \text{ on "cat"}, \qquad \frac{1}{e^3 + 2} \approx {}',
                "weights, unscaled (rows: the, cat, sat): [[{_} {_} {_}] [{} {} {_}]"),
        Printed(r"0.045 \cdot (0, 0) = ({}, {})$", "outputs (animal?, determiner?): [[{_} {_}] [{_} {_}] [{} {}]]"),
        Printed("weights $({}, {}, {})$: less sharp", "causal and scaled by 1/sqrt(2), sat's weights: [{} {} {}]"),
        Printed(r"$e^3/(e^3 + 2) \approx {}$ at the gain 3", "gain 3: sat's weights [{_} {_} {_}], largest {},"),
        Printed("At the gain 0.3 the row is nearly flat (largest weight {}, entropy {},",
                "gain 0.3: sat's weights [{_} {_} {_}], largest {}, entropy {}"),
        Printed('at 1 the weight on "cat" is {} (entropy {})',
                "gain 1: sat's weights [{_} {_} {_}], largest {}, entropy {}"),
        Printed("at 3 it is {} (entropy {})", "gain 3: sat's weights [{_} {_} {_}], largest {}, entropy {}"),
        Printed("at 10 it is {} to three decimals and the entropy {}",
                "gain 10: sat's weights [{_} {_} {_}], largest {}, entropy {}"),
        Printed(r"\cdot(0.9, 0, 0.3, 0) = {}$", "scores X W_QK X^T: [[{_} {_} {_}] [{_} {_} {_}] [{_} {} {_}]]"),
        Printed("(above: rank {} in a", "rank: {} W_Q R", within=0.0),
        Printed("matrix_rank(W_OV)) # ({}, {}), rank {}", "shape: ({}, {}) rank: {}", within=0.0),
        Printed("per_head.shape) # ({}, {}, {}) and ({}, {}, {}, {})", "out: ({}, {}, {}) per_head: ({}, {}, {}, {})",
                within=0.0),
    ],
    "ps4": [
        Printed("the weights come out $({}, {}, {})$ and the output $({}, {})$",
                "weights: [{} {} {}] out: [{} {}]"),
        Printed('print("weights:", weights) # about ({}, {}, {})', "weights: [{} {} {}]"),
        Printed('print("out:", out) # about ({}, {})', "out: [{} {}]"),
        Printed(r"(\sin 1, \cos 1, \sin 0.01, \cos 0.01) = ({}, {}, {}, {})$",
                "the table for T = 3, d = 4: [[{_} {_} {_} {_}] [{} {} {} {}]"),
        Printed(r"(\cos 1, \sin 1, \cos 0.01, \sin 0.01) = ({}, {}, {}, {})$",
                "rope of three copies of (1, 0, 1, 0): [[{_} {_} {_} {_}] [{} {} {} {}]"),
        Printed("It is {} up to rounding (around $10^{-16}$)", "largest change without positions: {}", within=1e-15),
    ],
}


class Side(NamedTuple):
    pattern: re.Pattern
    in_array: tuple[bool, ...]  # for each number compared: printed inside [...], as numpy prints an array


def side(words: str) -> Side:
    """``words`` as a regular expression: ``{}`` a number captured, ``{_}`` one passed over."""
    parts, in_array, depth = [], [], 0
    for part in re.split(r"(\{_?\})", words):
        if part in ("{}", "{_}"):
            bare = rf"(?<![\w.]){NUMBER}(?!\w|\.\d)"  # a whole number: a full stop may follow
            parts.append(f"({bare})" if part == "{}" else bare)
            if part == "{}":
                in_array.append(depth > 0)
            continue
        depth += part.count("[") - part.count("]")
        # A number of the words is never part of a longer one: "4" does not match in "64".
        parts += [(r"(?<![\w.])" if t[0].isdigit() else "") + re.escape(t) + (r"(?!\w)" if t[-1].isdigit() else "")
                  for t in part.split()]
    return Side(re.compile(r"\s*".join(parts)), tuple(in_array))


def half_unit(text: str, floor: int | None = None) -> float:
    """Half a unit of the last digit ``text`` shows (at ``floor`` digits at least, if given)."""
    mantissa = text.lower().split("e")[0]
    digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** -max(digits, floor or 0)


def found(pattern: re.Pattern, text: str) -> list[tuple[str, ...]]:
    """Every match of ``pattern`` in ``text``, as its captured numbers."""
    return [m if isinstance(m, tuple) else (m,) for m in pattern.findall(text)]


def disagreements(claim: Printed, prose: str, printed: str, precision: int) -> list[str]:
    """What is wrong with ``claim``, on a notebook's prose and its demos' printed text: [] if nothing."""
    said, shown = side(claim.prose), side(claim.printed)
    in_prose, in_output = found(said.pattern, prose), found(shown.pattern, printed)
    if len(in_prose) != 1 or len(in_output) != 1:
        return [f"{claim.prose!r} is in the prose {len(in_prose)} times, {claim.printed!r} "
                f"in the output {len(in_output)} times (once each, please)"]
    (quoted,), (shows,) = in_prose, in_output
    if len(quoted) != len(shows):
        return [f"{claim.prose!r} quotes {len(quoted)} numbers, {claim.printed!r} {len(shows)}"]
    wrong = []
    for q, p, array in zip(quoted, shows, shown.in_array, strict=True):
        if claim.within is not None:
            tol = claim.within
        else:
            tol = (0.0 if re.fullmatch(r"-?\d+", q) else half_unit(q)) + half_unit(p, precision if array else None)
        if not abs(float(q) - float(p)) <= tol:
            wrong.append(f"{claim.prose!r}: the prose says {q}, the cell prints {p} (tolerance {tol:g})")
    return wrong
