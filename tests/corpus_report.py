"""How much of the hand-written corpus the checks catch and name: run by hand,
`.venv/bin/python tests/corpus_report.py`, after a change to the catalogue or the checks.

The corpus is tests/submissions/<set>/*.py (test_grading_corpus.py grades it against each
file's header and fails on a false pass or a false fail). A file whose header has a line
``# mistake: <exercise> <id>`` is a mistake written the way a student writes it; for each
such line this reports whether a visible check of that exercise fails (the student hears of
it before the deadline) and whether the exercise's failed checks name exactly that id. Files
that say ``# expect: full`` are right answers, some unusual; each must get full marks.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grading_corpus import CORPUS, parse_header, scores_by_outcome, with_root

from autograder.grade import grade, hidden_paths
from autograder.sandbox import Sandbox

MISTAKE = re.compile(r"#\s*mistake:\s*(\S+)\s+(\S+)\s*")


def intended(path: Path) -> list[tuple[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.suffix == ".py" else []
    return [(m.group(1), m.group(2)) for line in lines if (m := MISTAKE.fullmatch(line))]


def main() -> int:
    wrong = [(p, ex, mid) for p in CORPUS for ex, mid in intended(p)]
    right = [p for p in CORPUS if p.suffix == ".py" and parse_header(p).every_full and p.name.startswith("correct")]
    caught = named = false_pass = false_fail = 0
    with Sandbox(hide=hidden_paths(CORPUS[0].parent.parent)) as sandbox:
        for path, ex, mid in wrong:
            exp = parse_header(path)
            results = grade(with_root(path), exp.assignment, sandbox=sandbox, timeout=exp.timeout)
            failed = [t for t in results.tests if t.exercise == ex and t.status == "failed"]
            seen = {t.misconception for t in failed if t.misconception}
            visible = any(t.visibility == "visible" for t in failed)
            ok_name = seen == {mid}
            full = scores_by_outcome(results, exp.assignment)[ex] == "full"
            caught += visible
            named += ok_name
            false_pass += full
            print(f"{path.parent.name}/{path.name}: {ex} {mid}: "
                  f"{'caught before the deadline' if visible else 'NOT caught by a visible check'}, "
                  f"{'named' if ok_name else 'named ' + (', '.join(sorted(seen)) or 'nothing')}"
                  f"{', FULL MARKS' if full else ''}")
        for path in right:
            exp = parse_header(path)
            results = grade(with_root(path), exp.assignment, sandbox=sandbox, timeout=exp.timeout)
            lost = [ex for ex, o in scores_by_outcome(results, exp.assignment).items() if o != "full"]
            false_fail += bool(lost)
            print(f"{path.parent.name}/{path.name}: right answer, " + (f"LOSES POINTS in {lost}" if lost else "full"))
    n = len(wrong)
    print(f"\n{n} mistakes in {len({p for p, _, _ in wrong})} files, {len(right)} right answers: "
          f"{caught}/{n} ({caught / n:.0%}) caught before the deadline, {named}/{n} ({named / n:.0%}) named "
          f"correctly; {false_pass} false passes, {false_fail} false fails.")
    return 1 if false_pass or false_fail else 0


if __name__ == "__main__":
    sys.exit(main())
