"""The exercises' text as HTML for the student's page: the small Markdown the exercises write
(paragraphs, ``- `` lists, ``**bold**``, ``code``) with its formulas as MathML
(:mod:`attnviz.classroom.web.mathml`).

A display formula made of several matrices side by side (``Q = [...] \\qquad K = [...]``)
becomes one ``<math>`` per matrix in a wrapping row (``.eqs``), so that a phone stacks them
instead of hiding one past the screen's edge. A formula without a matrix (inline, or one
part of a display) is cut after each ``=``, ``\\approx``, ``+`` and ``-`` outside braces
and brackets into one ``<math>`` per piece with a space between them: a browser does not
break a line inside a ``<math>``, so a long sum (``q_i \\cdot k_j = (-0.1) \\cdot 0.0 +
0.2 \\cdot (-0.6) + \\ldots = 0.01``) would run past a phone's edge; cut, it wraps as text
does. Every text is escaped; a formula this module
cannot read is shown as its LaTeX source in ``<code>`` (never dropped), and
:func:`text_html` with ``strict=True`` raises instead (the tests walk every exercise so).
"""

from __future__ import annotations

import html
import re

from attnviz.classroom.web.mathml import UnknownLatex, to_mathml

_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"\$([^$\n]+?)\$|\*\*(.+?)\*\*|`([^`\n]+)`")


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _formula(tex: str, display: bool, strict: bool) -> str:
    try:
        return to_mathml(tex, display=display)
    except UnknownLatex:
        if strict:
            raise
        return f"<code>{_esc(tex)}</code>"


def _top_level_parts(tex: str) -> list[str]:
    """``tex`` cut at each ``\\qquad`` outside braces and environments."""
    parts, depth, start = [], 0, 0
    for m in re.finditer(r"\\begin|\\end|[{}]|\\qquad", tex):
        tok = m.group()
        if tok in ("{", "\\begin"):
            depth += 1
        elif tok in ("}", "\\end"):
            depth -= 1
        elif depth == 0:
            parts.append(tex[start : m.start()])
            start = m.end()
    parts.append(tex[start:])
    return [p.strip() for p in parts if p.strip()]


#: Where a long inline formula may wrap: after these, outside braces and brackets.
_BREAK_AFTER = re.compile(r"\\begin|\\end|\\left|\\right|[{}()\[\]]|\\approx(?![A-Za-z])|[=+-]")


def _inline_pieces(tex: str) -> list[str]:
    """``tex`` cut after each ``=``, ``\\approx``, ``+`` and binary ``-`` outside braces,
    brackets and environments (a ``-`` after an operator or at the start is a sign and
    stays with its number)."""
    pieces, depth, start, last = [], 0, 0, ""
    for m in _BREAK_AFTER.finditer(tex):
        tok = m.group()
        before = tex[start : m.start()].strip()
        if tok in ("{", "(", "[", "\\begin", "\\left"):
            depth += 1
        elif tok in ("}", ")", "]", "\\end", "\\right"):
            depth -= 1
        elif depth == 0 and not (tok == "-" and (not before or last == m.start())):
            pieces.append(tex[start : m.end()])
            start = m.end()
            last = _next_token_start(tex, start)
            continue
        if tok in "=+-" or tok == "\\approx":  # an operator: a "-" right after it is a sign
            last = _next_token_start(tex, m.end())
    pieces.append(tex[start:])
    return [p.strip() for p in pieces if p.strip()]


def _next_token_start(tex: str, at: int) -> int:
    """Where the next non-space character of ``tex`` from ``at`` is."""
    while at < len(tex) and tex[at].isspace():
        at += 1
    return at


def _pieces(tex: str, display: bool, strict: bool) -> str:
    """A formula as one ``<math>`` per piece of :func:`_inline_pieces`, in one
    ``<span class="formula">`` (the style sheet shows a display formula's pieces in
    display style, side by side), so that it can wrap; whole when it holds a matrix (its
    name stays beside it), cannot be cut, or a piece cannot be read."""
    pieces = [] if "\\begin" in tex else _inline_pieces(tex)
    if len(pieces) < 2:
        return _formula(tex, display, strict)
    try:
        maths = [to_mathml(p, display=display) for p in pieces]
    except UnknownLatex:
        return _formula(tex, display, strict)
    return '<span class="formula">' + " ".join(maths) + "</span>"


def _display(tex: str, strict: bool) -> str:
    parts = _top_level_parts(tex)
    maths = "".join(_pieces(p, True, strict) for p in parts)
    return f'<div class="eqs">{maths}</div>'


def inline_html(text: str, strict: bool = False) -> str:
    """One line: ``$math$``, ``**bold**``, ```code``` and escaped text."""
    out, at = [], 0
    for m in _INLINE.finditer(text):
        out.append(_esc(text[at : m.start()]))
        tex, bold, code = m.groups()
        if tex is not None:
            out.append(_pieces(tex, False, strict))
        elif bold is not None:
            out.append(f"<strong>{inline_html(bold, strict)}</strong>")
        else:
            out.append(f"<code>{_esc(code)}</code>")
        at = m.end()
    out.append(_esc(text[at:]))
    return "".join(out)


def _paragraph(block: str, strict: bool) -> str:
    """Lines of text (one ``<p>``) and ``- `` items (one ``<ul>``), in their order."""
    out: list[str] = []
    kind, run = "", []  # the run of lines being collected: "p" or "ul"
    for line in (line.strip() for line in block.split("\n")):
        if not line:
            continue
        this = "ul" if line.startswith("- ") else "p"
        if this != kind and run:
            out.append(_close(kind, run, strict))
            run = []
        kind = this
        run.append(line[2:] if this == "ul" else line)
    if run:
        out.append(_close(kind, run, strict))
    return "".join(out)


def _close(kind: str, run: list[str], strict: bool) -> str:
    if kind == "ul":
        return "<ul>" + "".join(f"<li>{inline_html(item, strict)}</li>" for item in run) + "</ul>"
    return f"<p>{inline_html(' '.join(run), strict)}</p>"


def text_html(text: str, strict: bool = False) -> str:
    """A question's or an explanation's Markdown as HTML (see the module docstring)."""
    out, at = [], 0
    for m in _DISPLAY.finditer(text):
        for block in re.split(r"\n\s*\n", text[at : m.start()]):
            out.append(_paragraph(block, strict))
        out.append(_display(m.group(1).strip(), strict))
        at = m.end()
    for block in re.split(r"\n\s*\n", text[at:]):
        out.append(_paragraph(block, strict))
    return "".join(out)
