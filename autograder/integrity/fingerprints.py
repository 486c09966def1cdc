"""Code to fingerprints: the code's shape as k-grams, winnowed (MOSS's method).

Normalisation follows copydetect's rules (the tool the issue suggests), done with Python's own
``tokenize``: every name a student chooses (variables, parameters, attributes, imports'
aliases) becomes ``V``, a name after ``def`` becomes ``F`` and after ``class`` ``O``, every
string ``S``; keywords, builtins (``range``, ``isinstance``), numbers and operators stay;
comments, docstrings, blank lines and all layout go. So renaming, reformatting and comments change
nothing, and since a submission's fingerprints are a set of k-grams (K normalised characters),
moving functions or cells around changes only the few k-grams that straddle a boundary.
Winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003) keeps the smallest hash of every
window of WINDOW k-grams, so every match of at least K + WINDOW - 1 normalised characters is
found, at a quarter of the fingerprints.

Why not copydetect itself (docs/integrity.md): measured here, its pygments lexer reads about
60 kB of code a second and its winnowing (a Python loop: the wheel has no C extension) about
70,000 hashes a second, so a class of 1,000 notebooks took well over the minute allowed on
lexing and winnowing alone; ``tokenize`` is about six times faster. Its k-gram hash is also
Python's ``hash()``, salted per process, so which k-grams it keeps, and the report, would
change from run to run: here each k-gram is hashed with BLAKE2b (hashlib).
"""
from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import tokenize
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

K = 25  # normalised characters per k-gram: copydetect's default noise threshold
WINDOW = 4  # winnowing window: every match of K + WINDOW - 1 = 28 normalised characters is seen
_KEPT = frozenset(keyword.kwlist) | frozenset(getattr(keyword, "softkwlist", ())) | frozenset(dir(builtins))
_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER, tokenize.ENCODING}


@dataclass
class Print:
    """One unit of code (a cell, a statement), fingerprinted."""
    label: str
    source: str  # as the student wrote it
    normal: str  # its normalised text
    spans: np.ndarray  # (len(normal), 2): the source characters each normalised character stands for
    positions: dict[int, list[int]]  # fingerprint -> where its k-gram starts in ``normal``


def normalise(source: str) -> tuple[str, np.ndarray]:
    """The normalised text and, per character of it, the (start, end) in ``source`` of its token.
    A source Python cannot tokenize normalises to nothing (the reader compiled every unit, so
    only a hostile one can get here)."""
    line_starts = [0]
    for line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    after = ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndexError):
        return "", np.zeros((0, 2), dtype=np.int64)
    line_start = True  # no token of this logical line yet
    for n, tok in enumerate(tokens):
        if tok.type in _DROPPED:
            line_start = line_start or tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
            continue
        if tok.type == tokenize.STRING and line_start and _ends_line(tokens, n):
            continue  # a docstring, or a string as a statement: a comment by another name
        line_start = False
        if tok.type == tokenize.NAME:
            text = tok.string if tok.string in _KEPT and after != "." else (
                "F" if after == "def" else "O" if after == "class" else "V")
        elif tok.type == tokenize.STRING:
            text = "S"
        else:
            text = tok.string
        after = tok.string
        out.append(text)
        starts.append(line_starts[tok.start[0] - 1] + tok.start[1])
        ends.append(line_starts[tok.end[0] - 1] + tok.end[1])
    widths = [len(t) for t in out]
    spans = np.stack([np.repeat(np.array(starts, dtype=np.int64), widths),
                      np.repeat(np.array(ends, dtype=np.int64), widths)], axis=1) if out else np.zeros((0, 2), np.int64)
    return "".join(out), spans


def _ends_line(tokens: list, n: int) -> bool:
    for m in range(n + 1, len(tokens)):
        if tokens[m].type not in (tokenize.COMMENT, tokenize.NL):
            return tokens[m].type in (tokenize.NEWLINE, tokenize.ENDMARKER)
    return True


def kgram_hashes(normal: str) -> np.ndarray:
    data = normal.encode("utf-8", "surrogatepass")
    if len(data) != len(normal):  # a name in another script is one V, but keep it exact anyway
        grams = [normal[i : i + K].encode("utf-8", "surrogatepass") for i in range(len(normal) - K + 1)]
    else:
        grams = [data[i : i + K] for i in range(len(data) - K + 1)]
    return np.array([int.from_bytes(hashlib.blake2b(g, digest_size=8).digest(), "big") >> 1 for g in grams],
                    dtype=np.int64)


def winnow(hashes: np.ndarray) -> np.ndarray:
    """The positions robust winnowing selects: the rightmost smallest hash of each window."""
    if len(hashes) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(hashes) <= WINDOW:
        return np.array([len(hashes) - 1 - int(np.argmin(hashes[::-1]))])
    reversed_windows = sliding_window_view(hashes, WINDOW)[:, ::-1]
    picks = WINDOW - 1 - reversed_windows.argmin(axis=1) + np.arange(len(hashes) - WINDOW + 1)
    return np.unique(picks)


def fingerprint(label: str, source: str) -> Print:
    normal, spans = normalise(source)
    hashes = kgram_hashes(normal)
    positions: dict[int, list[int]] = {}
    for i in winnow(hashes).tolist():
        positions.setdefault(int(hashes[i]), []).append(i)
    return Print(label, source, normal, spans, positions)


def all_kgrams(source: str) -> set[int]:
    """Every k-gram of ``source``, winnowed or not: what released code is removed by."""
    return set(kgram_hashes(normalise(source)[0]).tolist())


def source_regions(p: Print, hashes: set[int]) -> list[tuple[int, int]]:
    """The character ranges of ``p.source`` that the k-grams of ``hashes`` cover, merged, in order."""
    starts = sorted(i for h in hashes for i in p.positions.get(h, ()))
    merged: list[list[int]] = []
    for i in starts:  # normalised [i, i + K)
        if merged and i <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], i + K)
        else:
            merged.append([i, i + K])
    return [(int(p.spans[a][0]), int(p.spans[b - 1][1])) for a, b in merged]
