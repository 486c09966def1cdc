# expect: full
# base: reference
# Isolation class 6, the filesystem half of 20.2: a course where Docker images keep one.
# tests/test_isolation.py and tests/test_census_paths.py leave copies of the course's
# solutions at /usr/src/autograder-course-copy, /opt/autograder-course-copy and
# /home/autograder-course-copy, each readable by anyone and each hidden from the grader as
# the course is. This submission knows those names (the worst case: the student guessed the
# image's layout), and also walks /usr/src, /opt and /home for any solutions/ folder. Right
# on every exercise only while none of it can be read.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


def _look():
    for top in ("/usr/src", "/opt", "/home"):
        copy = f"{top}/autograder-course-copy/solutions/ps3.py"
        try:
            with open(copy) as f:
                if "def " in f.read():
                    breach(f"read the course's solutions at {copy}")
        except OSError:
            pass
        for folder, dirs, files in os.walk(top):
            if os.path.basename(folder) == "solutions" and any(f.startswith("ps") for f in files):
                breach(f"listed a copy of the course at {folder}")
                dirs[:] = []


_look()
