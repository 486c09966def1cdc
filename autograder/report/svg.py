"""A picture of charts.py (an ``Svg``: rectangles, lines, texts) as SVG markup, every text escaped.

Written here rather than as a template: a page draws thousands of cells, and a template call
per cell was half of a feedback page's time.
"""
from __future__ import annotations

import re

from markupsafe import Markup, escape

# What markupsafe.escape replaces: a string holding none of these is printed as it is.
_SPECIAL = re.compile(r"[&<>'\"]")


def svg_markup(p) -> str:
    """``p`` (a charts.Svg) as markup: every text escaped (its label, class, the cells' hover
    titles and colours, the texts), the numbers written as the pages write numbers
    (render.points: ``g``, no trailing zeros)."""
    return _opening(p) + _parts(p) + "</svg>"


def drawn(pictures: list) -> list[Markup | None]:
    """Pictures (charts.Svg, or None where there is nothing to draw) as ``svg_markup`` writes
    them, for a template to print as they are. The parts of pictures that share them (one
    matrix under several titles: charts.heatmaps) are written once, for all of them."""
    # by the parts' identities: each list is held by ``pictures`` meanwhile
    written: dict[tuple[int, int, int], str] = {}
    out: list[Markup | None] = []
    for p in pictures:
        if p is None:
            out.append(None)
            continue
        key = (id(p.rects), id(p.texts), id(p.lines))
        if key not in written:
            written[key] = _parts(p)
        out.append(Markup(_opening(p) + written[key] + "</svg>"))
    return out


def _opening(p) -> str:
    e = escaped
    label = e(p.label)
    cls = f' class="{e(p.css_class)}"' if p.css_class else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {p.width:g} {p.height:g}" '
            f'width="{p.width:g}" height="{p.height:g}" role="img" aria-label="{label}" '
            f'font-family="system-ui,sans-serif" font-size="{e(p.font_size)}"{cls}><title>{label}</title>')


def _parts(p) -> str:
    """The rectangles, lines and texts: all of a picture but its frame and label."""
    e = escaped
    parts = []
    # The parts are charts' named tuples, unpacked in their fields' order (faster than by name).
    for x, y, width, height, fill, title, stroke in p.rects:
        edge = ' stroke="#c8c8c8" stroke-width="0.5"' if stroke else ""
        end = "/>" if title is None else f"><title>{e(title)}</title></rect>"
        parts.append(f'<rect x="{x:g}" y="{y:g}" width="{width:g}" height="{height:g}" fill="{e(fill)}"{edge}{end}')
    for x1, y1, x2, y2 in p.lines:
        parts.append(f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="#555"/>')
    for x, y, words, anchor, fill, rotate in p.texts:
        at = f'transform="translate({x:g} {y:g}) rotate(-90)"' if rotate else f'x="{x:g}" y="{y:g}"'
        aligned = f' text-anchor="{e(anchor)}"' if anchor != "start" else ""
        parts.append(f'<text {at}{aligned} fill="{e(fill)}">{e(words)}</text>')
    return "".join(parts)


def escaped(value) -> str:
    """``value`` as markupsafe.escape prints it. A plain string with nothing to escape (a
    number, a colour, most words: nearly every text of a picture) is that string itself, so
    it is returned without making the Markup escape would: that was a third of a picture's time."""
    return value if type(value) is str and _SPECIAL.search(value) is None else escape(value)
