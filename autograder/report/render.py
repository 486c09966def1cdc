"""Every page the grader writes is rendered here, from the templates in ``templates/``.

One Jinja2 environment with autoescaping on: every value a template prints is HTML-escaped
unless it is already markup the templates made, so no name, message or printed text from a
submission can become a tag; and a value is only ever data, never a template, so a student's
``{{ 7*7 }}`` stays those characters. ``StrictUndefined``: a template that names a value it
was not given fails instead of printing nothing. Jinja2 is imported when the first page is
rendered: grading itself (the pytest face, Gradescope's run) never needs it.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path

# The little markdown the explanations use: `code`, **strong**, *emphasis*.
_CODE = re.compile(r"`([^`]*)`")
_EMPHASIS = re.compile(r"\*\*(?P<strong>\S(?:.*?\S)?)\*\*|(?<![\w*])\*(?P<em>\S(?:.*?\S)?)\*(?![\w*])")


def spans(text: str) -> list[tuple[str, str]]:
    """``text`` as (kind, text) pieces, kind one of "text", "code", "strong", "em": what the
    templates' ``md`` macro prints, each piece escaped as it is printed."""
    out: list[tuple[str, str]] = []
    for i, part in enumerate(_CODE.split(text)):
        if i % 2:
            out.append(("code", part))
            continue
        at = 0
        for m in _EMPHASIS.finditer(part):
            out.append(("text", part[at:m.start()]))
            out.append(("strong", m["strong"]) if m["strong"] is not None else ("em", m["em"]))
            at = m.end()
        out.append(("text", part[at:]))
    return [(kind, s) for kind, s in out if s]


def plural(n: int, noun: str) -> str:
    """ "1 student", "2 students"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def points(x: float) -> str:
    return f"{x:g}"


@functools.cache
def environment():
    import jinja2
    from markupsafe import Markup

    from .svg import svg_markup

    # auto_reload off: a template is read once a process, as the grader's code is (regrade.grader_version
    # is of the files as they were when it started), not looked up on disk again for every page.
    env = jinja2.Environment(loader=jinja2.PackageLoader("autograder.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             auto_reload=False,
                             bytecode_cache=compiled_cache(Path(__file__).parent / "__pycache__" / "templates"))
    env.filters.update(spans=spans, plural=plural, g=points)
    env.globals["svg"] = lambda picture: Markup(svg_markup(picture))  # charts.Svg, escaped there
    return env


def compiled_cache(folder: Path):
    """The templates compiled once, kept beside this package's own bytecode (its __pycache__,
    as Python keeps a module's): compiling all of them takes some 40 ms, every run. Each is
    keyed by its source's checksum, so an edited template is compiled again. Only a folder that
    none but its owner, this user, may write is used (code is loaded from it); else None, and
    every run compiles."""
    import stat

    import jinja2

    try:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError:  # an installation this user may not write to
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder))


def compile_all() -> None:
    """Compile every template now. grade-batch calls this before it forks its workers, which
    then share the compiled templates instead of each compiling them for its first page (as
    the batch would again for the dashboard): tens of milliseconds, three times over."""
    env = environment()
    for name in env.list_templates():  # the pages' style and script too: they are included as templates
        env.get_template(name)


def render(template: str, **values) -> str:
    """A whole page (or an SVG) from ``template`` and the typed ``values`` it shows."""
    return environment().get_template(template).render(**values)


def macro(template: str, name: str):
    """A macro of a partial, to render one piece alone (a heatmap, a line of markdown)."""
    return getattr(environment().get_template(template).module, name)
