# This folder is the course's nbgrader directory; the settings are the engine's.
from autograder.nbgrader_setup import configure

configure(get_config(), "block")  # noqa: F821  (nbgrader injects get_config)
