"""LTI Advantage Assignment and Grade Services: one Score object per student, and posting them.

A Score (IMS AGS 2.0, "Score publish service") says ``userId`` (the platform's LTI user id),
``scoreGiven`` of ``scoreMaximum``, ``activityProgress`` and ``gradingProgress``, and a
``timestamp`` with sub-second precision and a time zone; it is POSTed to the line item's URL
with ``/scores`` appended to its path, as ``application/vnd.ims.lis.v1.score+json``, with the
tool's OAuth 2 access token as a bearer token, which lti_services.py obtains (the
client-credentials grant with a signed JWT) and posts with.
"""
from __future__ import annotations

import csv
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .grades import Grades, GradesError

MEDIA_TYPE = "application/vnd.ims.lis.v1.score+json"


@dataclass(frozen=True)
class Scores:
    lines: list[dict]  # one Score object per graded student with a user id
    not_graded: list[str]  # students whose grade is empty (the grader failed on them)
    no_user_id: list[str]  # students the --users map does not name


def read_users(path: Path) -> dict[str, str]:
    """``student,user_id`` rows: the course's student names -> LTI user ids (the ``sub`` claim)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise GradesError(f"cannot read {path}: {e}") from e
    if not rows or not {"student", "user_id"} <= set(rows[0]):
        raise GradesError(f"{path} needs a header with the columns student and user_id")
    return {r["student"].strip(): r["user_id"].strip() for r in rows if r["student"] and r["user_id"]}


def scores(grades: Grades, users: dict[str, str] | None = None, now: datetime | None = None) -> Scores:
    """Without ``users`` each student's name is their LTI user id."""
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="milliseconds")
    lines, not_graded, unknown = [], [], []
    for student, score in sorted(grades.scores.items()):
        if score is None:
            not_graded.append(student)
            continue
        user = users.get(student) if users is not None else student
        if not user:
            unknown.append(student)
            continue
        lines.append({"userId": user, "scoreGiven": score, "scoreMaximum": grades.max_score,
                      "activityProgress": "Completed", "gradingProgress": "FullyGraded", "timestamp": stamp})
    return Scores(lines, not_graded, unknown)


def scores_url(lineitem: str) -> str:
    """The line item's scores endpoint: ``/scores`` after its path, its query kept."""
    parts = urllib.parse.urlsplit(lineitem)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise GradesError(f"{lineitem!r} is not an http(s) line item URL")
    return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))
