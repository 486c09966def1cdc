# expect: tag attention_shapes crashed
# expect: says attention_shapes attention_shapes raised no function named attention_shapes was defined
# expect: others full
# base: reference
# The words the grader once read meaning back out of, written by the submission itself: the
# child's old line for a function that is not defined (raised by one that is), the sandbox's
# line for a restart (printed, with no restart), a cell's line for a hang (the message of a
# statement that raised). Each is graded as what it is: attention_shapes raised (tag crashed,
# not "not defined"), nothing restarted, nothing hung; every other exercise is right.

print("epoch 1")
print("--- restarted after a cell or exercise that hung or crashed ---")
print("epoch 1")
raise RuntimeError("cell 3 ran past the 10 s time limit and was skipped")


class _Reads(type):
    """An exception class whose name reads as NameError, then as the child's old words."""
    asked = 0

    @property
    def __name__(cls):
        _Reads.asked += 1
        return "NameError" if _Reads.asked % 2 else "no function named attention_shapes was defined"


class _Missing(Exception, metaclass=_Reads):
    def __str__(self):
        return ""


def attention_shapes(B, T_q, T_k, d, d_k, d_v):
    _Reads.asked = 0
    raise _Missing()
