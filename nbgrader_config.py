# The repository root is this course's nbgrader directory; the settings are the engine's
# (autograder/nbgrader_setup.py: no kernel at autograde, the engine's grades and feedback).
from autograder.nbgrader_setup import configure

configure(get_config(), "attention")  # noqa: F821  (nbgrader injects get_config)
