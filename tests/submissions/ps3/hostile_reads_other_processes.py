# expect: full
# base: reference
# Isolation class 6, /proc: another process's /proc holds its command line, environment,
# open files and memory maps (the grader's, a classmate's sandbox). This submission tries
# pid 1, its parent, and every pid it can list or guess up to 4,096, and reads what it can of
# each (cmdline, environ, status, maps, its cwd and root links). Its own /proc is not a
# breach. Right on every exercise only while nothing of any other process can be read.

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


def _look():
    mine = _mine()
    try:
        listed = {int(e) for e in os.listdir("/proc") if e.isdigit()}
    except OSError:
        listed = set()
    for pid in sorted(({1, os.getppid()} | listed | set(range(1, 4097))) - mine):
        for leaf in ("cmdline", "environ", "status", "maps"):
            try:
                with open(f"/proc/{pid}/{leaf}", "rb") as f:
                    f.read(1)
                breach(f"read /proc/{pid}/{leaf}")
                return
            except OSError:
                pass
        for leaf in ("cwd", "root"):
            try:
                os.listdir(f"/proc/{pid}/{leaf}")
                breach(f"listed /proc/{pid}/{leaf}")
                return
            except OSError:
                pass


_look()
