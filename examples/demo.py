"""`make demo`: grade the course's own notebooks the way a class would be graded.

For each problem set it grades the instructor's notebook (the reference answers: full
marks), the untouched released notebook (0, every check "not implemented"), and a
submission with a classic mistake, then prints the scores per exercise and what a
student with that mistake reads.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MISTAKE = ("ps2", "scaled_dot_product_attention", "1.0 / np.sqrt(Q.shape[-1])", "1.0 / Q.shape[-1]")


def grade(path: Path, assignment: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(path), "--assignment", assignment],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout)


def by_exercise(results: dict) -> dict:
    scores: dict = {}
    for t in results["tests"]:
        ex = next(tag.split(":", 1)[1] for tag in t["tags"] if tag.startswith("exercise:"))
        got, of = scores.get(ex, (0, 0))
        scores[ex] = (got + t["score"], of + t["max_score"])
    return scores


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        assignment, func, right, wrong = MISTAKE
        source = (ROOT / "source" / assignment / f"{assignment}.ipynb").read_text()
        mistaken = Path(tmp) / f"{assignment}.ipynb"
        mistaken.write_text(source.replace(right, wrong))
        for a in ("ps1", "ps2", "ps3"):
            print(f"\n== {a} ==")
            rows = [("reference answers", grade(ROOT / "source" / a / f"{a}.ipynb", a)),
                    ("released, untouched", grade(ROOT / "assignments" / a / f"{a}.ipynb", a))]
            if a == assignment:
                rows.append(("divides by d_k", grade(mistaken, a)))
            for label, r in rows:
                print(f"{label:<22} {r['score']:>5g} / {r['max_score']:<4g} ({r['execution_time'] * 1000:.0f} ms)")
                for ex, (got, of) in by_exercise(r).items():
                    print(f"    {ex:<30} {got:>4g} / {of:g}")
        failed = next(t for t in grade(mistaken, assignment)["tests"] if "misconception:scale_by_dk" in t["tags"])
        print(f"\nWhat the student who divided by d_k reads under '{failed['name']}':\n")
        print("    " + failed["output"].replace("\n", "\n    "))


if __name__ == "__main__":
    main()
