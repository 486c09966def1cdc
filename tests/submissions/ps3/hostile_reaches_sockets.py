# expect: full
# base: reference
# Isolation class 6, sockets made without socket(). socketpair() gives two Unix sockets
# that, as datagram sockets, can send to any address: an abstract name another sandbox or
# the grader listens on (tests/test_resources.py listens on one), a socket file such as
# /dev/log or the test's in /tmp; or be bound to a name of its own for others to reach.
# It tries socketpair of each type, then socket(), each sending to, connecting to and
# binding every address; right only while none gets through.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import ctypes

LISTENER = b"\0autograder-resources-listener"  # tests/test_resources.py's
PLANTED = b"\0autograder-resources-planted"
FILES = [b"/tmp/autograder-resources-listener.sock", b"/dev/log", b"/run/systemd/journal/socket"]
_libc = ctypes.CDLL(None, use_errno=True)


def _address(path):
    raw = (1).to_bytes(2, "little") + path  # sockaddr_un: AF_UNIX, then the name
    return ctypes.create_string_buffer(raw, len(raw)), len(raw)


def _sockets():
    """(how it was made, descriptor) of every Unix socket it can make."""
    AF_UNIX = 1
    for kind, name in ((2, "dgram"), (1, "stream"), (5, "seqpacket")):
        pair = (ctypes.c_int * 2)()
        if _libc.socketpair(AF_UNIX, kind, 0, pair) == 0:
            os.close(pair[1])
            yield f"socketpair {name}", pair[0]
        fd = _libc.socket(AF_UNIX, kind, 0)
        if fd >= 0:
            yield f"socket {name}", fd


def _reach():
    message = b"BREACH from a sandbox child"
    for how, fd in _sockets():
        for target in (LISTENER, *FILES):
            addr, size = _address(target)
            if _libc.sendto(fd, message, len(message), 0x4000, addr, size) >= 0:  # MSG_NOSIGNAL
                breach(f"{how} sent to {target!r}")
            if _libc.connect(fd, addr, size) == 0:
                breach(f"{how} connected to {target!r}")
        addr, size = _address(PLANTED)
        if _libc.bind(fd, addr, size) == 0:
            breach(f"{how} bound {PLANTED!r} for others to reach")
        os.close(fd)


_reach()
