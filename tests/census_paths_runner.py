"""Run the census probe (tests/census_paths_probe.py) in one sandboxed child; print what it found.

tests/test_census_paths.py runs this at each isolation level and kernel variant.
Usage: census_paths_runner.py CANDIDATES PIDS HIDE... ; CANDIDATES: a file of paths, NUL-separated;
PIDS: comma-separated pids of processes outside the sandbox whose /proc it must not reach;
HIDE: folders the grader is told to hide (the course and its copies). Prints one JSON
document: the level, the layers, the View the zygote declared, and the probe's report; or,
when the sandbox refuses to start, {"refused": its one line}.
"""
from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["AUTOGRADER_QUIET"] = "1"

from autograder.sandbox import Sandbox, Unisolated
from autograder.sandbox.frames import Ending

PROBE = Path(__file__).with_name("census_paths_probe.py")


def main() -> None:
    candidates, pids, hide = zlib.compress(Path(sys.argv[1]).read_bytes(), 1), sys.argv[2], sys.argv[3:]
    pids = [int(p) for p in pids.split(",") if p] + [os.getpid()]
    try:
        with Sandbox(hide=hide) as sandbox:
            pids.append(sandbox.proc.pid)
            run = sandbox.run([PROBE.read_text()], [("census", [("census", (candidates, pids), {})])], timeout=120)
            ex = run.exercises["census"]
            assert ex.status == "ok" and ex.outcomes[0].ending is Ending.RETURNED, (ex, run.output)
            found = dict(ex.outcomes[0].value)
            found["report"] = zlib.decompress(found["report"]).decode(errors="surrogateescape")
            json.dump({"level": sandbox.level, "layers": sandbox.layers, "view": sandbox.view.to_dict(),
                       "pids": pids, **found}, sys.stdout)
    except Unisolated as e:
        json.dump({"refused": str(e)}, sys.stdout)


if __name__ == "__main__":
    main()
