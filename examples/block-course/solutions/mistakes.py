"""The catalogue of known mistakes: the reference with one edit each, and the misconception
it shows (ids explained in block_course/explanations.py). Hidden like the solutions."""
from autograder.catalogue import Mistake, swap

MISTAKES = (
    Mistake("layer_norm", "variance_unbiased",
            swap("x.var(axis=-1, keepdims=True)", "x.var(axis=-1, keepdims=True, ddof=1)")),
    Mistake("layer_norm", "eps_outside_sqrt", swap("np.sqrt(var + eps)", "(np.sqrt(var) + eps)")),
    Mistake("layer_norm", "normalised_wrong_axis",
            swap("x.mean(axis=-1, keepdims=True)", "x.mean(axis=0, keepdims=True)",
                 "x.var(axis=-1, keepdims=True)", "x.var(axis=0, keepdims=True)")),
    Mistake("gelu", "gelu_cubic_dropped", swap("(x + 0.044715 * x**3)", "x")),
)
