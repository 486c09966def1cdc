# expect: full
# base: reference
# Isolation class 4, cleanup that cannot keep up. It nests folders 3,000 deep in its own
# folder, its TMPDIR, /tmp, /var/tmp and /dev/shm, wherever it may, a file at each level:
# removing them by recursion (shutil.rmtree) ends in a RecursionError, which ended the
# grader's sandbox process. tests/test_resources.py grades a classmate after it and checks
# nothing of it is left.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


def _nest():
    for top in {os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm"}:
        try:
            fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            for level in range(3000):
                name = f".nest-{os.getpid()}" if level == 0 else "d"
                os.mkdir(name, 0o755, dir_fd=fd)
                below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = below
                os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        except OSError:
            pass
        finally:
            os.close(fd)


_nest()
