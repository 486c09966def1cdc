# expect: full
# base: reference
# Isolation class 6, another child's job. The grader hands each child its job (the cells, the
# calls and their inputs) pickled, on a pipe the child reads before any of its submission's
# code runs (autograder/sandbox/job.py); a batch's sandbox forks the next child ahead, so
# while this one runs, a classmate's child is waiting on such a pipe. A submission that
# could write into it would run its own code in the classmate's child. It looks through
# /proc at every process that is not its own and tries to open each of its descriptors that
# is a pipe, or that it cannot even tell (every descriptor it can list, 0 to 63 where it
# cannot list them), for writing: without blocking, truncating or writing a byte. Right only
# while none opens.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


def _mine():
    mine = {os.getpid()}
    try:
        mine |= {int(t) for t in os.listdir("/proc/self/task")}
    except OSError:
        pass
    return mine


def _descriptors(pid):
    try:
        return sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return range(64)


def _look():
    mine = _mine()
    try:
        pids = sorted(int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) not in mine)
    except OSError:
        return
    for pid in pids:
        for fd in _descriptors(pid):
            path = f"/proc/{pid}/fd/{fd}"
            try:
                if not os.readlink(path).startswith("pipe:"):
                    continue
            except OSError:
                pass  # not even its kind is to be seen: tried all the same
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                continue
            breach(f"opened {path}, another process's descriptor, for writing")
            return


_look()
