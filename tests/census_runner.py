"""Run the census probe (tests/census_probe.py) in one real sandbox child; print what it found.

tests/test_census_syscalls.py runs this at each isolation level and kernel variant.
Usage: census_runner.py ; prints one JSON document on stdout.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["AUTOGRADER_QUIET"] = "1"

from autograder.sandbox import Sandbox, syscalls  # noqa: E402
from autograder.sandbox.frames import Ending  # noqa: E402

HIGHEST = 600  # past the last number of libseccomp's table (x86_64 ends below 470): unnamed numbers too
X32 = 0x40000000  # x86_64's x32 ABI: the same calls under other numbers, which the filter must refuse too
MOST_FORKS = 80  # past Limits.processes


def table() -> dict[int, str]:
    """The kernel's syscall table as libseccomp names it: number -> name, 0..HIGHEST."""
    return {n: name for n in range(HIGHEST) if (name := syscalls.native_name(n))}


def main() -> None:
    names = table()
    numbers = list(range(HIGHEST)) + [X32 + n for n in (0, 1, 39, 60)]  # read, write, getpid, exit
    by_name = [[name, n] for n, name in names.items()]
    cell = (ROOT / "tests" / "census_probe.py").read_text()
    # Where the kernel allows no isolation the grader refuses by default (tests/test_refuse_unisolated.py);
    # the census measures what the allow-list still holds there once an operator allows it.
    with Sandbox(hide=[str(ROOT)], allow_unisolated=True) as sandbox:
        r = sandbox.run([cell], [("census", [("census", (numbers, by_name, os.getpid(), MOST_FORKS), {})])],
                        timeout=120)
        run = r.exercises["census"]
        if run.status == "ok":  # the probe's one call: what it returned, or what it raised
            o = run.outcomes[0]
            report = {"value": o.value} if o.ending is Ending.RETURNED else {"error": o.error, "message": o.message}
        else:
            report = {"status": run.status, "detail": run.detail}
        json.dump({"level": sandbox.level, "layers": sandbox.layers, "table": {str(k): v for k, v in names.items()},
                   "report": report, "output": r.output, "problems": r.cell_problems}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
