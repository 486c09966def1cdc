"""LaTeX in a notebook's markdown as MathML, so a page shows the math with no script and no
network: nbconvert's pages load MathJax from a CDN at view time, and offline a student reads
``$1/\\sqrt{d_k}$`` raw. Browsers draw MathML themselves (MathML Core).

``markdown_with_mathml`` rewrites ``$...$`` and ``$$...$$`` outside code (inline code, fenced
and indented blocks) into ``<math>`` elements, which markdown passes through as inline HTML.
The MathML's text is written as character references where markdown would read a character
as markup (``*``, ``_``, ``[``...). A formula the converter cannot read is left as it was.
"""
from __future__ import annotations

import re

# Code, where a dollar is a dollar: fenced blocks, indented blocks, inline code spans.
_CODE = re.compile(r"(^(```|~~~)[^\n]*\n.*?^\2[^\n]*$|^(?: {4}|\t)[^\n]*$|(`+).+?\3)", re.M | re.S)
# $$display$$ first, then $inline$ (not an escaped \$, not "$ 5 and $ 6": no space inside the ends;
# it may go on to the next line, not to the next paragraph).
_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<![\\$])\$(?!\s)((?:\\.|[^$\\\n]|\n(?!\s*\n))+?)(?<![\s\\])\$(?!\d)",
                   re.S)
_TEXT = re.compile(r">([^<]+)<")
_MARKUP = re.compile(r"[*_`\[\]\\$~|]")


def to_mathml(latex: str, display: bool = False) -> str | None:
    """One formula as a ``<math>`` element (None: the converter cannot read it)."""
    from latex2mathml.converter import convert

    try:
        mathml = convert(latex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - any formula it cannot read stays LaTeX, shown as written
        return None
    return _TEXT.sub(lambda m: ">" + _MARKUP.sub(lambda c: f"&#x{ord(c.group()):04x};", m.group(1)) + "<", mathml)


def _math(text: str) -> str:
    def one(m: re.Match) -> str:
        display = m.group(1) is not None
        return to_mathml(m.group(1) if display else m.group(2), display) or m.group(0)
    return _MATH.sub(one, text)


def markdown_with_mathml(source: str) -> str:
    """``source`` (markdown) with its math as MathML, its code untouched."""
    out, at = [], 0
    for m in _CODE.finditer(source):
        out += [_math(source[at:m.start()]), m.group(0)]
        at = m.end()
    out.append(_math(source[at:]))
    return "".join(out)
