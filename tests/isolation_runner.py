"""Grade files one after another with one sandbox, as a worker would; print what came out.

tests/test_isolation.py runs this as root, without CAP_SYS_ADMIN, and as an unprivileged
user, so that each isolation level is tried by the same attacks in the same order.
Usage: isolation_runner.py ASSIGNMENT FILE... ; prints one JSON document on stdout.
ISOLATION_HIDE (folders, os.pathsep-separated): hidden too, as the course is.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["AUTOGRADER_QUIET"] = "1"

from autograder.grade import grade, hidden_paths
from autograder.sandbox import Sandbox


def main() -> None:
    assignment, files = sys.argv[1], sys.argv[2:]
    graded = []
    extra = [p for p in os.environ.get("ISOLATION_HIDE", "").split(os.pathsep) if p]  # hidden as the course is
    with Sandbox(hide=hidden_paths(*{str(Path(f).parent) for f in files}, *extra)) as sandbox:
        level, layers, zygote = sandbox.level, sandbox.layers, sandbox.proc.pid
        for f in files:
            start = time.monotonic()
            r = grade(f, assignment, sandbox=sandbox, student=Path(f).stem, timeout=5)
            graded.append({"file": Path(f).name, "score": r.score, "max_score": r.max_score,
                           "seconds": time.monotonic() - start, "output": r.output,
                           "exercises": r.exercise_scores(),
                           "isolation": r.extra_data.get("isolation")})
    json.dump({"level": level, "layers": layers, "graded": graded, "uid": os.getuid(), "zygote": zygote}, sys.stdout)


if __name__ == "__main__":
    main()
