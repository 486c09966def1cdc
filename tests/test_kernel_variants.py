"""tests/kernel_variants.py hides exactly the kernel features it is asked to hide."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_variants import FEATURES, variant_cmd

ROOT = Path(__file__).resolve().parent.parent

# What the command sees: Landlock's ABI, and whether a user namespace (by unshare, and by
# clone through fork's fallback) can be made.
PROBE = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
from autograder.sandbox import confine
seen = {"landlock": confine.landlock_abi() > 0}
pid = os.fork()
if pid == 0:
    try:
        confine.unshare(confine.CLONE_NEWUSER)
        os._exit(0)
    except OSError:
        os._exit(1)
_, status = os.waitpid(pid, 0)
seen["userns"] = os.waitstatus_to_exitcode(status) == 0
print(json.dumps(seen))
"""


def _seen(missing: frozenset[str]) -> dict[str, bool]:
    cmd = variant_cmd([sys.executable, "-c", PROBE, str(ROOT)], missing)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


@pytest.fixture(scope="module")
def host() -> dict[str, bool]:
    return _seen(frozenset())


@pytest.mark.parametrize("missing", [frozenset({f}) for f in FEATURES] + [frozenset(FEATURES)],
                         ids=lambda m: "+".join(sorted(m)))
def test_a_variant_hides_what_it_names_and_nothing_else(host, missing):
    seen = _seen(missing)
    assert {f for f in FEATURES if not seen[f]} == missing | {f for f in FEATURES if not host[f]}


def test_the_host_has_what_the_variants_hide(host):
    """Otherwise a variant would prove nothing here."""
    if not all(host.values()):
        pytest.skip(f"this kernel lacks {[f for f, v in host.items() if not v]} already")
    assert all(host.values())


def test_an_unknown_feature_is_refused():
    with pytest.raises(ValueError, match="unknown kernel features"):
        variant_cmd(["true"], frozenset({"seccomp"}))
