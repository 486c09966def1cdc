# expect: full
# base: reference
# Right answers, the reference's, and a marker in this file's own text that lets
# tests/test_isolation.py look for it from a later student's sandbox.

MARKER = "CLASSMATE_MARKER_7f3a9c"
