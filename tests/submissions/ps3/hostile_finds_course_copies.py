# expect: full
# base: reference
# Isolation class 6, a deny-list view of the disk. It walks every folder it can list, looking
# for a readable copy of the course (a solutions/ folder, the reference files), reads
# /etc/passwd, and tries to reach the network and other sandboxes through sockets (TCP, an
# abstract Unix socket, a socket file). tests/test_isolation.py leaves a readable copy of
# the solutions on the machine and listens on such a socket while this runs.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import socket


def _look():
    seen = 0
    for folder, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys")]
        seen += 1
        if seen > 20000:
            break
        if os.path.basename(folder) == "solutions" and any(f.startswith("ps") for f in files):
            breach("a copy of the course at " + folder)
            break
    try:
        open("/etc/passwd").read()
        breach("read /etc/passwd")
    except OSError:
        pass
    for family, address in ((socket.AF_INET, ("127.0.0.1", 22)), (socket.AF_UNIX, "\0autograder-isolation-test")):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            s.settimeout(0.5)
            s.connect(address)
            breach(f"connected to {address!r}")
        except OSError:
            pass
        finally:
            s.close()


_look()
