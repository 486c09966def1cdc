"""The words for this course's catalogued mistakes: what went wrong and why, for a student.
``{func}`` is the exercise; ``fields`` turns the numbers an exercise's declaration reads off a
call (its ``numbers``) into the phrases the templates quote."""

EXPLANATIONS = {
    "variance_unbiased": (
        "{Your} variance divides by d - 1 (numpy's ddof=1, the unbiased estimate){d_txt}. Layer "
        "normalisation uses the biased variance, the plain mean of the squared deviations "
        "(x.var(axis=-1), ddof=0): it normalises this one token, it does not estimate a population."),
    "eps_outside_sqrt": (
        "eps was added after the square root: (x - mean) / (sqrt(var) + eps). It belongs inside, "
        "sqrt(var + eps). The two agree while the variance is large, and part ways for a nearly "
        "constant token, whose variance is comparable to eps."),
    "normalised_wrong_axis": (
        "The mean and variance were taken over the wrong axis (axis 0, across tokens). Layer "
        "normalisation normalises each token on its own: the statistics run over the last axis "
        "(axis=-1, keepdims=True), the token's features."),
    "gelu_cubic_dropped": (
        "The cubic term is missing: GPT-2's GELU is 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). "
        "Without 0.044715 x^3 the curve agrees at 0 and is off by about 0.01 at x = 1 and 0.02 at x = 3."),
}


def fields(numbers: dict) -> dict:
    """Phrases quoting the call's numbers, empty where a number is unknown."""
    d = numbers.get("d")
    return {"d_txt": f": d = {d}, so d - 1 = {d - 1}" if d else ""}
