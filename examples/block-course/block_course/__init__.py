"""The transformer block's pieces, a second course on the same engine: layer normalisation
and GPT-2's GELU. No answers here: this package is what a student may see (its visible
checks); the answers are in solutions/, beside it, never shipped.
"""

# The exercise modules of exercises/, in the order the notebooks teach them. Each says which
# problem set it belongs to; the sets, their exercise lists and the points follow.
EXERCISES = ("layer_norm", "gelu")

# What a submission may import besides numpy and the standard library (the notebook's given
# cells import the worked inputs), imported by the sandbox before it confines itself.
PRELOAD = ("block_course.worked_inputs",)
