"""``autograder integrity``: which pairs of a class's submissions look copied, for the instructor.

Three kinds of evidence (docs/integrity.md explains each, and how to read a score):

1. code similarity (fingerprints.py): each student's own code, the released starter code
   removed, normalised by copydetect's rules with tokenize (names, comments and layout do not
   count) and winnowed;
2. traces a copied file carries (traces.py): cell ids, execution counts, machine-specific outputs;
3. rarity (scoring.py): a fingerprint shared by many students, or in the instructor's own
   solution, weighs little or nothing, so the canonical answer accuses no one.

intake.py reads the class as grade-batch does; page.py writes integrity.csv and integrity.html.
A flag is a reason to look at two submissions side by side, never proof.
"""
from .run import IntegrityResult, run_integrity

__all__ = ["IntegrityResult", "run_integrity"]
