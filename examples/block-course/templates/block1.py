# %% [markdown]
# # Problem set block1: the pieces of a transformer block
#
# Between two attention layers a transformer block does two things to every token on its own:
# it **normalises** it (layer normalisation) and, inside the feed-forward network, passes it
# through a smooth non-linearity (**GELU**). You write both here, in plain `numpy`.
#
# - Each exercise has a cell marked `# YOUR CODE HERE`: replace `raise NotImplementedError()`
#   with your code, keeping the function's name and signature.
# - Run the **check cell** under each exercise: it prints which checks pass and, when one
#   fails, the likely mistake in plain words. Hidden checks on random inputs decide the grade.
# - Never modify an input array in place. Inputs may be `float32` as well as `float64`.

# %% [given]
import numpy as np

np.set_printoptions(precision=3, suppress=True)

# %% [given]
# The worked examples' inputs, the same ones the check cells use (block_course/worked_inputs.py).
from block_course.worked_inputs import BETA, GAMMA, GELU_POINTS, QUIET, TOKENS

# %% [markdown]
# ## Exercise 1: `layer_norm`
#
# A token $x$ of width $d$ is shifted to mean 0 and scaled to variance 1, then given a
# learned scale $\gamma$ and shift $\beta$ (one per feature):
#
# $$\mu = \frac{1}{d}\sum_{j} x_j, \qquad \sigma^2 = \frac{1}{d}\sum_j (x_j - \mu)^2, \qquad
# \operatorname{LN}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}\,\gamma + \beta .$$
#
# The statistics run over the **last axis** (each token on its own), the variance divides by
# $d$, not $d - 1$, and $\varepsilon = 10^{-5}$ sits *inside* the square root, so that a
# constant token does not divide by zero.
#
# By hand, for the token $(1, 2, 3, 4)$: $\mu = 2.5$, $\sigma^2 = 1.25$, and with
# $\gamma = 1, \beta = 0$ the result is $(-1.342, -0.447, 0.447, 1.342)$.

# %% [solution] layer_norm

# %% [tests] layer_norm

# %%
# The two tokens by hand, then with the worked gamma and beta.
print(layer_norm(TOKENS, np.ones(4), np.zeros(4)))
print(layer_norm(TOKENS, GAMMA, BETA))

# %% [markdown]
# A nearly constant token, $(1.000, 1.001, 0.999, 1.002)$, has $\sigma^2 \approx 1.25 \times 10^{-6}$,
# below $\varepsilon$: here it matters that $\varepsilon$ is inside the root. The right answer is
# $(-0.149, 0.149, -0.447, 0.447)$; with $\varepsilon$ outside it would be three times larger.

# %%
print(layer_norm(QUIET, np.ones(4), np.zeros(4)))

# %% [markdown]
# ## Exercise 2: `gelu`
#
# GPT-2's GELU is a smooth cousin of ReLU: about $x$ for large $x$, about 0 for very
# negative $x$, and slightly negative just left of 0. It is the tanh approximation of
# $x\,\Phi(x)$:
#
# $$\operatorname{GELU}(x) = \tfrac12\, x \left(1 + \tanh\!\left(\sqrt{2/\pi}\,\left(x + 0.044715\, x^3\right)\right)\right).$$
#
# At $x = -3, -1, 0, 1, 3$ it is $-0.004, -0.159, 0, 0.841, 2.996$.

# %% [solution] gelu

# %% [tests] gelu

# %%
print(gelu(GELU_POINTS))
