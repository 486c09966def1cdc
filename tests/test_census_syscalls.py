"""The syscall census: what a real sandbox child reaches equals what the allow-list declares.

At each isolation level (``full`` as root; ``uid`` without CAP_SYS_ADMIN; ``none`` as
nobody, with and without user namespaces) and each with and without Landlock (the kernel
variants of tests/kernel_variants.py), a probe child (tests/census_probe.py, run through
tests/census_runner.py as a submission) calls every number of the kernel's syscall table
(libseccomp's, 0..600, and some x32 numbers) with harmless arguments, and tries every kind
of socket, IPC, memory and signal. The calls that reached the kernel must be exactly the
ones sandbox/syscalls.py's ALLOWED and ARGUMENTS let through: a hole fails this test
without anyone having thought of the attack.
"""
from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import census_probe
from autograder.sandbox import syscalls
from autograder.sandbox.limits import Limits
from census_runner import MOST_FORKS
from kernel_variants import variant_cmd
from test_isolation import HOW, _unprivileged

pytestmark = pytest.mark.slow  # eight sandboxes, each in its own process

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "census_runner.py"
LEVELS = {  # name -> (level asked for, kernel features hidden)
    "full": ("full", frozenset()),
    "uid": ("uid", frozenset()),
    "none": ("none", frozenset()),
    "none-no-userns": ("none", frozenset({"userns"})),
}
VARIANTS = [(name, landlock) for name in LEVELS for landlock in (True, False)]
# The kinds that get through at every level: the allowed commands of calls with argument
# rules (a shared mapping is not one: its pages can outlive it unseen, syscalls.py). File
# kinds depend on the view (below).
ALWAYS = {"fcntl F_GETFL", "prlimit64 itself"}


@pytest.fixture(scope="module", params=VARIANTS, ids=[f"{n}-{'landlock' if ll else 'no-landlock'}"
                                                      for n, ll in VARIANTS])
def census(request):
    if os.geteuid() != 0:
        pytest.skip("the levels need root to set up (CI runs as root)")
    name, landlock = request.param
    level, missing = LEVELS[name]
    missing = missing | (frozenset() if landlock else {"landlock"})
    cmd = [sys.executable, str(RUNNER)]
    cmd = _unprivileged(cmd) if level == "none" else HOW[level] + cmd
    cmd = variant_cmd(cmd, missing)  # outermost, as a container runtime's profile is
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout)
    assert "value" in found["report"], found  # the probe ran to its end
    found.update(asked=level, missing=missing, value=found["report"]["value"])
    return found


def _admitted_with_zeros(name: str) -> bool:
    rules = [r for r in syscalls.ARGUMENTS if r.syscall == name]
    return name in syscalls.allowed_names() and all(r.admits(0) for r in rules)


def _absent_here(table: dict[str, str], refused: set[str]) -> set[str]:
    """Of the allowed calls the census found refused, those this kernel does not have: they
    answer ENOSYS without any filter too (checked in a sub-child of this test, as nobody,
    with the same zero arguments)."""
    absent = set()
    for nr, name in table.items():
        if name not in refused:
            continue

        def call(nr=int(nr), name=name):
            os.setresuid(65534, 65534, 65534)
            return census_probe._raw(nr, *census_probe.NOT_WAITING.get(name, (0,) * 6)) == (-1, census_probe.ENOSYS)
        if census_probe._in_sub_child(call) == "refused":
            absent.add(name)
    return absent


def test_the_level_and_layers_are_the_ones_asked_for(census):
    layers = set(census["layers"])
    assert census["level"] == census["asked"], layers
    assert ("landlock" in layers) == ("landlock" not in census["missing"])
    assert "seccomp allow-list" in layers
    if census["asked"] == "none":
        assert ("user namespace" in layers) == ("userns" not in census["missing"])


def test_the_calls_that_reach_the_kernel_are_the_allow_list(census):
    table = census["table"]
    reached = {table.get(nr, f"#{nr}") for nr, how in census["value"]["sweep"].items() if how == "reached"}
    expected = {name for name in table.values() if _admitted_with_zeros(name)}
    expected -= _absent_here(table, expected - reached)
    passthrough = {f"#{n}" for n in syscalls.KERNEL_UNFILTERED.get(platform.machine(), ())}
    reached -= passthrough  # the kernel's own exemption: reached on new kernels, refused on old ones
    assert reached == expected, f"reached but not allowed: {sorted(reached - expected)}; " \
                                f"allowed but refused: {sorted(expected - reached)}"


def test_numbers_past_the_table_and_other_abis_are_refused(census):
    """Numbers libseccomp has no name for (a call newer than its table) and x32 numbers."""
    passthrough = {str(n) for n in syscalls.KERNEL_UNFILTERED.get(platform.machine(), ())}
    unnamed = {nr for nr in census["value"]["sweep"] if nr not in census["table"]} - passthrough
    assert unnamed and {nr for nr in unnamed if census["value"]["sweep"][nr] == "reached"} == set()


def _file_kinds_expected(census) -> set[str]:
    """Files in the shared writable folders: out of sight in the allow-list root
    (namespaces) and outside Landlock's rules; below both, the uid's watch counts them and
    its cleanup removes them (tests/test_resources.py)."""
    layers = set(census["layers"])
    if "namespaces" in layers or "landlock" in layers:
        return set()
    return {k for k in census["value"]["kinds"] if k.startswith("file in ")}


def test_every_kind_of_socket_ipc_and_signal_is_refused(census):
    kinds = census["value"]["kinds"]
    got = {k for k, v in kinds.items() if v == "ok"}
    assert got == ALWAYS | _file_kinds_expected(census), kinds


def test_no_signal_can_be_sent_to_anyone(census):
    kinds = census["value"]["kinds"]
    signalling = {k: v for k, v in kinds.items()
                  if k.split()[0] in ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
                                      "pidfd_open", "pidfd_send_signal", "os.kill", "signal.raise_signal")
                  or "SETOWN" in k or "FIOASYNC" in k or k in ("alarm", "setitimer", "timer_create", "clone parent")}
    assert len(signalling) >= 20 and set(signalling.values()) <= {"ENOSYS", "refused"}, signalling


def test_abort_ends_by_the_kernels_own_fault_not_by_a_signal_it_sent(census):
    """glibc's abort() raises SIGABRT with tgkill, which is refused; it then falls back to a
    faulting instruction, whose signal the kernel raises synchronously."""
    code, sig = census["value"]["abort"]
    assert code is None and sig in (signal.SIGSEGV, signal.SIGILL, signal.SIGTRAP), (code, sig)


def test_processes_are_limited_where_root_sets_the_limit(census):
    """As root the limit is RLIMIT_NPROC on the child's own uid (and a pids cgroup at full).
    At the none level the uid is the grader's and no per-submission count exists."""
    forks = census["value"]["forks"]
    if census["asked"] == "none" and "user namespace" not in census["layers"]:
        assert forks == MOST_FORKS  # the grader's own uid: no per-submission count (docs/isolation.md)
    else:
        assert 0 < forks <= Limits().processes
