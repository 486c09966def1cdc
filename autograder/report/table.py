"""grades.csv: one row per student, sorted, with each exercise's points."""
from __future__ import annotations

import csv
import io


def grades_csv(rows: list[dict], exercises: tuple[str, ...]) -> str:
    """``rows``: dicts with student, score, max_score and one key per exercise."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["student", "score", "max_score", *exercises])
    for row in sorted(rows, key=lambda r: r["student"]):
        writer.writerow([row["student"], _num(row["score"]), _num(row["max_score"]),
                         *(_num(row["exercises"].get(e, 0)) for e in exercises)])
    return buf.getvalue()


def _num(x: float) -> str:
    return f"{x:g}"
