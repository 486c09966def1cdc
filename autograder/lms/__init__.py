"""Grades into a learning management system, from grade-batch's grades.csv.

    grades.py  read grades.csv back: each student's score (None where not graded) and the maximum
    canvas.py  Canvas's gradebook import CSV, matched to a roster exported from Canvas
    lti.py     LTI Advantage AGS Score objects, and posting them to a line item
"""
