"""``python -I -m autograder ...``: the command line in an isolated interpreter (no current
folder on sys.path, no PYTHON* variable, no user site), for environments the operator does
not control, such as a CI job (docs/pytest-classroom.md)."""
from .cli import console

console()
