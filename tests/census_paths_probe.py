# The census's probe: run as a submission's only cell in a sandboxed child
# (tests/census_paths_runner.py), it reports every path it can reach and how.
#
# census(candidates, pids) starts from "/", its own folder and every path in ``candidates``
# (the machine's whole tree as root sees it, NUL-separated, zlib-compressed), walks every folder it can
# list (os.scandir, symbolic links not followed) and tries, on each path it finds:
#   s  lstat works (the path exists for it)
#   l  a folder it can list
#   c  a folder it can create a file in (made with O_EXCL and removed at once)
#   r  a file or device it can open for reading      (O_NONBLOCK | O_NOCTTY)
#   w  a file or device it can open for writing      (O_NONBLOCK | O_NOCTTY, never O_TRUNC)
# A path below one whose lstat failed is not tried: it cannot resolve either.
# FIFOs, sockets and block devices are only lstat'ed: opening one can disturb its owner.
# /proc by rule: a numeric entry (a process) is never walked into; for it, its folder and
# its status and cmdline are tried, so another process's /proc is found wherever it is
# listable or named in ``pids``.
# It returns its uid, gid and folder, and "flags<TAB>path" records (NUL-separated, zlib) for
# every path it found.

import os
import stat
import zlib

_O = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def census(candidates, pids):
    me = os.getpid()
    found = {}
    # find(1)'s order: each folder before what is in it; NUL-separated, as any byte but NUL
    # and "/" may be in a name (one that is not UTF-8 is carried by surrogateescape)
    given = zlib.decompress(candidates).decode(errors="surrogateescape").split("\0")
    todo = [*reversed(given), *(f"/proc/{p}" for p in pids), os.getcwd(), "/"]  # popped from the end
    seen, dead = set(), set()
    while todo:
        path = todo.pop()
        if not path or path in seen:
            continue
        seen.add(path)
        parent = os.path.dirname(path)
        if parent in dead and parent != path:
            dead.add(path)  # a path below one that does not resolve does not resolve either
            continue
        try:
            st = os.lstat(path)
        except OSError:
            dead.add(path)
            continue
        flags = "s"
        mode = st.st_mode
        is_pid = parent == "/proc" and os.path.basename(path).isdigit()
        if stat.S_ISDIR(mode):
            try:
                with os.scandir(path) as it:
                    names = [e.name for e in it]
                flags += "l"
                if is_pid:
                    todo += [f"{path}/status", f"{path}/cmdline"]
                else:
                    todo += [os.path.join(path, n) for n in names]
            except OSError:
                if is_pid:
                    todo += [f"{path}/status", f"{path}/cmdline"]
            probe = os.path.join(path, f".census-{me}")
            try:
                fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600)
                os.close(fd)
                os.unlink(probe)
                flags += "c"
            except OSError:
                pass
        elif stat.S_ISREG(mode) or stat.S_ISCHR(mode):
            for flag, how in (("r", os.O_RDONLY), ("w", os.O_WRONLY)):
                try:
                    os.close(os.open(path, how | _O))
                    flags += flag
                except OSError:
                    pass
        found[path] = flags
    return {"uid": os.getuid(), "gid": os.getgid(), "cwd": os.getcwd(),
            "report": zlib.compress("\0".join(f"{f}\t{p}" for p, f in sorted(found.items()))
                                    .encode(errors="surrogateescape"), 1)}
