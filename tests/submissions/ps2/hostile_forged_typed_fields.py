# expect: zero attention_with_biases
# expect: tag attention_with_biases crashed
# expect: says attention_with_biases sent back something that is not a result
# expect: others full
# base: reference
# A function that writes, by hand, on every pipe it holds, a RESULT frame that is well
# framed and valid JSON but whose call records have the wrong types: a number where the
# message belongs (after the name NameError), text where the seconds belong, a number where
# the echoed inputs belong. Before issue 20.4 a judge raised on the number (7.startswith)
# and the submission was recorded as the grader's failure (NOT GRADED). Now the record is
# that call's malformed outcome: the exercise scores 0 with a line saying what came back,
# and the exercises before it keep their points. (It is the assignment's last exercise: the
# child's own RESULT that follows is out of order, which ends the run there.) It sends one
# record per call of the exercise's job (8, as the course declares them): with another
# count the count alone would refuse it, and no record would reach a judge.

import json
import os

CALLS = 8  # attention_with_biases's distinct calls in every student's job

_reference_attention_with_biases = attention_with_biases  # noqa: F821 - defined by the reference above


def attention_with_biases(*args, **kwargs):
    _forge()
    return _reference_attention_with_biases(*args, **kwargs)


def _record(i):
    return [{"$dict": {"error": "NameError", "message": 7}},
            {"$dict": {"value": 0.5, "seconds": "fast"}},
            {"$dict": {"value": 0.5, "seconds": 0.1, "inputs_after": 3}}][i % 3]


def _forge():
    doc = {"doc": {"$list": [_record(i) for i in range(CALLS)]}, "arrays": []}
    header = json.dumps(doc).encode()
    payload = len(header).to_bytes(8, "big") + header
    frame = b"R" + len(payload).to_bytes(8, "big") + payload
    for fd in range(3, 1 << 12):  # every descriptor it may hold, wherever the sandbox numbered its pipes
        try:
            os.write(fd, frame)
        except OSError:
            pass
