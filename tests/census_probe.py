# The census's probe: a cell run in a real sandbox child (tests/census_runner.py sends this
# file's text as the submission), then ``census`` is called like a student's function.
# It reports what reached the kernel: every syscall number of the kernel's table, and every
# kind of memory, IPC, socket and signal, each with arguments chosen to be harmless.
# Standard library only (the child sees no more); nothing here may rely on a call the
# filter refuses, since the probe runs under it.
import ctypes
import errno
import os
import time

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
ENOSYS = errno.ENOSYS
GRACE = 2.0  # seconds a sub-child's call may take, once made, before it counts as blocked in the kernel: reached


def _raw(nr, *args):
    """(return value, errno) of syscall ``nr``; the arguments as unsigned longs."""
    ctypes.set_errno(0)
    ret = _libc.syscall(ctypes.c_long(nr), *(ctypes.c_ulong(a & (2 ** 64 - 1)) for a in args))
    return ret, ctypes.get_errno()


def _in_sub_child(call):
    """Run ``call`` (returns True when refused) in a forked sub-child, so that a call that
    exits, closes descriptors, blocks or crashes harms only it. 'refused' or 'reached'.

    The sub-child says when it makes the call, and a refusal answers at once, so only a call
    the kernel admitted can still be running ``GRACE`` seconds later (however slow the fork
    was on a loaded machine)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        me = os.getpid()
        try:
            os.write(w, b"!")
            refused = call()
        except BaseException:  # noqa: BLE001
            refused = False
        if os.getpid() != me:  # a clone that came back in a new process
            os._exit(4)
        os._exit(3 if refused else 4)
    os.close(w)
    started = os.read(r, 1)
    os.close(r)
    deadline = time.monotonic() + GRACE
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "refused" if started and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3 else "reached"
        if time.monotonic() > deadline:
            return "reached"  # still in the kernel (it cannot be killed from here: no signals); the sandbox ends it
        time.sleep(0.0005)


_ZERO_TIME = ctypes.create_string_buffer(16)  # a zero timeval or timespec: waiting calls return at once
# Arguments that keep a call from waiting forever, where zeros would (a hole found in one of
# these still shows: it answers something other than ENOSYS)
NOT_WAITING = {"select": (0, 0, 0, 0, ctypes.addressof(_ZERO_TIME), 0),
               "pselect6": (0, 0, 0, 0, ctypes.addressof(_ZERO_TIME), 0),
               "ppoll": (0, 0, ctypes.addressof(_ZERO_TIME), 0, 0, 0)}


def sweep(numbers, table):
    """Every number with six zero arguments (``NOT_WAITING`` for the few that would wait):
    which reached the kernel (answered anything but ENOSYS)."""
    names = {nr: name for name, nr in table.items()}

    def one(nr):
        args = NOT_WAITING.get(names.get(nr), (0,) * 6)
        return lambda: _raw(nr, *args) == (-1, ENOSYS)
    return {str(nr): _in_sub_child(one(nr)) for nr in numbers}


def _answer(ret, err):
    return "ok" if ret >= 0 else errno.errorcode.get(err, str(err))


def _nr(table, name):
    return table.get(name)


def kinds(table, grader_pid):
    """Each kind of memory, IPC, socket and signal, with meaningful arguments: 'ok' or the errno."""
    out = {}

    def sc(label, name, *args):
        nr = _nr(table, name)
        if nr is not None:
            out[label] = _answer(*_raw(nr, *args))

    AF_MAX = 46
    for domain in range(AF_MAX):
        for kind, t in (("stream", 1), ("dgram", 2), ("raw", 3), ("seqpacket", 5)):
            ret, err = _raw(table["socket"], domain, t, 0)
            if ret >= 0:
                out[f"socket {domain} {kind}"] = "ok"
                os.close(ret)
    out["socket any"] = "ok" if any(k.startswith("socket ") for k in out) else "ENOSYS"
    fds = (ctypes.c_int * 2)()
    sc("socketpair unix", "socketpair", 1, 1, 0, ctypes.addressof(fds))
    IPC_PRIVATE, IPC_CREAT = 0, 0o1000
    sc("shmget", "shmget", IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    sc("semget", "semget", IPC_PRIVATE, 1, IPC_CREAT | 0o600)
    sc("msgget", "msgget", IPC_PRIVATE, IPC_CREAT | 0o600)
    sc("mq_open", "mq_open", ctypes.addressof(ctypes.create_string_buffer(b"census")), 0o100 | 2, 0o600, 0)
    sc("memfd_create", "memfd_create", ctypes.addressof(ctypes.create_string_buffer(b"census")), 0)
    # (not the mmap module: below the full level the child may import only what the zygote did)
    sc("mmap shared anonymous", "mmap", 0, 1 << 20, 3, 0x21, -1, 0)  # PROT_READ|WRITE, MAP_SHARED|ANONYMOUS
    for folder in ("/dev/shm", "/tmp", "/var/tmp"):
        if os.path.realpath(folder) == os.path.realpath(os.getcwd()):
            continue  # its own folder (the full level mounts its tmpfs at /tmp)
        try:
            fd = os.open(f"{folder}/census-{os.getpid()}", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
            os.close(fd)
            os.unlink(f"{folder}/census-{os.getpid()}")
            out[f"file in {folder}"] = "ok"
        except OSError as e:
            out[f"file in {folder}"] = errno.errorcode.get(e.errno, str(e.errno))
    me, tid = os.getpid(), _raw(table["gettid"])[0]
    targets = {"itself": me, "its parent": os.getppid(), "pid 1": 1, "the grader": grader_pid, "everyone (-1)": -1,
               "its group (0)": 0}
    for who, pid in targets.items():
        sc(f"kill {who}", "kill", pid, 0)
        sc(f"rt_sigqueueinfo {who}", "rt_sigqueueinfo", pid, 0, 0)
    sc("tkill itself", "tkill", tid, 0)
    sc("tgkill itself", "tgkill", me, tid, 0)
    sc("rt_tgsigqueueinfo itself", "rt_tgsigqueueinfo", me, tid, 0, 0)
    sc("pidfd_open itself", "pidfd_open", me, 0)
    sc("pidfd_send_signal (fd 0)", "pidfd_send_signal", 0, 0, 0, 0)
    for label, call in (("os.kill itself", lambda: os.kill(me, 0)),
                        ("signal.raise_signal SIGUSR1", lambda: __import__("signal").raise_signal(10))):
        try:
            call()
            out[label] = "ok"
        except OSError as e:
            out[label] = errno.errorcode.get(e.errno, str(e.errno))
    r, w = os.pipe()
    F_SETOWN, F_SETSIG, F_GETFL, FIOSETOWN, FIOASYNC = 8, 10, 3, 0x8901, 0x5452
    owner = ctypes.c_int(grader_pid)
    sc("fcntl F_SETOWN the grader", "fcntl", r, F_SETOWN, grader_pid)
    sc("fcntl F_SETSIG", "fcntl", r, F_SETSIG, 9)
    sc("fcntl F_GETFL", "fcntl", r, F_GETFL, 0)
    sc("ioctl FIOSETOWN the grader", "ioctl", r, FIOSETOWN, ctypes.addressof(owner))
    sc("ioctl FIOASYNC", "ioctl", r, FIOASYNC, ctypes.addressof(ctypes.c_int(1)))
    os.close(r)
    os.close(w)
    limits = (ctypes.c_ulong * 2)()
    sc("prlimit64 itself", "prlimit64", 0, 7, 0, ctypes.addressof(limits))
    sc("prlimit64 the grader", "prlimit64", grader_pid, 7, 0, ctypes.addressof(limits))
    sc("setpriority the grader", "setpriority", 0, grader_pid, 19)
    sc("sched_setaffinity the grader", "sched_setaffinity", grader_pid, 8, ctypes.addressof(ctypes.c_ulong(1)))
    sc("ptrace traceme", "ptrace", 0, 0, 0, 0)
    sc("process_vm_readv the grader", "process_vm_readv", grader_pid, 0, 0, 0, 0, 0)
    sc("unshare user namespace", "unshare", 0x10000000)
    sc("unshare nothing", "unshare", 0)
    sc("setns", "setns", 0, 0)
    sc("io_uring_setup", "io_uring_setup", 1, ctypes.addressof(ctypes.create_string_buffer(120)))
    sc("bpf", "bpf", 0, 0, 0)
    sc("perf_event_open", "perf_event_open", 0, 0, -1, -1, 0)
    sc("userfaultfd", "userfaultfd", 0)
    sc("keyctl", "keyctl", 0, 0)
    sc("add_key", "add_key", 0, 0, 0, 0, 0)
    sc("mount", "mount", 0, 0, 0, 0, 0)
    sc("execve /bin/true", "execve", ctypes.addressof(ctypes.create_string_buffer(b"/bin/true")), 0, 0)
    sc("alarm", "alarm", 100)
    sc("setitimer", "setitimer", 0, ctypes.addressof(ctypes.create_string_buffer(32)), 0)
    sc("timer_create", "timer_create", 0, 0, ctypes.addressof(ctypes.c_int()))
    sc("clone3", "clone3", 0, 0)
    for label, flags in (("clone new user namespace", 0x10000000 | 17), ("clone parent", 0x8000 | 17)):
        out[label] = "refused" if _in_sub_child(lambda f=flags: _raw(table["clone"], f, 0, 0, 0, 0) == (-1, ENOSYS)) \
            == "refused" else "ok"
    return out


def aborting():
    """How a process ends that calls abort() with every signal-sending call refused: its
    wait status as (exited code or None, signal or None)."""
    pid = os.fork()
    if pid == 0:
        os.abort()
    _, status = os.waitpid(pid, 0)
    return [os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            os.WTERMSIG(status) if os.WIFSIGNALED(status) else None]


def forks(most):
    """How many processes it can start at once (each waits in pause() until the sandbox ends it)."""
    n = 0
    for _ in range(most):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            while True:
                _libc.pause()
        n += 1
    return n


def census(numbers, table, grader_pid, most_forks):
    table = dict(table)
    return {"sweep": sweep(numbers, table), "kinds": kinds(table, grader_pid), "abort": aborting(),
            "forks": forks(most_forks)}
