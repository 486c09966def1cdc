"""`make demo`: the instructor's loop on a sample class of 30 students per problem set.

It generates the class in nbgrader's layout (examples/make_class.py: right answers in
several styles, unfinished work, one catalogued mistake of each kind, a hang, a crash, a broken
notebook), writes each set's integrity report (`autograder integrity`: which pairs look
copied), grades each problem set with `autograder grade-batch`, prints the class table,
writes one index over the class dashboards (demo-out/index.html) and ends with its
file:// address, the page to open.
"""
import subprocess
import sys
from pathlib import Path

from make_class import make_class

from autograder.assignments import ASSIGNMENTS
from autograder.report.index import file_uri, write_index

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "demo-out"


def main() -> None:
    roster = make_class(OUT / "class", students=30, seed=0)
    print(f"Sample class: {len(roster)} students in {OUT / 'class' / 'submitted'} (nbgrader's layout)\n")
    for assignment in ASSIGNMENTS:
        # The integrity report first, into the same folder, so the class dashboard links it.
        print(f"$ autograder integrity demo-out/class/submitted --assignment {assignment} "
              f"--out demo-out/{assignment}", flush=True)
        subprocess.run([sys.executable, "-m", "autograder.cli", "integrity", str(OUT / "class" / "submitted"),
                        "--assignment", assignment, "--out", str(OUT / assignment)], check=True, cwd=ROOT)
        print(f"$ autograder grade-batch demo-out/class/submitted --assignment {assignment} "
              f"--out demo-out/{assignment} --timeout 3", flush=True)
        subprocess.run([sys.executable, "-m", "autograder.cli", "grade-batch", str(OUT / "class" / "submitted"),
                        "--assignment", assignment, "--out", str(OUT / assignment), "--timeout", "3"],
                       check=True, cwd=ROOT)
        print()
    print("The class table of ps2 (demo-out/ps2/grades.csv), first rows:")
    print("".join((OUT / "ps2" / "grades.csv").read_text().splitlines(keepends=True)[:8]))
    index = write_index(OUT, f"Sample class: {', '.join(ASSIGNMENTS)}")
    print("Each problem set's class dashboard (demo-out/<ps>/class.html) links every student's feedback page,")
    print("and its integrity report (which pairs look copied; docs/integrity.md):")
    for assignment in ASSIGNMENTS:
        print("  " + file_uri(OUT / assignment / "integrity.html"))
    print(f"Open the index of the {len(ASSIGNMENTS)} dashboards:")
    print(file_uri(index))


if __name__ == "__main__":
    main()
