"""A picture of charts.py (an ``Svg``: rectangles, lines, texts) as SVG markup, every text escaped.

Written here rather than as a template: a page draws thousands of cells, and a template call
per cell was half of a feedback page's time.
"""
from __future__ import annotations

from markupsafe import escape


def svg_markup(p) -> str:
    """``p`` (a charts.Svg) as markup: every text escaped (its label, class, the cells' hover
    titles and colours, the texts), the numbers written as the pages write numbers."""
    g = _g
    label = escape(p.label)
    cls = f' class="{escape(p.css_class)}"' if p.css_class else ""
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {g(p.width)} {g(p.height)}" '
             f'width="{g(p.width)}" height="{g(p.height)}" role="img" aria-label="{label}" '
             f'font-family="system-ui,sans-serif" font-size="{escape(p.font_size)}"{cls}><title>{label}</title>']
    for r in p.rects:
        edge = ' stroke="#c8c8c8" stroke-width="0.5"' if r.stroke else ""
        end = "/>" if r.title is None else f"><title>{escape(r.title)}</title></rect>"
        parts.append(f'<rect x="{g(r.x)}" y="{g(r.y)}" width="{g(r.width)}" height="{g(r.height)}" '
                     f'fill="{escape(r.fill)}"{edge}{end}')
    for ln in p.lines:
        parts.append(f'<line x1="{g(ln.x1)}" y1="{g(ln.y1)}" x2="{g(ln.x2)}" y2="{g(ln.y2)}" stroke="#555"/>')
    for t in p.texts:
        at = f'transform="translate({g(t.x)} {g(t.y)}) rotate(-90)"' if t.rotate else f'x="{g(t.x)}" y="{g(t.y)}"'
        anchor = f' text-anchor="{escape(t.anchor)}"' if t.anchor != "start" else ""
        parts.append(f'<text {at}{anchor} fill="{escape(t.fill)}">{escape(t.text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _g(x: float) -> str:
    """A coordinate as the pages print numbers (render.points): no trailing zeros."""
    return f"{x:g}"
