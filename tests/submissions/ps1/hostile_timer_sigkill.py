# expect: zero wired_attention
# expect: tag wired_attention crashed
# expect: others full
# base: reference
# Hostile: wired_attention asks the kernel to send its own process SIGKILL later
# (timer_create with SIGEV_SIGNAL), with no kill() of its own: a SIGKILL is the signal the
# grader attributes to someone outside the sandbox where the submission cannot send one. A
# seccomp allow-list that refuses kill() but not timer_create would let this turn a zero into
# "the grader failed" (retried, then not graded). It must stay the student's: here the init
# of a pid namespace drops the signal (it is not forced) and it ends itself with os._exit;
# at the uid level without the allow-list the SIGKILL is the student's.

import ctypes
import os
import time


class _SigEvent(ctypes.Structure):  # struct sigevent on Linux: 64 bytes
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_byte * 48)]


class _ITimerSpec(ctypes.Structure):
    _fields_ = [("interval_s", ctypes.c_long), ("interval_ns", ctypes.c_long),
                ("value_s", ctypes.c_long), ("value_ns", ctypes.c_long)]


def wired_attention(X, W_Q, W_K):
    libc = ctypes.CDLL(None, use_errno=True)
    timer = ctypes.c_void_p()
    event = _SigEvent(None, 9, 0)  # SIGKILL, SIGEV_SIGNAL
    if libc.timer_create(1, ctypes.byref(event), ctypes.byref(timer)) == 0:  # CLOCK_MONOTONIC
        libc.timer_settime(timer, 0, ctypes.byref(_ITimerSpec(0, 0, 0, 1_000_000)), None)
        time.sleep(0.2)
    os._exit(0)
