"""Grades into a learning management system, from grade-batch's grades.csv.

    grades.py        read grades.csv back: each student's score (None where not graded) and the maximum
    canvas.py        Canvas's gradebook import CSV, written over a roster exported from Canvas
    lti.py           LTI Advantage AGS Score objects
    lti_tool.py      the LTI 1.3 tool: configuration, keys, login and launch validation
    lti_server.py    its /login, /launch and /jwks.json endpoints
    lti_services.py  the client-credentials grant, AGS line items and scores, NRPS members
"""
