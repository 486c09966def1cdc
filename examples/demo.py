"""`make demo`: the instructor's loop on a sample class of 30 students per problem set.

It generates the class in nbgrader's layout (examples/make_class.py: right answers in
several styles, unfinished work, one catalogued mistake of each kind, a hang, a crash, a broken
notebook), grades each problem set with `autograder grade-batch`, and prints the class
table and where the results, feedback pages and class reports are.
"""
import subprocess
import sys
from pathlib import Path

from make_class import make_class

from autograder.assignments import ASSIGNMENTS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "demo-out"


def main() -> None:
    roster = make_class(OUT / "class", students=30, seed=0)
    print(f"Sample class: {len(roster)} students in {OUT / 'class' / 'submitted'} (nbgrader's layout)\n")
    for assignment in ASSIGNMENTS:
        print(f"$ autograder grade-batch demo-out/class/submitted --assignment {assignment} "
              f"--out demo-out/{assignment} --timeout 3", flush=True)
        subprocess.run([sys.executable, "-m", "autograder.cli", "grade-batch", str(OUT / "class" / "submitted"),
                        "--assignment", assignment, "--out", str(OUT / assignment), "--timeout", "3"],
                       check=True, cwd=ROOT)
        print()
    print("The class table of ps2 (demo-out/ps2/grades.csv), first rows:")
    print("".join((OUT / "ps2" / "grades.csv").read_text().splitlines(keepends=True)[:8]))
    print(f"Open {OUT / 'ps2' / 'class.html'} for the class report and "
          f"{OUT / 'ps2' / 'feedback'}/<student>.html for each student's feedback.")


if __name__ == "__main__":
    main()
