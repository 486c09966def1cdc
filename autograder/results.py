"""Results in Gradescope's results.json schema, as dataclasses: the model every report and
face reads.

Reference: https://gradescope-autograders.readthedocs.io/en/latest/specs/ (top level
``score``, ``max_score``, ``execution_time``, ``output``, ``tests``, ``extra_data``; each test
``name``, ``score``, ``max_score``, ``status``, ``output``, ``visibility``, ``tags``,
``extra_data``). Tags carry ``exercise:<name>`` and, for a recognised mistake,
``misconception:<id>``.

The texts (``output``) are what a student reads. What a report needs to tell outcomes apart
is typed here and kept where the schema leaves room for the grader's own keys:

- each test's ``Finding`` (``extra_data.finding``): how the check ended (``Kind``), the
  mistake's explanation apart from the rest of the message, the numbers it quotes, the
  student's array beside the expected one (``Comparison``), how a process ended, the
  exception a function raised;
- each cell (or .py statement) that raised, or hung or crashed and was skipped, as a
  ``CellProblem`` (``extra_data.cell_problems``), beside the line ``problems`` shows for it;
- the submission's ``problems`` (one line each) and what its code ``printed``
  (``extra_data.problems``, ``extra_data.printed``), of which the top-level ``output`` is made;
  where in ``printed`` a fresh process began running the cells again after a hang or a crash
  (``restarts``, ``extra_data.printed_restarts``).

Reports render from these fields and never read meaning back out of a text.
"""
from __future__ import annotations

import enum
import json
import math
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .names import one_line

SHOWN = 4  # rows and columns of an array a student reads in a message
# Where the cells ran again, in a text that shows what the code printed (the Results' own
# fields hold where: ``restarts``).
RESTARTED = "--- restarted after a cell or exercise that hung or crashed ---"


class Kind(str, enum.Enum):
    """How a check ended."""
    PASSED = "passed"
    WRONG = "wrong"  # judged, and not right (the tags name the mistake when the catalogue knows it)
    RAISED = "raised"  # the function raised an exception of its own (``Finding.error``)
    NOT_IMPLEMENTED = "not_implemented"  # it still raises NotImplementedError
    UNDEFINED = "undefined"  # the submission defines no function of that name
    MALFORMED = "malformed"  # what came back for a call is not a result (the function wrote to the grader's channel)
    UNTRUSTED = "untrusted"  # what came back for the exercise is not its result: none could be trusted
    CRASHED = "crashed"  # its process ended and no result came back (``Finding.ended``)
    TIMEOUT = "timeout"  # it ran past the time limit
    NOT_RUN = "not_run"  # nothing in the submission could be run (its ``problems`` say why)


class CellEnd(str, enum.Enum):
    """How a cell (a notebook's, or a .py file's top-level statement) went wrong."""
    RAISED = "raised"  # it raised an exception; the next cell ran
    TIMEOUT = "timeout"  # it ran past its time limit (or the submission's budget) and was skipped
    ENDED = "ended"  # it ended its process (or wrote to the grader's channel, or was stopped) and was skipped


@dataclass(frozen=True)
class CellProblem:
    """What went wrong in one cell, as the sandbox knew it."""
    cell: int  # its index among the submission's cells (or statements)
    ending: CellEnd
    error: str = ""  # RAISED: the exception's class name
    message: str = ""  # RAISED: the exception as one line ("ValueError: bad shapes"); else why it was skipped
    label: str = ""  # how the submission names it ("notebook cell 4", "line 12"): grade.py's

    def __post_init__(self):
        object.__setattr__(self, "ending", CellEnd(self.ending))
        if type(self.cell) is not int or not all(type(x) is str for x in (self.error, self.message, self.label)):
            raise TypeError("a CellProblem is a cell's index and three texts")

    def line(self) -> str:
        """The line ``Results.problems`` shows for it."""
        what = f"raised {self.message}" if self.ending is CellEnd.RAISED else f"{self.message} and was skipped"
        return f"{self.label} {one_line(what)}".strip()


# The kinds in which no result came back at all: the dashboard lists them as crashed.
NO_RESULT_KINDS = frozenset({Kind.CRASHED, Kind.UNTRUSTED})


@dataclass(frozen=True)
class Comparison:
    """The student's array held against the expected one, entry by entry: the counts, and the
    rows a message shows side by side (at most SHOWN rows and columns of one matrix; none when
    the shapes differ)."""
    what: str  # "softmax's output"
    got_shape: tuple[int, ...]
    expected_shape: tuple[int, ...]
    differ: int = 0  # entries that differ
    size: int = 0  # entries in all
    nan: int = 0  # entries of the student's that are nan
    inf: int = 0  # differing entries of the student's that are infinite
    largest: float | None = None  # the largest difference of a finite entry (None: none differs finitely)
    at: tuple[int, ...] = ()  # the leading index of the matrix shown (a batch's first wrong one)
    got: tuple[tuple[float, ...], ...] = ()  # the rows shown, the student's
    expected: tuple[tuple[float, ...], ...] = ()
    more_rows: bool = False  # the matrix has more rows than shown
    more_columns: bool = False
    # What the check says of the expected values ("bank on river is 0.500"): said as the
    # expected ones', never as if it were the student's.
    expected_note: str = ""

    def headline(self) -> str:
        note = f" Expected: {self.expected_note}." if self.expected_note else ""
        if self.got_shape != self.expected_shape:
            return f"{self.what} has shape {self.got_shape}, expected {self.expected_shape}." + note
        counts = (f"{self.nan} of them nan" if self.nan else "", f"{self.inf} of them infinite" if self.inf else "",
                  f"largest difference {self.largest:.3g}" if self.largest is not None else "")
        detail = "; ".join(x for x in counts if x)
        return (f"{self.what}: {self.differ} of {self.size} entries differ" + (f" ({detail})." if detail else ".")
                + note)

    def table(self) -> str:
        """The rows shown, yours then expected ('' when the shapes differ)."""
        if not self.got:
            return ""
        label = f" [{', '.join(map(str, self.at))}]" if self.at else ""
        cut = (self.more_rows, self.more_columns)
        return side_by_side(self.got, self.expected, f"yours{label}", "expected", cut, cut)

    def text(self) -> str:
        return "\n".join(x for x in (self.headline(), self.table()) if x)


def side_by_side(got, expected, left: str, right: str, got_cut: tuple[bool, bool] = (False, False),
                 expected_cut: tuple[bool, bool] = (False, False)) -> str:
    """Two small matrices (rows of numbers) next to each other, columns aligned; ``*_cut``:
    whether each has more (rows, columns) than the rows given."""
    def rows(m, cut):
        out = [" ".join(f"{v:8.3f}" for v in r) + (" ..." if cut[1] else "") for r in m]
        return out + (["..."] if cut[0] else [])
    a, b = rows(got, got_cut), rows(expected, expected_cut)
    width = max(len(x) for x in a + [left])
    out = [f"{left:<{width}}   {right}"]
    for i in range(max(len(a), len(b))):
        out.append(f"{a[i] if i < len(a) else '':<{width}}   {b[i] if i < len(b) else ''}")
    return "\n".join(out)


@dataclass(frozen=True)
class Finding:
    """What a check found, in the parts its message was made of. ``detail`` is the message's
    words beside the explanation and the comparison; None when the message is all there is
    (then ``explanation`` is empty and there is no comparison)."""
    kind: Kind
    explanation: str = ""  # the catalogued mistake's explanation as quoted, with this input's numbers
    detail: str | None = None
    numbers: dict = field(default_factory=dict)  # what the explanation quotes: {"d_k": 16}
    comparison: Comparison | None = None
    ended: str = ""  # CRASHED: how its process ended (crashes.Ended's kind), when known
    error: str = ""  # RAISED: the exception, "ValueError: bad shapes"
    # The mistake named is another exercise's, one this exercise calls (a softmax's, in an
    # attention exercise), not one of its own: a page names the exercise's own first.
    inherited: bool = False

    def __post_init__(self):
        object.__setattr__(self, "kind", Kind(self.kind))
        if self.detail is None and (self.explanation or self.comparison is not None):
            raise ValueError("a Finding with an explanation or a comparison says what else its message holds")

    def text(self) -> str:
        """The message these parts make: the explanation, the other words, the comparison."""
        parts = (self.explanation, self.detail or "", self.comparison.text() if self.comparison else "")
        return "\n".join(x for x in parts if x)


def named_once(named: Iterable[tuple[str, Finding | None]]) -> list[tuple[str, str]]:
    """Each mistake of one exercise's failed checks, once, as (mistake, explanation): the
    exercise's own before those it inherits from a function it calls (``Finding.inherited``),
    each kind in the order first met, with the explanation of the first check that quoted one
    ('' where none did). The feedback page and the notebook's check cells name them so."""
    order: list[str] = []
    quoted: dict[str, str] = {}
    own: set[str] = set()
    for mistake, finding in named:
        if mistake not in order:
            order.append(mistake)
        if finding is None or not finding.inherited:
            own.add(mistake)
        if finding is not None and finding.explanation:
            quoted.setdefault(mistake, finding.explanation)
    order.sort(key=lambda m: m not in own)  # stable: first met within each kind
    return [(m, quoted.get(m, "")) for m in order]


@dataclass
class TestResult:
    name: str  # unique; starts with the exercise's function name
    score: float  # points earned: max_score when passed, else 0
    max_score: float
    status: str  # "passed" or "failed"
    output: str  # the feedback a student reads
    visibility: str  # "visible" for checks a student can run, else "after_due_date"
    tags: list[str] = field(default_factory=list)
    # Gradescope stores but does not show extra_data: the weights behind feedback heatmaps.
    extra_data: dict = field(default_factory=dict)
    finding: Finding | None = None  # None: only passed or failed is known (PASSED or WRONG)

    def __post_init__(self):
        if self.finding is None:
            self.finding = Finding(Kind.PASSED if self.status == "passed" else Kind.WRONG)

    @property
    def exercise(self) -> str:
        """The exercise its first ``exercise:`` tag names. A loop rather than next() over a
        generator: a report asks some 300 times a submission, and the generator cost twice this."""
        for tag in self.tags:
            if tag.startswith("exercise:"):
                return tag[len("exercise:"):]
        raise StopIteration  # as next() raised: a test without one is none the grader made

    @property
    def title(self) -> str:
        """What the test checks, without its exercise's name in front."""
        prefix = f"{self.exercise}: "
        return self.name[len(prefix):] if self.name.startswith(prefix) else self.name

    @property
    def misconception(self) -> str | None:
        return next((t.split(":", 1)[1] for t in self.tags if t.startswith("misconception:")), None)

    @property
    def kind(self) -> Kind:
        return self.finding.kind

    @property
    def detail(self) -> str:
        """What the message says besides the explanation and the comparison."""
        return self.output if self.finding.detail is None else self.finding.detail


@dataclass
class Results:
    score: float  # the sum of the tests' scores
    max_score: float
    execution_time: float  # seconds
    problems: list[str]  # what is wrong with the submission as a whole, one line each
    tests: list[TestResult]
    # {"isolation": "full" | "uid" | "none", "isolation_layers": [...]}: how it was confined
    extra_data: dict = field(default_factory=dict)
    printed: str = ""  # the last of what the submission's code printed ('' when nothing but spaces)
    printed_cut: bool = False  # it printed more than ``printed`` holds
    # Where in ``printed`` a fresh process began, running the cells again from the top after a
    # cell or an exercise hung or crashed: offsets, ascending, inside the text.
    restarts: tuple[int, ...] = ()
    # The cells of ``problems`` that raised or were skipped, typed (each one's ``line`` is in problems).
    cell_problems: list[CellProblem] = field(default_factory=list)

    def __post_init__(self):
        if not (isinstance(self.problems, list) and all(isinstance(p, str) for p in self.problems)):
            raise TypeError("a Results' problems are a list of lines")
        if not isinstance(self.printed, str):
            raise TypeError("a Results' printed is text")
        if not _offsets_in(self.restarts, len(self.printed)):
            raise ValueError("a Results' restarts are ascending offsets inside what it printed")

    @staticmethod
    def printed_by(parts: tuple[str, ...], limit: int) -> dict:
        """The fields ``printed``, ``printed_cut`` and ``restarts`` for what each process
        printed (``parts``, in order): the last ``limit`` characters, and where each part
        kept began; nothing when they hold nothing but spaces."""
        parts = [p for p in parts if p]
        whole = "".join(parts)
        if not whole.strip():
            return {"printed": "", "printed_cut": False, "restarts": ()}
        shown = whole[-limit:]
        starts, at = [], 0
        for part in parts[:-1]:
            at += len(part)
            starts.append(at - (len(whole) - len(shown)))
        return {"printed": shown, "printed_cut": len(shown) < len(whole),
                "restarts": tuple(s for s in starts if 0 < s < len(shown))}

    def printed_parts(self) -> list[str]:
        """What each process printed (the first one's cut where ``printed`` is)."""
        bounds = (0, *self.restarts, len(self.printed))
        return [self.printed[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def printed_text(self) -> str:
        """What the code printed, as a text face shows it: a line where the cells ran again."""
        return f"\n{RESTARTED}\n".join(self.printed_parts()) if self.printed else ""

    @property
    def output(self) -> str:
        """What a student reads about the submission as a whole (Gradescope's top-level output)."""
        out = "\n".join(self.problems)
        if self.printed:
            cut = f" (the last {len(self.printed)} characters)" if self.printed_cut else ""
            out += ("\n" if out else "") + f"Your code printed{cut}:\n" + self.printed_text()
        return out

    def exercise_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for t in self.tests:
            exercise = t.exercise
            scores[exercise] = scores.get(exercise, 0) + t.score
        return scores

    def to_json(self) -> str:
        """One test a line: readable, and written by json's C encoder (``indent`` would use its
        slow Python one, and ``asdict`` deep-copies every heatmap: together a third of the
        grader's own time per submission)."""
        extra = {**self.extra_data, "problems": self.problems}
        if self.printed:
            extra.update(printed=self.printed, printed_cut=self.printed_cut)
        if self.restarts:
            extra["printed_restarts"] = list(self.restarts)
        if self.cell_problems:
            extra["cell_problems"] = [{"cell": p.cell, "ending": p.ending.value, "error": p.error,
                                       "message": p.message, "label": p.label} for p in self.cell_problems]
        head = {"score": self.score, "max_score": self.max_score, "execution_time": self.execution_time,
                "output": self.output, "extra_data": extra}
        tests = ",\n  ".join([_encode(_test_doc(t)) for t in self.tests])
        return _encode(head)[:-1] + ',\n "tests": [\n  ' + tests + "\n ]}"


def from_json(text: str) -> Results:
    """Results as ``to_json`` wrote them. A results file of an earlier grader, which kept no
    problems apart, has its output's lines for problems; a test without a finding (or with one
    that does not read) has only passed or failed."""
    doc = json.loads(text)
    tests = []
    for t in doc.pop("tests"):
        extra = dict(t.pop("extra_data", {}))
        tests.append(TestResult(**t, extra_data=extra, finding=_finding(extra.pop("finding", None))))
    output = doc.pop("output")
    extra = dict(doc.pop("extra_data", {}))
    problems = extra.pop("problems", None)
    if problems is None:
        problems = output.splitlines() if isinstance(output, str) else []
    printed, printed_cut = extra.pop("printed", ""), bool(extra.pop("printed_cut", False))
    restarts = extra.pop("printed_restarts", [])
    restarts = tuple(restarts) if isinstance(restarts, list) and _offsets_in(tuple(restarts), len(printed)) else ()
    cells = extra.pop("cell_problems", [])
    return Results(tests=tests, problems=problems, extra_data=extra, printed=printed, printed_cut=printed_cut,
                   restarts=restarts, cell_problems=[p for p in map(_cell_problem, cells if isinstance(cells, list)
                                                                      else []) if p is not None], **doc)


def _cell_problem(doc) -> CellProblem | None:
    """A cell's problem read back; None for one that does not read as one (its line stays in problems)."""
    try:
        return CellProblem(**doc)
    except (TypeError, ValueError):
        return None


def _offsets_in(offsets, length: int) -> bool:
    """Ascending whole numbers strictly inside a text of ``length`` characters."""
    if not (isinstance(offsets, tuple) and all(type(o) is int for o in offsets)):
        return False
    return all(a < b for a, b in zip((0, *offsets), (*offsets, length), strict=True)) if offsets else True


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader never sees half a file."""
    path = Path(path)
    data = text.encode("utf-8", "backslashreplace")  # text that is not valid Unicode is escaped, not refused
    try:
        fd, tmp = _temporary_beside(path)
    except OSError:  # no folder yet, made now; any other cause, mkdir or the second try raises again
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary_beside(path)
    try:
        with open(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: a reader, or a killed run, sees the old file or the new
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _temporary_beside(path: Path) -> tuple[int, str]:
    # The temporary name stays short: a name near 255 bytes plus a suffix would not fit.
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:64]}.", suffix=".tmp")


# ---------------------------------------------------------------- findings in JSON

# json.dumps(x, allow_nan=False), its encoder made once: dumps makes one a call when given an
# option, and a results file is some forty calls. An encoder keeps nothing between calls.
_encode = json.JSONEncoder(allow_nan=False).encode


def _test_doc(t: TestResult) -> dict:
    doc = dict(vars(t))
    finding = doc.pop("finding")
    doc["extra_data"] = {**t.extra_data, "finding": _finding_doc(finding)}
    return doc


def _number(x):
    """A float JSON can hold: nan and the infinities as text."""
    return x if math.isfinite(x) else str(x)


def _finding_doc(f: Finding) -> dict:
    doc: dict = {"kind": f.kind.value}
    if f.explanation:
        doc["explanation"] = f.explanation
    if f.ended:
        doc["ended"] = f.ended
    if f.error:
        doc["error"] = f.error
    if f.detail is not None:
        doc["detail"] = f.detail
    if f.numbers:
        doc["numbers"] = f.numbers
    if f.inherited:
        doc["inherited"] = True
    c = f.comparison
    if c is not None:
        doc["comparison"] = {
            "what": c.what, "got_shape": list(c.got_shape), "expected_shape": list(c.expected_shape),
            "differ": c.differ, "size": c.size, "nan": c.nan, "inf": c.inf,
            "largest": None if c.largest is None else _number(c.largest),
            "at": list(c.at), "got": [[_number(v) for v in r] for r in c.got],
            "expected": [[_number(v) for v in r] for r in c.expected],
            "more_rows": c.more_rows, "more_columns": c.more_columns}
        if c.expected_note:
            doc["comparison"]["expected_note"] = c.expected_note
    return doc


def _finding(doc) -> Finding | None:
    """A finding read back; None for one that is missing or does not read as one."""
    if not isinstance(doc, dict):
        return None
    try:
        c = doc.get("comparison")
        comparison = None if c is None else Comparison(
            str(c["what"]), _ints(c["got_shape"]), _ints(c["expected_shape"]), int(c["differ"]), int(c["size"]),
            int(c["nan"]), int(c["inf"]), None if c["largest"] is None else float(c["largest"]), _ints(c["at"]),
            _rows(c["got"]), _rows(c["expected"]), bool(c["more_rows"]), bool(c["more_columns"]),
            str(c.get("expected_note", "")))
        numbers = doc.get("numbers", {})
        detail = doc.get("detail")
        if not isinstance(numbers, dict) or not (detail is None or isinstance(detail, str)):
            return None
        texts = [doc.get(k, "") for k in ("explanation", "ended", "error")]
        inherited = doc.get("inherited", False)
        if not all(isinstance(x, str) for x in texts) or not isinstance(inherited, bool):
            return None
        return Finding(Kind(doc["kind"]), texts[0], detail, numbers, comparison, texts[1], texts[2], inherited)
    except (KeyError, TypeError, ValueError):
        return None


def _ints(xs) -> tuple[int, ...]:
    return tuple(int(n) for n in xs)


def _rows(rows) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in r) for r in rows)
