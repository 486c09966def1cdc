"""Grades into an LMS: Canvas's gradebook import CSV and LTI Advantage AGS Score objects.

The grades.csv files are grade-batch's own format, written by report/table.py; each Canvas
export is read back by tests/canvas_importer.py, a transcription of Canvas's importer. The
LTI tool's flow (launch, grant, line items, names and roles) is tests/test_lti_tool.py's.
"""
from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path

import canvas_importer  # tests/canvas_importer.py: Canvas's importer, transcribed
import pytest

from autograder import cli
from autograder.class_results import StudentRow
from autograder.lms import canvas, lti
from autograder.lms.grades import GradesError, read
from autograder.report.table import grades_csv


EXERCISES = ["softmax", "score_spread"]


def write_grades(path: Path, scores: dict[str, float], failed: tuple[str, ...] = (), max_score: float = 37) -> Path:
    rows = [StudentRow(student=s, score=v, max_score=max_score, exercises={"softmax": v}) for s, v in scores.items()]
    path.write_text(grades_csv(rows, EXERCISES, failed))
    return path


@pytest.fixture
def ps1(tmp_path) -> Path:
    return write_grades(tmp_path / "ps1.csv", {"ada@uni.edu": 30, "ben@uni.edu": 37, "=cmd@uni.edu": 12},
                        failed=("cy@uni.edu",))


@pytest.fixture
def ps2(tmp_path) -> Path:
    return write_grades(tmp_path / "ps2.csv", {"ada@uni.edu": 40, "ghost@uni.edu": 5}, max_score=40)


# A course in Canvas before the import: ps1 (1001, 37 points) and ps2 (1002, 40 points).
# Cy (the grader failed on them) and Dee (not in grades.csv) hold hand-entered 30s, Ben a 35
# the grader will replace, Eq is excused from ps2; Fay is in Canvas only.
COURSE = {
    "assignments": {1001: ("ps1", "37"), 1002: ("ps2", "40")},
    "students": {11: ("Ada Lovelace", "Lovelace, Ada", "u11", "ADA@uni.edu"),
                 12: ("Ben Babbage", "Babbage, Ben", "u12", "ben@uni.edu"),
                 13: ("Cy Young", "Young, Cy", "u13", "cy@uni.edu"),
                 14: ("Dee Dee", "Dee, Dee", "u14", "dee@uni.edu"),
                 15: ("Eq Eq", "Eq, Eq", "u15", "=cmd@uni.edu"),
                 16: ("Fay Fay", "Fay, Fay", "u16", "fay@uni.edu")},
    "scores": {(12, 1001): "35", (13, 1001): "30.00", (14, 1001): "30.00", (14, 1002): "38.5", (15, 1002): "EX"},
}


def course() -> canvas_importer.Course:
    return canvas_importer.Course(
        {k: canvas_importer.Assignment(*v) for k, v in COURSE["assignments"].items()},
        {k: canvas_importer.Student(*v) for k, v in COURSE["students"].items()}, dict(COURSE["scores"]))


@pytest.fixture(params=[False, True], ids=["Student", "LastName-FirstName"])
def roster(request, tmp_path) -> Path:
    """The gradebook as Canvas exports it, in either of its layouts."""
    path = tmp_path / "roster.csv"
    path.write_text(course().export(last_first=request.param))
    return path


def table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def imported(ps1, ps2, roster) -> tuple[canvas_importer.Import, dict]:
    """The export read by the transcription of Canvas's importer, and the course's scores after it."""
    text = canvas.export([read(ps1, "ps1"), read(ps2, "ps2")], canvas.read_roster(roster)).text
    before = course()
    result = canvas_importer.read(before, text)
    return result, canvas_importer.apply(before, result)


# ---------------------------------------------------------------- Canvas

def test_grades_csv_reads_back_with_the_formula_guard_undone(ps1):
    grades = read(ps1, "ps1")
    assert grades.scores == {"=cmd@uni.edu": 12, "ada@uni.edu": 30, "ben@uni.edu": 37, "cy@uni.edu": None}
    assert grades.max_score == 37


def test_the_canvas_csv_has_the_import_header_and_canvass_points_possible(ps1, ps2, roster):
    rows = table(canvas.export([read(ps1, "ps1"), read(ps2, "ps2")], canvas.read_roster(roster)).text)
    assert rows[0] == [*canvas.IDENTITY, "ps1 (1001)", "ps2 (1002)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "37", "40"]


def test_the_import_changes_only_what_the_grader_scored(ps1, ps2, roster):
    result, after = imported(ps1, ps2, roster)
    assert result.changes == {(11, 1001): "30", (12, 1001): "37", (15, 1001): "12", (11, 1002): "40"}
    assert (result.new_assignments, result.new_students) == ([], [])


@pytest.mark.parametrize("who, key, score", [
    ("failed on (Cy)", (13, 1001), "30.00"),
    ("not in grades.csv (Dee)", (14, 1001), "30.00"),
    ("not in grades.csv, a decimal (Dee)", (14, 1002), "38.5"),
    ("excused (Eq)", (15, 1002), "EX"),
])
def test_a_hand_entered_score_the_grader_has_no_score_for_survives_the_import(ps1, ps2, roster, who, key, score):
    assert imported(ps1, ps2, roster)[1][key] == score


def test_a_student_with_nothing_anywhere_stays_blank(ps1, ps2, roster):
    after = imported(ps1, ps2, roster)[1]
    assert (16, 1001) not in after and (16, 1002) not in after and (13, 1002) not in after


def test_the_transcription_sees_a_blank_over_a_score_as_erasing_it():
    """The defect the export avoids: the old export's blank cell for Cy removed the 30."""
    before = course()
    text = before.export().replace("Young, Cy\",13,u13,cy@uni.edu,Sec 1,30.00", "Young, Cy\",13,u13,cy@uni.edu,Sec 1,")
    assert ",13,u13,cy@uni.edu,Sec 1,," in text
    result = canvas_importer.read(before, text)
    assert result.changes == {(13, 1001): None}
    assert (13, 1001) not in canvas_importer.apply(before, result)


@pytest.mark.parametrize("new, current, unchanged", [
    ("30", "30.00", True), ("30.004", "30", True), ("30.01", "30", False), ("", "", True), ("-", "", True),
    ("", "30", False), ("-", "30", False), ("EX", "EX", True), ("ex", "30", False), ("30", "", False),
])
def test_the_transcribed_change_rule(new, current, unchanged):
    assert canvas_importer.no_change(new, current) is unchanged


def test_graded_students_are_matched_by_login_case_insensitively_in_the_rosters_order(ps1, ps2, roster):
    rows = table(canvas.export([read(ps1, "ps1"), read(ps2, "ps2")], canvas.read_roster(roster)).text)
    assert [r[1] for r in rows[2:]] == ["11", "12", "13", "14", "15", "16"]
    assert rows[2][0] == "Lovelace, Ada" and rows[2][5:] == ["30", "40"]
    assert rows[6][3] == "'=cmd@uni.edu" and rows[6][5] == "12"  # a formula is never written


def test_what_the_import_keeps_and_replaces_is_reported(ps1, ps2, roster):
    result = canvas.export([read(ps1, "ps1"), read(ps2, "ps2")], canvas.read_roster(roster))
    assert result.not_in_roster == {"ps2": ["ghost@uni.edu"]}
    assert result.kept == {"ps1": ["Young, Cy", "Dee, Dee", "Fay, Fay"],
                           "ps2": ["Babbage, Ben", "Young, Cy", "Dee, Dee", "Eq, Eq", "Fay, Fay"]}
    assert result.replaced == {"ps1": [canvas.Replaced("Babbage, Ben", "35", "37")]}


def test_an_assignment_the_roster_lacks_is_a_new_column_and_said(tmp_path, roster):
    ps3 = write_grades(tmp_path / "ps3.csv", {"ada@uni.edu": 3}, max_score=5)
    result = canvas.export([read(ps3, "ps3")], canvas.read_roster(roster))
    assert table(result.text)[0][-1] == "ps3" and result.new_columns == ["ps3"]
    assert canvas_importer.read(course(), result.text).new_assignments == ["ps3"]


def test_without_a_roster_nothing_is_written_and_the_reason_is_one_line(ps1, tmp_path, capsys):
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", "canvas", "--assignment", "ps1", "--grades", str(ps1), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "needs --roster" in err and err.count("\n") == 1
    assert not out.exists()


def test_two_assignments_of_one_title_are_refused(tmp_path):
    (tmp_path / "r.csv").write_text("Student,ID,SIS User ID,SIS Login ID,Section,ps1 (1001),ps1 (1005)\n")
    with pytest.raises(GradesError, match=r"two assignments are titled 'ps1' \(1001 and 1005\)"):
        canvas.read_roster(tmp_path / "r.csv")


def test_two_graded_students_that_are_one_canvas_student_are_refused(tmp_path, roster):
    g = write_grades(tmp_path / "g.csv", {"ada@uni.edu": 3, "u11": 30})  # her login and her SIS id
    with pytest.raises(GradesError, match="'ada@uni.edu' and 'u11' are both 'Lovelace, Ada' in the roster"):
        canvas.export([read(g, "ps1")], canvas.read_roster(roster))


def test_a_name_canvas_would_read_as_an_id_is_refused(tmp_path, roster):
    g = write_grades(tmp_path / "g.csv", {"ada@uni.edu": 3})
    with pytest.raises(GradesError, match="reads as an assignment id"):
        canvas.export([read(g, "quiz (7)")], canvas.read_roster(roster))


def test_the_export_canvas_command_writes_the_csv_and_lists_the_kept(ps1, ps2, roster, tmp_path, capsys):
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", "canvas", "--assignment", "ps1", "--grades", str(ps1), "--assignment", "ps2",
                     "--grades", str(ps2), "--roster", str(roster), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "ps2: 1 graded student(s) not in the roster, left out: ghost@uni.edu" in err
    assert "ps1: 3 student(s) with no grade from the grader: their cell is what the roster says Canvas holds" in err
    assert "ps1: 1 score(s) in Canvas that the import replaces: Babbage, Ben 35 -> 37" in err
    assert "blank" not in err
    assert table(out.read_text())[0][-1] == "ps2 (1002)"


@pytest.mark.parametrize("text, why", [
    ("name,points\nada,3\n", "not a grades.csv"),
    ("student,score,max_score\nada,x,37\n", "'x' is not a number"),
    ("student,score,max_score\nada,nan,37\n", "is not a score"),
    ("student,score,max_score\nada,3,37\nada,4,37\n", "appears twice"),
    ("student,score,max_score\nada,3,37\nben,4,40\n", "max_score differs"),
])
def test_a_bad_grades_file_is_one_line_and_writes_nothing(tmp_path, capsys, text, why):
    (tmp_path / "g.csv").write_text(text)
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", "canvas", "--assignment", "ps1", "--grades", str(tmp_path / "g.csv"),
                     "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert why in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("header, missing", [
    ("name,email", "Student, ID, SIS User ID, SIS Login ID, Section"),
    ("LastName,FirstName,ID,SIS Login ID,Section", "SIS User ID"),
])
def test_a_roster_that_is_not_a_canvas_export_is_refused(tmp_path, header, missing):
    (tmp_path / "r.csv").write_text(header + "\nAda,ada@uni.edu,1,2,3\n")
    with pytest.raises(GradesError, match=f"no {missing} column"):
        canvas.read_roster(tmp_path / "r.csv")


# ---------------------------------------------------------------- LTI Advantage AGS

def test_one_score_object_per_graded_student(ps1):
    result = lti.scores(read(ps1, "ps1"))
    assert [s["userId"] for s in result.lines] == ["=cmd@uni.edu", "ada@uni.edu", "ben@uni.edu"]
    assert result.not_graded == ["cy@uni.edu"]
    first = result.lines[1]
    assert (first["scoreGiven"], first["scoreMaximum"]) == (30, 37)
    assert (first["activityProgress"], first["gradingProgress"]) == ("Completed", "FullyGraded")
    assert datetime.fromisoformat(first["timestamp"]).utcoffset() is not None  # a time zone, as AGS requires


def test_users_map_students_to_lti_ids_and_the_unmapped_are_listed(ps1, tmp_path):
    (tmp_path / "users.csv").write_text("student,user_id\nada@uni.edu,lti-11\nben@uni.edu,lti-12\n")
    result = lti.scores(read(ps1, "ps1"), lti.read_users(tmp_path / "users.csv"))
    assert [s["userId"] for s in result.lines] == ["lti-11", "lti-12"]
    assert result.no_user_id == ["=cmd@uni.edu"]


@pytest.mark.parametrize("lineitem, url", [
    ("https://lms.example/api/lti/courses/3/line_items/7", "https://lms.example/api/lti/courses/3/line_items/7/scores"),
    ("https://lms.example/lineitems/7/?x=1", "https://lms.example/lineitems/7/scores?x=1"),
])
def test_scores_go_to_the_line_items_scores_endpoint(lineitem, url):
    assert lti.scores_url(lineitem) == url


def test_the_json_lines_go_to_standard_output(ps1, capsys):
    assert cli.main(["export", "lti-scores", "--assignment", "ps1", "--grades", str(ps1)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [s["userId"] for s in lines] == ["=cmd@uni.edu", "ada@uni.edu", "ben@uni.edu"]


def test_users_and_config_together_are_refused(ps1, tmp_path, capsys):
    (tmp_path / "users.csv").write_text("student,user_id\nada@uni.edu,lti-11\n")
    assert cli.main(["export", "lti-scores", "--assignment", "ps1", "--grades", str(ps1), "--users",
                     str(tmp_path / "users.csv"), "--config", str(tmp_path / "tool.json")]) == 2
    assert "with --config the course's names and roles map students" in capsys.readouterr().err
