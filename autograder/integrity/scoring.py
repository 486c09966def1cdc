"""Which pairs share rare code or traces, and how much: an inverted index, never all pairs.

Every fingerprint (fingerprints.py) and trace (traces.py) is a key of an index to the students
who have it. Its weight is its rarity in the class: 1 when at most two students have it,
falling (as an inverse document frequency) to 0 when ``common_count(n)`` students have it
(5% of the class, and never fewer than 5), and 0 when the instructor's own solution has it
(the canonical answer is what every correct student may write). Only pairs that share a key
of weight above 0 are ever scored, so the cost follows the rare matches, not the class squared.

A pair's code score is ``overlap * amount``: ``overlap`` is the weight they share over the
weight of the smaller of the two (how much of one is in the other), ``amount`` is
``1 - exp(-(shared / AMOUNT)^2)`` (a few shared lines are a coincidence; whole functions
are not). The trace score is ``1 - prod(1 - strength * weight)`` over the traces they share. The
pair's score is ``1 - (1 - code) * (1 - traces)``: either kind of evidence alone can flag.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

from .fingerprints import Print, all_kgrams, fingerprint
from .intake import Work
from .traces import STRENGTH, Trace, notebook_traces

MIN_COMMON = 5  # students: a fingerprint this many share is common, whatever the class's size
COMMON_SHARE = 0.05  # ... or this share of the class
# Shared weight (in fingerprints, about one per 2.5 normalised characters) at which the amount
# factor is 1 - 1/e: a few shared lines (the same alternative one-liner) count little, whole
# functions fully. Squared, so the factor stays small until then and saturates soon after.
AMOUNT = 60.0
REPORTED = 0.05  # pairs scoring below this are not reported
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.M)


@dataclass
class Student:
    """One student's comparable material: their code's fingerprints and their notebook's traces."""
    work: Work
    prints: list[Print]  # the units that are not released code
    keys: dict[int, int] = field(default_factory=dict)  # fingerprint -> index in prints (first unit having it)
    traces: set[Trace] = field(default_factory=set)
    mass: float = 0.0  # the weight of all its fingerprints


@dataclass(frozen=True)
class Pair:
    a: Student
    b: Student
    score: float
    code: float
    trace: float
    overlap: float  # of the smaller one's rare code, the share in the other
    shared: frozenset[int]  # the fingerprints of weight > 0 they share
    traces: tuple[Trace, ...]  # the traces of weight > 0 they share


@dataclass(frozen=True)
class Release:
    """What every student was given: removed before anything is compared."""
    sources: frozenset[str]  # the released code cells' normalised text (a unit equal to one is dropped)
    kgrams: frozenset[int]  # every k-gram of the released code (removed from every student's)
    cell_ids: frozenset[str]
    raw_sources: frozenset[str]  # the released cells' text, as saved (their outputs are no one's own)
    canonical: frozenset[int]  # every k-gram of the instructor's solutions: weight 0


def common_count(n: int) -> float:
    return max(MIN_COMMON, COMMON_SHARE * n)


def rarity(df: int, n: int) -> float:
    """1 for a key at most two students have, 0 from common_count(n) on, log-linear between."""
    cap = common_count(n)
    if df <= 2:
        return 1.0
    if df >= cap:
        return 0.0
    return math.log(cap / df) / math.log(cap / 2)


def amount(shared: float) -> float:
    """How much the shared weight counts, in [0, 1): ``1 - exp(-(shared / AMOUNT)^2)``."""
    return 1.0 - math.exp(-((shared / AMOUNT) ** 2))


def prepare(works: list[Work], release: Release) -> list[Student]:
    from .fingerprints import normalise

    students = []
    for work in works:
        prints = []
        for unit in work.units:
            if normalise(unit.source)[0] in release.sources:
                continue  # the released cell as it was given (a stub, a helper, a demo)
            prints.append(fingerprint(unit.label, unit.source))
        s = Student(work, prints)
        for i, p in enumerate(prints):
            for h in p.positions:
                if h not in release.kgrams:
                    s.keys.setdefault(h, i)
        if work.notebook is not None:
            s.traces = notebook_traces(work.notebook, release.cell_ids, release.raw_sources)
        students.append(s)
    return students


def score_pairs(students: list[Student], release: Release) -> tuple[list[Pair], dict[int, float]]:
    """Every pair sharing a rare key, scored, most suspicious first; and each fingerprint's weight."""
    n = len(students)
    index: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(students):
        for h in s.keys:
            index[h].append(i)
    weight = {h: (0.0 if h in release.canonical else rarity(len(owners), n)) for h, owners in index.items()}
    for s in students:
        s.mass = sum(weight[h] for h in s.keys)
    shared: dict[tuple[int, int], float] = defaultdict(float)
    for h, owners in index.items():
        w = weight[h]
        if w > 0 and len(owners) > 1:
            for x in range(len(owners)):
                for y in range(x + 1, len(owners)):
                    shared[owners[x], owners[y]] += w
    trace_index: dict[Trace, list[int]] = defaultdict(list)
    for i, s in enumerate(students):
        for t in s.traces:
            trace_index[t].append(i)
    trace_pairs: dict[tuple[int, int], list[Trace]] = defaultdict(list)
    for t, owners in trace_index.items():
        if 1 < len(owners) and rarity(len(owners), n) > 0:
            for x in range(len(owners)):
                for y in range(x + 1, len(owners)):
                    trace_pairs[owners[x], owners[y]].append(t)
    pairs = []
    for key in set(shared) | set(trace_pairs):
        a, b = students[key[0]], students[key[1]]
        s_ab = shared.get(key, 0.0)
        smaller = min(a.mass, b.mass)
        overlap = min(1.0, s_ab / smaller) if smaller > 0 else 0.0
        code = overlap * amount(s_ab)
        kept = 1.0
        traces = tuple(sorted(trace_pairs.get(key, ()), key=lambda t: (t.kind, t.value)))
        for t in traces:
            kept *= 1.0 - STRENGTH[t.kind] * rarity(len(trace_index[t]), n)
        trace = 1.0 - kept
        score = 1.0 - (1.0 - code) * (1.0 - trace)
        if score >= REPORTED:
            common = frozenset(h for h in a.keys.keys() & b.keys.keys() if weight[h] > 0) if s_ab else frozenset()
            pairs.append(Pair(a, b, score, code, trace, overlap, common, traces))
    pairs.sort(key=lambda p: (-p.score, p.a.work.student, p.b.work.student))
    return pairs, weight


def release_of(notebook: dict, solution_sources: list[str]) -> Release:
    """The release from the released notebook's JSON and the instructor's solution files' text."""
    from .fingerprints import normalise

    sources: set[str] = set()
    raw: set[str] = set()
    kgrams: set[int] = set()
    ids: set[str] = set()
    for cell in notebook.get("cells", []):
        if isinstance(cell.get("id"), str):
            ids.add(cell["id"])
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        raw.add(src)
        sources.add(normalise(src)[0])
        kgrams |= all_kgrams(src)
    canonical: set[int] = set()
    for text in solution_sources:
        canonical |= all_kgrams(text)
    return Release(frozenset(sources), frozenset(kgrams), frozenset(ids), frozenset(raw), frozenset(canonical))


def regions_of(student: Student, hashes: frozenset[int]) -> list[tuple[int, list[tuple[int, int]]]]:
    """(unit index, character ranges) of ``student``'s units that ``hashes`` cover."""
    from .fingerprints import source_regions

    out = []
    for i, p in enumerate(student.prints):
        mine = {h for h in hashes if h in p.positions}
        if mine:
            out.append((i, source_regions(p, mine)))
    return out


def defs_in(source: str) -> list[str]:
    return _DEF.findall(source)
