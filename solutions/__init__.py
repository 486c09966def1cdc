"""Hidden reference solutions: the single source of truth for every answer.

Never shipped to students: the wheel packages only ``autograder/``, and the released
notebooks are generated with these regions stripped. The grader loads this folder by path
(see ``autograder/reference.py``), in its own process only.
"""
