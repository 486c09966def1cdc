"""Run a command as if the kernel lacked a feature, the way a container runtime's seccomp
profile makes it look: a filter (built with libseccomp) installed before ``exec``, which
the command and everything it starts inherit and cannot remove.

    python tests/kernel_variants.py --missing landlock,userns -- CMD...

Features (``FEATURES``):

- ``landlock``: the three Landlock syscalls fail with ENOSYS, as on a kernel built without
  it, so ``confine.landlock_abi()`` is 0.
- ``userns``: ``unshare`` and ``clone`` with CLONE_NEWUSER fail with EPERM, as with
  ``kernel.unprivileged_userns_clone=0`` or Docker's default profile. ``clone3`` passes its
  flags in a struct a filter cannot read, so it fails with ENOSYS (as in Docker's profile):
  glibc then falls back to ``clone``, whose flags the filter reads.

From Python: ``variant_cmd(cmd, frozenset({"landlock"}))`` gives the command line.
"""
from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path

FEATURES = ("landlock", "userns")
CLONE_NEWUSER = 0x10000000
LAUNCHER = Path(__file__).resolve()


def variant_cmd(cmd: list[str], missing: frozenset[str]) -> list[str]:
    """``cmd`` run as if the kernel lacked ``missing`` (a subset of ``FEATURES``); ``cmd``
    itself when nothing is missing."""
    unknown = set(missing) - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown kernel features {sorted(unknown)}; known: {', '.join(FEATURES)}")
    if not missing:
        return list(cmd)
    return [sys.executable, str(LAUNCHER), "--missing", ",".join(sorted(missing)), "--", *cmd]


def install(missing: frozenset[str]) -> None:
    """Install, for good, the filter that hides ``missing`` from this process and its descendants."""
    import pyseccomp as sc

    f = sc.SyscallFilter(sc.ALLOW)
    # Other ABIs (x32, i386) pass as they are, as in Docker's profile: this filter hides
    # features, it must not kill what the grader's own filter answers (a kill outranks it)
    f.set_attr(sc.Attr.ACT_BADARCH, sc.ALLOW)
    if "landlock" in missing:
        for name in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
            f.add_rule(sc.ERRNO(errno.ENOSYS), name)
    if "userns" in missing:
        flags = sc.Arg(0, sc.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
        f.add_rule(sc.ERRNO(errno.EPERM), "unshare", flags)
        # clone's flags are its first argument on x86_64 and aarch64 (s390 swaps them; not here)
        f.add_rule(sc.ERRNO(errno.EPERM), "clone", flags)
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    # A container runtime loads its profile while it still holds CAP_SYS_ADMIN, so the
    # command keeps its privileges; without that capability the kernel wants no_new_privs.
    f.set_attr(sc.Attr.CTL_NNP, 0)
    try:
        f.load()
    except PermissionError:
        f.set_attr(sc.Attr.CTL_NNP, 1)
        f.load()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", required=True, help=f"comma-separated, of: {', '.join(FEATURES)}")
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    missing = frozenset(m for m in args.missing.split(",") if m)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command to run (give it after --)")
    unknown = missing - set(FEATURES)
    if unknown:
        parser.error(f"unknown kernel features {sorted(unknown)}; known: {', '.join(FEATURES)}")
    install(missing)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
