# expect: full
# base: reference
# Isolation class 4, signals to the grader and to classmates. Below the full level, and
# above all at the none level without a user namespace, a child runs as a uid that other
# processes share: the grader's worker, the sandbox process, another student's sandbox.
# It finds every pid there is (getpgid answers for any), and tries to signal each one
# that is not its own, with signal 0 (the permission check alone, so nothing is harmed
# when it gets through), by every call there is: kill, kill(-1), rt_sigqueueinfo, tgkill,
# pidfd_send_signal, and SIGIO to an owner of its choosing (F_SETOWN, FIOSETOWN). Right
# only while every one is refused.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import ctypes

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"rt_sigqueueinfo": 129, "tgkill": 234, "pidfd_open": 434, "pidfd_send_signal": 424},
      "aarch64": {"rt_sigqueueinfo": 138, "tgkill": 131, "pidfd_open": 434, "pidfd_send_signal": 424}}.get(os.uname().machine, {})


def _pids():
    me = os.getpid()
    for pid in range(1, 1 << 22):
        if pid == me:
            continue
        try:
            os.getpgid(pid)
        except ProcessLookupError:
            if pid > me + 50_000:
                return  # far past the newest process: nothing else is there
            continue
        except OSError:
            pass  # refused: try it all the same
        yield pid


def _signal_everyone():
    got = []
    for pid in _pids():
        try:
            os.kill(pid, 0)
            got.append(f"kill {pid}")
        except OSError:
            pass
        info = ctypes.create_string_buffer(128)
        if "rt_sigqueueinfo" in NR and _libc.syscall(NR["rt_sigqueueinfo"], pid, 0, info) == 0:
            got.append(f"rt_sigqueueinfo {pid}")
        if "tgkill" in NR and _libc.syscall(NR["tgkill"], pid, pid, 0) == 0:
            got.append(f"tgkill {pid}")
        if "pidfd_open" in NR:
            fd = _libc.syscall(NR["pidfd_open"], pid, 0)
            if fd >= 0:
                if _libc.syscall(NR["pidfd_send_signal"], fd, 0, None, 0) == 0:
                    got.append(f"pidfd_send_signal {pid}")
                os.close(fd)
        if len(got) > 20:
            break
    try:
        os.kill(-1, 0)
        got.append("kill -1 (every process it may signal)")
    except OSError:
        pass
    r, w = os.pipe()
    F_SETOWN, FIOSETOWN = 8, 0x8901
    target = os.getppid()
    if _libc.fcntl(r, F_SETOWN, target) == 0:
        got.append(f"F_SETOWN {target}")
    if _libc.ioctl(r, FIOSETOWN, ctypes.byref(ctypes.c_int(target))) == 0:
        got.append(f"FIOSETOWN {target}")
    os.close(r)
    os.close(w)
    for what in got[:10]:
        breach(f"could signal: {what}")


_signal_everyone()
