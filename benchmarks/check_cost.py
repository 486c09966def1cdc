"""What a problem set's checks cost, without the sandbox: CPU milliseconds to run every call
of every check of a set on the reference answers, in this process, and judge it, per student
(each distinct call once, as grading runs it). A machine's load moves wall-clock figures far
more than CPU time, so this compares a change of the checks where per_set_cost.py cannot.

Run: .venv/bin/python benchmarks/check_cost.py [N]   (N students, default 30)
     (for an older commit: `git archive <commit> | tar -x -C DIR`, copy this file there, and
     run it from DIR with this checkout's python)
"""
import statistics
import sys
import time

from autograder import reference
from autograder.assignments import ASSIGNMENTS
from autograder.checks import run_judge
from autograder.grade import plan
from autograder.sandbox import call_one, frames


def main(n: int = 30) -> None:
    ref = reference.load()
    for assignment in ASSIGNMENTS:
        times = []
        for k in range(n):
            checks, answers = plan(assignment, f"cost-{k}"), reference.Answers(ref)
            start = time.process_time()
            for name, cs in checks.items():
                seen = {}
                for check in cs:
                    for call in check.calls:
                        if id(call) not in seen:
                            seen[id(call)] = frames.through_wire([call_one(ref.solution(name), call.args,
                                                                           call.kwargs, call.echo)])[0]
                    verdict = run_judge(check, [seen[id(c)] for c in check.calls], None if check.visible else answers)
                    if not verdict.passed:
                        raise SystemExit(f"the reference fails {check.name}: {verdict.message[:200]}")
            times.append(time.process_time() - start)
        print(f"{assignment}: {1000 * statistics.median(times):.1f} ms CPU per student "
              f"(median of {n}; min {1000 * min(times):.1f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
