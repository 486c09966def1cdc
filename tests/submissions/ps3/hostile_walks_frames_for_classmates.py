# expect: full
# base: reference
# Isolation class 1, state carried from one student to the next. A top-level cell looks for
# anything of a classmate graded before it, in every form it can reach: the frames it was
# forked under, every object the garbage collector knows, and its own memory through
# /proc/self/mem where that is readable. The marker it looks for is in
# correct_straightforward.py; tests/test_isolation.py grades that file first. Every
# answer is right as long as nothing was found.

import os
import sys

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import gc
import marshal

MARK = "CLASSMATE" + "_MARKER_" + "7f3a9c"


def _hunt():
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, (bytes, bytearray)) and MARK.encode() in value:
                breach("a classmate's job in a frame I was forked under")
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            for value in list(obj.values()):
                if isinstance(value, str) and MARK in value and value is not MARK:
                    breach("a classmate's text among live objects")
                elif isinstance(value, (bytes, bytearray)) and MARK.encode() in value:
                    breach("a classmate's bytes among live objects")
        elif type(obj).__name__ == "code" and MARK in obj.co_consts:
            breach("a classmate's compiled code")
    try:
        maps = open("/proc/self/maps").read().splitlines()
        mem = open("/proc/self/mem", "rb", buffering=0)
    except OSError:
        return
    needle = MARK.encode()
    for line in maps:
        addresses, perms = line.split()[:2]
        if not perms.startswith("r"):
            continue
        start, end = (int(x, 16) for x in addresses.split("-"))
        try:
            mem.seek(start)
            chunk = mem.read(end - start)
        except (OSError, OverflowError, ValueError):
            continue
        hits = chunk.count(needle)
        if hits > 1:  # one is the needle itself
            breach("a classmate's marker in my own memory")
            return


_hunt()
