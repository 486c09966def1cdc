"""Seconds for `autograder integrity` over a class of N notebooks (issue 24: 1,000 in under a
minute), and where the planted copies rank.

The class is examples/make_class.py's: each student an archetype of its mix (right answers in
several styles, unfinished work, each catalogued mistake...), as nbgrader collects them. So
that students are not byte-identical clones, each also has a scratch cell of their own (a few
lines of made-up checks), their own execution counts and a saved output with an object
address, as a notebook that was run has. Then COPIES students hand in someone else's
notebook with one line added, and COPIES more a copy of someone's scratch work with every
name changed (code only, no traces). The time is the wall time of run_integrity (reading,
fingerprinting, scoring, writing both reports), the class's generation excluded.

Run: .venv/bin/python benchmarks/integrity_cost.py [--n 1000] [--copies 10] [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "tests"))
import make_class  # noqa: E402
from integrity_plants import rename_everything  # noqa: E402

from autograder.integrity import run_integrity  # noqa: E402

ASSIGNMENT = "ps2"


def scratch(rng: random.Random) -> str:
    """A student's own checks: made-up lines, different for everyone."""
    ops = ["+", "-", "*"]
    lines = ["import numpy as np", f"trial_{rng.randrange(10**6)} = {rng.randrange(2, 9)}"]
    for i in range(rng.randrange(4, 9)):
        a, b, c = rng.randrange(1, 50), rng.randrange(1, 50), rng.randrange(1, 9)
        kind = rng.choice(["linspace", "arange", "ones", "eye"])
        lines.append(f"v{i} = np.{kind}({a}){rng.choice(ops)}{b} if {c} {rng.choice(['<', '>'])} {i} else {a}")
        if rng.random() < 0.5:
            lines.append(f"print('check {i}', causal_mask({c}).shape, v{i}.sum() {rng.choice(ops)} {b})")
    return "\n".join(lines) + "\n"


def build_class(folder: Path, n: int, copies: int, seed: int) -> list[tuple[str, str]]:
    """Write the class; return the planted pairs (copier, source)."""
    rng = random.Random(seed)
    released = make_class.read_notebook(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    reference = make_class.reference_answers(ASSIGNMENT)
    mix = make_class.class_mix(ASSIGNMENT, n, random.Random(f"integrity/{seed}"))
    texts: dict[str, str] = {}
    names = make_class.student_names(n)
    notebooks: dict[str, dict | str] = {}
    for student, archetype in zip(names, mix, strict=True):
        if archetype not in texts:
            edit = make_class.ARCHETYPES[ASSIGNMENT][archetype]
            texts[archetype] = make_class.student_notebook(released, reference, edit)
        if archetype == "malformed":  # cut off mid-JSON: listed as unreadable
            notebooks[student] = texts[archetype]
            continue
        nb = json.loads(texts[archetype])
        nb["cells"].append({"cell_type": "code", "id": f"{rng.getrandbits(32):08x}", "metadata": {},
                            "execution_count": rng.randrange(5, 60), "source": scratch(rng), "outputs": [
                                {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                                 "data": {"text/plain": f"<function f at 0x7f{rng.getrandbits(40):010x}>"}}]})
        for cell in nb["cells"]:
            if cell["cell_type"] == "code" and rng.random() < 0.3:
                cell["execution_count"] = rng.randrange(1, 80)
        notebooks[student] = nb
    planted = []
    pool = [s for s in names if isinstance(notebooks[s], dict)]
    chosen = rng.sample(pool, 4 * copies)
    for k in range(copies):  # a notebook passed on, one line added
        source, copier = chosen[2 * k], chosen[2 * k + 1]
        nb = json.loads(json.dumps(notebooks[source]))
        nb["cells"][-1]["source"] += "print('done')\n"
        notebooks[copier] = nb
        planted.append((copier, source))
    for k in range(copies, 2 * copies):  # someone's own code copied, every name changed
        source, copier = chosen[2 * k], chosen[2 * k + 1]
        notebooks[copier]["cells"][-1]["source"] = rename_everything(notebooks[source]["cells"][-1]["source"], "x")
        planted.append((copier, source))
    for student, nb in notebooks.items():
        path = folder / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(nb if isinstance(nb, str) else json.dumps(nb, indent=1))
    return planted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="integrity-cost-") as tmp:
        planted = build_class(Path(tmp) / "class", args.n, args.copies, args.seed)
        result = run_integrity(Path(tmp) / "class" / "submitted", ASSIGNMENT, Path(tmp) / "out")
        rank = {frozenset((p.a.work.student, p.b.work.student)): i for i, p in enumerate(result.pairs, 1)}
        ranks = sorted(rank.get(frozenset(p), 0) for p in planted)
        planted_set = {frozenset(p) for p in planted}
        scores = {frozenset((p.a.work.student, p.b.work.student)): p.score for p in result.pairs}
        honest = [score for pair, score in scores.items() if pair not in planted_set]
        lowest = min((scores.get(p, 0.0) for p in planted_set), default=0.0)
        print(f"{result.students} notebooks compared ({len(result.unread)} unreadable) in {result.seconds:.1f} s: "
              f"{len(result.pairs)} pairs reported, {len(result.flagged)} flagged")
        print(f"planted pairs' ranks: {ranks} (0: not reported); lowest planted score {lowest:.3f}; "
              f"highest other score {max(honest, default=0.0):.3f} (0: no other pair reported)")
        for kind, part in (("passed on, one line added", planted[: args.copies]),
                           ("scratch cell copied, names changed", planted[args.copies :])):
            shown = sorted(scores.get(frozenset(p), 0.0) for p in part)
            print(f"  {kind}: scores {shown[0]:.2f} to {shown[-1]:.2f}, "
                  f"{sum(s >= result.threshold for s in shown)} of {len(shown)} flagged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
