"""The syscalls a sandbox child may make: an allow-list, built with libseccomp.

``ALLOWED`` is the one declared list. It was derived by measurement
(``tests/measure_syscalls.py`` grades the whole corpus under ``strace -ff`` and prints what
the children called once their filter was in force), then widened only by families plain
Python and numpy may reach on other inputs (threads, files in the child's own folder,
waiting, time); each family says why it is there. Everything else is refused, and
``tests/test_census_syscalls.py`` calls every syscall number the kernel's table has from a
real child at every level to check that exactly this list gets through.

What is refused, on purpose (none of it is needed to grade Python and numpy):
every way to make or reach a socket; SysV and POSIX message queues, semaphores and shared
memory segments, memfd, shared mappings (memory no process's size shows; usage.py says
what the watch counts instead); new namespaces, ``setns``, mounts;
``ptrace``, ``process_vm_*``, ``kcmp``, pidfds; ``bpf``, ``io_uring``, keyrings,
``perf_event_open``, ``userfaultfd``; ``execve`` (nothing to run but Python, which is
running); and every call that sends a signal or makes the kernel send one later (``kill``,
``tkill``, ``tgkill``, ``rt_sigqueueinfo``, ``rt_tgsigqueueinfo``, ``pidfd_send_signal``,
timers that end in SIGALRM, ``fcntl(F_SETOWN/F_SETSIG)`` and ``ioctl(FIOSETOWN)`` for
SIGIO, ``clone`` with CLONE_PARENT): a child sends no signal to anyone, itself included, so
a signal that ends it came from the sandbox or from the kernel as the direct result of what
it ran (SIGSEGV, SIGFPE, SIGBUS, SIGXCPU, SIGXFSZ), never from another process of its own.
Also refused: calls that reach other processes of the same uid (at the ``none`` level
without a user namespace that is the grader's): ``prlimit64`` on another pid,
``sched_set*``, ``setpriority``, ``ioprio_set``, ``migrate_pages``, ``move_pages``.

Every refusal answers ENOSYS ("Function not implemented"), including the named ones:
- ENOSYS is the answer library code expects from a kernel that lacks a call, and falls
  back on (glibc's ``clone3`` -> ``clone``, ``faccessat2`` -> ``faccessat``, Python's
  ``close_range`` -> a loop); EPERM is an error it passes on. A call the list does not name
  is a call this sandbox's kernel does not have.
- The kernel itself answers ENOSYS for nothing but calls it lacks, whatever the arguments
  or privileges, while EPERM is the answer of a thousand permission checks: so a refusal
  is told apart from the kernel's own answer without knowing any call's arguments (the
  census relies on it). Python raises OSError for it, as for any failed call; no refusal
  kills (SIGSYS would look like the student's crash).

The filter is built once in the zygote (``program``) and exported as BPF; a child only
hands the kernel the exported program (``apply``), which costs it one prctl.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
from dataclasses import dataclass

REFUSED = errno.ENOSYS  # what every refused call answers (see above)

# family -> (why, syscalls). Names absent on an architecture (the legacy x86_64 calls on
# aarch64) are skipped there.
ALLOWED: dict[str, tuple[str, tuple[str, ...]]] = {
    "memory": ("the interpreter's and numpy's allocations; counted in the process's size (RLIMIT_AS, the watch); "
               "mmap only private (ARGUMENTS)",
               ("brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync", "mincore")),
    "files": ("reading the Python installation and the child's own folder; which paths is the view's and "
              "Landlock's business, not this filter's",
              ("read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2",
               "pwritev2", "open", "openat", "creat", "close", "close_range", "lseek", "stat", "fstat", "lstat",
               "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink",
               "readlinkat", "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink",
               "unlinkat", "rename", "renameat", "renameat2", "truncate", "ftruncate", "fsync", "fdatasync",
               "fadvise64", "fallocate", "flock", "chmod", "fchmod", "fchmodat", "umask", "utimensat",
               "sendfile", "copy_file_range", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr",
               "flistxattr")),
    "descriptors": ("pipes and descriptor bookkeeping (os.pipe, dup, isatty); fcntl and ioctl only for the "
                    "commands in ARGUMENTS", ("dup", "dup2", "dup3", "pipe", "pipe2", "fcntl", "ioctl")),
    "waiting": ("select/poll/epoll on its own descriptors (the results protocol, selectors), sleeping",
                ("poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl",
                 "epoll_wait", "epoll_pwait", "epoll_pwait2", "nanosleep", "clock_nanosleep", "pause",
                 "sched_yield")),
    "time": ("time.time, perf_counter, process_time (the vDSO falls back to these)",
             ("clock_gettime", "clock_getres", "gettimeofday", "time", "times", "getrusage")),
    "processes": ("os.fork, threads and waiting for them; clone only without CLONE_NEW*/CLONE_PARENT "
                  "(ARGUMENTS); counted by RLIMIT_NPROC, the pids cgroup or the uid's watch",
                  ("clone", "wait4", "waitid", "exit", "exit_group", "futex", "set_robust_list", "rseq",
                   "set_tid_address")),
    "signals": ("a child's own signal handlers and masks (Python installs some; KeyboardInterrupt); sending "
                "any signal is refused", ("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
                                          "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait", "restart_syscall")),
    "identity": ("reading who and where it is (os.getpid, getuid, uname, cpu counts, limits); prlimit64 only "
                 "on itself (ARGUMENTS)",
                 ("getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
                  "getresuid", "getresgid", "getpgrp", "getpgid", "getsid", "capget", "uname", "sysinfo",
                  "getcpu", "sched_getaffinity", "getrlimit", "setrlimit", "prlimit64", "getrandom")),
}

CLONE_NEW = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
CLONE_PARENT = 0x00008000
MAP_SHARED = 0x01  # MAP_SHARED_VALIDATE (0x03) has it too
_FCNTL = {"F_DUPFD": 0, "F_GETFD": 1, "F_SETFD": 2, "F_GETFL": 3, "F_SETFL": 4, "F_GETLK": 5, "F_SETLK": 6,
          "F_SETLKW": 7, "F_GETOWN": 9, "F_OFD_GETLK": 36, "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38,
          "F_DUPFD_CLOEXEC": 1030, "F_GETPIPE_SZ": 1032}
_IOCTL = {"TCGETS": 0x5401, "TIOCGWINSZ": 0x5413, "FIONREAD": 0x541B, "FIONBIO": 0x5421, "FIONCLEX": 0x5450,
          "FIOCLEX": 0x5451}


@dataclass(frozen=True)
class Rule:
    """The calls of ``syscall`` allowed: those whose argument ``arg`` passes ``test``:
    ``("in", values)``, ``("mask_zero", mask)`` (no bit of mask set) or ``("eq", value)``."""
    syscall: str
    arg: int
    test: str
    value: object
    why: str

    def admits(self, value: int) -> bool:
        """Whether a call whose argument ``arg`` is ``value`` gets through (what the census expects)."""
        if self.test == "mask_zero":
            return value & self.value == 0
        if self.test == "eq":
            return value == self.value
        if self.test == "in":
            return value in self.value
        raise ValueError(f"unknown argument test {self.test!r}")


ARGUMENTS: tuple[Rule, ...] = (
    Rule("clone", 0, "mask_zero", CLONE_NEW | CLONE_PARENT,
         "no new namespaces; no child of the zygote's (its exit signal would go there)"),
    Rule("fcntl", 1, "in", tuple(_FCNTL.values()),
         "not F_SETOWN/F_SETSIG/F_SETOWN_EX (SIGIO to a pid of its choosing), F_SETLEASE or F_NOTIFY (signals)"),
    Rule("ioctl", 1, "in", tuple(_IOCTL.values()),
         "isatty, terminal size, bytes readable, (non)blocking, close-on-exec; not FIOSETOWN/FIOASYNC (SIGIO) "
         "nor a terminal's TIOCSTI"),
    Rule("prlimit64", 0, "eq", 0, "its own limits only: not another process of the same uid's"),
    Rule("mmap", 3, "mask_zero", MAP_SHARED,
         "private mappings only: a shared one's pages outlive the part still mapped (unmap all of 1 GiB of "
         "shared anonymous memory but a page, and 1 GiB stays that no process's size shows), which only a "
         "cgroup would count"),
)


# Numbers the kernel itself exempts from every seccomp filter (x86_64, Linux 6.11 and 6.16 on):
# uretprobe (335) and uprobe (336) do their work only when called from the kernel's own
# uprobe trampoline, and answer any other caller with SIGILL or SIGSEGV, its own fault.
# Older kernels and libseccomp 2.5 have no name for them; the filter refuses them there.
KERNEL_UNFILTERED: dict[str, tuple[int, ...]] = {"x86_64": (335, 336)}


def allowed_names() -> frozenset[str]:
    return frozenset(n for _, names in ALLOWED.values() for n in names)


_loaded: list = []  # [module or None, why it is missing]: pyseccomp, once loaded


def _sc():
    """pyseccomp, imported on first use: only the zygote needs it (it builds the program
    before it confines itself, while libseccomp.so is in sight), not the grader's process."""
    if not _loaded:
        _loaded.extend(_import_pyseccomp())
    if _loaded[0] is None:
        raise OSError(f"no libseccomp: {_loaded[1]}")
    return _loaded[0]


# pyseccomp finds libc and libseccomp with ctypes.util.find_library, which runs `ldconfig -p`
# as a subprocess each time: tens of milliseconds of every sandbox's start. Their sonames are
# stable ABI names that dlopen finds on its own; find_library is asked only where it does not.
_SONAMES = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}


def _import_pyseccomp():
    import ctypes
    import ctypes.util

    slow = ctypes.util.find_library

    def find_library(name):
        soname = _SONAMES.get(name)
        if soname:
            try:
                ctypes.CDLL(soname)
                return soname
            except OSError:
                pass
        return slow(name)

    ctypes.util.find_library = find_library
    try:
        import pyseccomp
        return pyseccomp, ""
    except (ImportError, RuntimeError, OSError) as e:  # not installed, or no libseccomp.so.2 on the machine
        return None, str(e)
    finally:
        ctypes.util.find_library = slow


def native_number(name: str) -> int | None:
    """The syscall's number on this machine's architecture (libseccomp's table), or None
    where the architecture has no such call."""
    n = _sc().resolve_syscall(_sc().Arch.NATIVE, name)
    return n if n >= 0 else None


def native_name(number: int) -> str | None:
    try:
        return _sc().resolve_syscall(_sc().Arch.NATIVE, number).decode()
    except ValueError:
        return None


def _build():
    sc = _sc()
    refused = sc.ERRNO(REFUSED)
    f = sc.SyscallFilter(refused)
    f.set_attr(sc.Attr.ACT_BADARCH, refused)  # i386 (int 0x80) and x32 calls from a 64-bit process
    f.set_attr(sc.Attr.CTL_NNP, 1)
    names = allowed_names()
    ruled = {r.syscall for r in ARGUMENTS}
    assert ruled <= names, ruled - names
    for name in sorted(names - ruled):
        if native_number(name) is not None:
            f.add_rule(sc.ALLOW, name)
    for r in ARGUMENTS:
        if native_number(r.syscall) is None:
            continue
        if r.test == "mask_zero":
            f.add_rule(sc.ALLOW, r.syscall, sc.Arg(r.arg, sc.MASKED_EQ, r.value, 0))
        elif r.test == "eq":
            f.add_rule(sc.ALLOW, r.syscall, sc.Arg(r.arg, sc.EQ, r.value))
        elif r.test == "in":
            for v in r.value:
                f.add_rule(sc.ALLOW, r.syscall, sc.Arg(r.arg, sc.EQ, v))
        else:
            raise ValueError(f"unknown argument test {r.test!r}")
    if platform.machine() == "x86_64":
        # x32 calls come with x86_64's audit arch and bit 30 set in the number: a filter for
        # x86_64 alone lets them through (the census found it). Merge in an x32 section that
        # allows nothing, so they answer ENOSYS.
        x32 = sc.SyscallFilter(refused)
        x32.set_attr(sc.Attr.ACT_BADARCH, refused)
        x32.set_attr(sc.Attr.CTL_NNP, 1)
        x32.add_arch(sc.Arch.X32)
        x32.remove_arch(sc.Arch.NATIVE)
        f.merge(x32)
    return f


class Program(ctypes.Structure):
    """struct sock_fprog: what prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ...) takes."""
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.lru_cache(maxsize=1)
def program() -> tuple[ctypes.Array, Program]:
    """The allow-list as a BPF program, built by libseccomp and exported once (in the
    zygote, before it forks: every child inherits it built). Raises OSError where
    libseccomp cannot be had."""
    f = _build()
    # Through a pipe: the zygote's root is read-only by now. A filter has at most 4096
    # instructions of 8 bytes, which a pipe's 64 KiB holds without a reader.
    r, w = os.pipe()
    try:
        with open(w, "wb", closefd=False) as out:
            f.export_bpf(out)
        os.close(w)
        w = -1
        raw = b""
        while chunk := os.read(r, 1 << 16):
            raw += chunk
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    if not raw or len(raw) % 8:
        raise OSError("libseccomp exported no program")
    buf = ctypes.create_string_buffer(raw, len(raw))
    return buf, Program(len(raw) // 8, ctypes.addressof(buf))


_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def apply() -> None:
    """Put this process, for good, under the exported allow-list: no_new_privs (which an
    unprivileged process needs for a filter) and one prctl."""
    _, prog = program()
    for args in ((PR_SET_NO_NEW_PRIVS, 1, 0), (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog))):
        if _libc.prctl(args[0], ctypes.c_ulong(args[1]), ctypes.c_ulong(args[2]), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"seccomp: {os.strerror(err)}")
