"""The pictures of the pages as data: heatmaps, the score histogram, stacked bars.

Each is an ``Svg`` (rectangles, texts, lines, in the SVG's own units), drawn by svg.py (the
templates' ``svg``), which escapes every text. The geometry is worked out here, where a
text's width can be allowed for: an SVG clips whatever falls outside its box, so each
picture is made wide and tall enough for its longest label (at ``EM`` of the font size per
character, wider than the glyphs of the sans fonts the pages fall back to).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from .render import plural

EM = 0.66  # the most a character of the pages' sans fonts is wide, on average over a label, in ems
MAX_CELLS = 24  # rows and columns of a heatmap drawn; larger patterns are cut (and the picture says so)
NAN_COLOUR = "#d6336c"  # a weight that was nan or inf (stored as -1)


def text_width(text: str, size: float) -> float:
    return len(text) * size * EM


# The parts are named tuples, not frozen dataclasses: a page makes hundreds of cells, and a
# frozen dataclass sets each field through object.__setattr__, three times what a tuple takes.
class Rect(NamedTuple):
    x: float
    y: float
    width: float
    height: float
    fill: str
    title: str | None = None  # shown on hover
    stroke: bool = False  # a thin grey edge (a heatmap's cells, the colour scale)


class Text(NamedTuple):
    x: float
    y: float
    text: str
    anchor: str = "start"  # "start", "middle", "end"
    fill: str = "#333"
    rotate: bool = False  # read upwards, turned about (x, y)


class Line(NamedTuple):
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass
class Svg:
    width: float
    height: float
    label: str  # what it shows, for a screen reader (aria-label) and as its title
    css_class: str = ""
    font_size: int = 11
    rects: list[Rect] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)


# ---------------------------------------------------------------- heatmaps

def shade(v: float) -> str:
    """White at 0, deep blue at 1 (a single-hue scale: 0 reads as empty, not as grey)."""
    if v < 0 or v != v:
        return NAN_COLOUR
    return _SHADES[round(min(v, 1.0) * 1000)]


def _shade_of(v: float) -> str:
    lo, hi = (255, 255, 255), (8, 48, 107)
    return "#%02x%02x%02x" % tuple(round(a + (b - a) * v) for a, b in zip(lo, hi, strict=True))


# A page draws thousands of cells: the colours of 1001 steps, made once (finer than 8 bits shows).
_SHADES = [_shade_of(k / 1000) for k in range(1001)]


def heatmap(weights: list[list[float]], title: str, row_axis: str = "query position",
            col_axis: str = "key position", scale: tuple[str, str] = ("0", "1"), vmax: float = 1.0) -> Svg | None:
    """A matrix of weights in [0, 1] as a heatmap: axis titles, numbered rows and columns, a
    colour scale below with its two ends named (``scale``); -1 (nan or inf) in its own colour.
    Cells are sized so the whole map is about 300 units wide (10 to 44 a cell). ``vmax``: the
    value drawn darkest. None for an empty matrix."""
    pictures = heatmaps(weights, [title], row_axis, col_axis, scale, vmax)
    return pictures[0] if pictures else None


def heatmaps(weights: list[list[float]], titles: list[str], row_axis: str = "query position",
             col_axis: str = "key position", scale: tuple[str, str] = ("0", "1"), vmax: float = 1.0) -> list[Svg]:
    """The heatmap of one matrix under each title, drawn once: the pictures share their parts
    (svg.drawn then writes them once too). A page shows a student's map beside the expected
    one, and every student who got it right has the same weights in both. [] for an empty matrix."""
    size = 11
    rows = [list(r[:MAX_CELLS]) for r in weights[:MAX_CELLS]]
    n_rows, n_cols = len(rows), max((len(r) for r in rows), default=0)
    if not n_rows or not n_cols:
        return []
    cut = len(weights) > MAX_CELLS or any(len(r) > MAX_CELLS for r in weights)
    cell = max(10, min(44, 300 // max(n_rows, n_cols)))
    left, top = 44, 40
    grid_w, grid_h = n_cols * cell, n_rows * cell
    every = 1 if max(n_rows, n_cols) <= 12 else 2
    labels = [f"{title}: heatmap of {n_rows} by {n_cols} weights, rows are {row_axis}s, columns are {col_axis}s"
              for title in titles]
    out = Svg(0, 0, labels[0], "heatmap", size)
    col_title, row_title = f"{col_axis} →", f"← {row_axis}"  # the row title reads upwards: its arrow points down
    half = text_width(col_title, size) / 2
    col_x = max(left + grid_w / 2, half + 2)
    out.texts.append(Text(col_x, 12, col_title, "middle", "#1f1f1f"))
    half_row = text_width(row_title, size) / 2
    row_y = max(top + grid_h / 2, half_row + 2)
    out.texts.append(Text(11, row_y, row_title, "middle", "#1f1f1f", rotate=True))
    for j in range(0, n_cols, every):
        out.texts.append(Text(left + j * cell + cell / 2, top - 6, str(j), "middle"))
    for i in range(0, n_rows, every):
        out.texts.append(Text(left - 4, top + i * cell + cell / 2 + 4, str(i), "end"))
    for i, r in enumerate(rows):
        for j in range(n_cols):
            v = r[j] if j < len(r) else 0.0
            shown = "nan or inf" if v < 0 else f"{v:.3f}"
            out.rects.append(Rect(left + j * cell, top + i * cell, cell, cell,
                                  shade(v / vmax if v >= 0 else v), f"{row_axis} {i}, {col_axis} {j}: {shown}", True))
    # The colour scale: eleven steps from 0 to 1, its ends named below it, and nan/inf when present.
    low, high = scale
    bar = max(min(176, grid_w), text_width(low, size) + text_width(high, size) + 12)
    step = bar / 11
    y = top + grid_h + 14
    for k in range(11):
        out.rects.append(Rect(round(left + k * step, 1), y, round(step, 1), 10, shade(k / 10), stroke=True))
    out.texts += [Text(left, y + 23, low), Text(round(left + bar, 1), y + 23, high, "end")]
    right = max(left + grid_w, left + bar, col_x + half)
    if any(v < 0 for r in rows for v in r):
        out.rects.append(Rect(round(left + bar + 10, 1), y, 10, 10, NAN_COLOUR))
        out.texts.append(Text(round(left + bar + 24, 1), y + 9, "nan/inf"))
        right = max(right, left + bar + 24 + text_width("nan/inf", size))
    bottom = y + 28
    if cut:
        note = f"first {MAX_CELLS} positions of {len(weights)} × {max(len(r) for r in weights)}"
        out.texts.append(Text(left, y + 38, note))
        right, bottom = max(right, left + text_width(note, size)), y + 44
    out.width = math.ceil(right + 8)
    out.height = math.ceil(max(bottom, row_y + half_row + 2))
    return [out, *(replace(out, label=label) for label in labels[1:])]


# ---------------------------------------------------------------- the class's charts

def bin_edges(max_score: float) -> list[float]:
    """The score histogram's edges: whole points from 0, about ten bins, the last ending at
    the maximum (full marks have a bar of their own beside them); a remainder shorter than
    half a bin joins the bin before it rather than make a sliver of its own."""
    width = max(1, math.ceil(max_score / 10))
    edges = [float(e) for e in range(0, math.ceil(max_score), width)]
    if len(edges) > 1 and max_score - edges[-1] < width / 2:
        edges.pop()
    return edges + [max_score]


def bin_counts(scores: list[float], edges: list[float]) -> list[int]:
    """How many scores fall in each bin [edges[k], edges[k + 1]), then how many are full marks."""
    counts = [0] * len(edges)
    for s in scores:
        k = len(edges) - 1 if s >= edges[-1] else next(k for k in range(len(edges) - 1) if s < edges[k + 1])
        counts[k] += 1
    return counts


def histogram(scores: list[float], max_score: float) -> Svg:
    """The scores as bars over whole-point bins, drawn to scale on a points axis, with full
    marks a green bar of its own; each bar's count above it."""
    size, left, plot, h, top = 11, 6, 330, 150, 18
    edges = bin_edges(max_score)
    counts = bin_counts(scores, edges)
    most = max(counts) or 1
    scale = plot / max(max_score, 1e-9)
    y0 = top + h
    out = Svg(0, 0, f"Score histogram: {plural(len(scores), 'student')}, points in bins of whole points",
              "histogram", size)
    bars = [(left + edges[k] * scale, left + edges[k + 1] * scale, f"{edges[k]:g} to under {edges[k + 1]:g} points")
            for k in range(len(edges) - 1)]
    full_x = left + plot + 10
    bars.append((full_x, full_x + 26, f"full marks ({max_score:g} points)"))
    for k, ((x1, x2, what), n) in enumerate(zip(bars, counts, strict=True)):
        bh = h * n / most
        last = k == len(bars) - 1
        out.rects.append(Rect(round(x1 + 1, 1), round(y0 - bh, 1), round(max(x2 - x1 - 2, 1), 1), round(bh, 1),
                              "#17692e" if last else "#0b57b0", f"{what}: {plural(n, 'student')}"))
        if n:
            out.texts.append(Text(round((x1 + x2) / 2, 1), round(y0 - bh - 3, 1), str(n), "middle", "#1f1f1f"))
    out.lines.append(Line(left, y0, full_x + 26, y0))
    # A tick label at each edge, as many as fit: 0 and the maximum always.
    kept: list[tuple[float, str]] = []
    for e in edges:
        x, words = left + e * scale, f"{e:g}"
        if kept and x - text_width(words, size) / 2 < kept[-1][0] + text_width(kept[-1][1], size) / 2 + 4:
            if e != edges[-1]:
                continue
            kept.pop()
        kept.append((x, words))
    out.texts += [Text(round(x, 1), y0 + 14, words, "middle") for x, words in kept]
    out.lines += [Line(round(x, 1), y0, round(x, 1), y0 + 3) for x, _ in kept]
    out.texts.append(Text(full_x + 13, y0 + 14, "full", "middle", "#17692e"))
    last_x, last = kept[-1]
    out.width = math.ceil(max(full_x + 26 + text_width("full", size) / 2, last_x + text_width(last, size) / 2) + 6)
    out.height = y0 + 22
    return out


def stacked_bars(title: str, labels: list[str], series: list[tuple[str, str, list[int]]], total: int) -> Svg:
    """Horizontal stacked bars: one row per label, one colour per series (named in a legend
    below when there are several); each part's count on it where it fits."""
    size, row, width = 12, 24, 300
    left = math.ceil(max((text_width(lab, size) for lab in labels), default=0) + 10)
    scale = width / max(total, 1)
    out = Svg(0, 0, f"{title}, of {plural(total, 'student')}", "bars", size)
    for i, lab in enumerate(labels):
        y = 4 + i * row
        out.texts.append(Text(left - 6, y + 14, lab, "end", "#1f1f1f"))
        x = left
        for name, colour, values in series:
            bw = values[i] * scale
            if bw > 0:
                out.rects.append(Rect(round(x, 1), y, round(bw, 1), row - 6, colour,
                                      f"{lab}: {values[i]} {name}"))
                if bw > text_width(str(values[i]), size) + 6:
                    out.texts.append(Text(round(x + bw / 2, 1), y + 14, str(values[i]), "middle", ink(colour)))
            x += bw
    y = 4 + len(labels) * row + 14
    right = left + width
    if len(series) > 1:
        x = 0.0
        for name, colour, _ in series:
            out.rects.append(Rect(round(x, 1), y - 10, 12, 12, colour))
            out.texts.append(Text(round(x + 16, 1), y, name, fill="#1f1f1f"))
            x += 16 + text_width(name, size) + 14
        right = max(right, x)
    out.width, out.height = math.ceil(right + 4), y + 8
    return out


def ink(colour: str) -> str:
    """Black or white, whichever reads on ``colour`` (contrast above 4.5:1 for the palette used)."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lum = sum(c * (v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4)
              for c, v in zip((0.2126, 0.7152, 0.0722), (r, g, b), strict=True))
    return "#000" if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else "#fff"
