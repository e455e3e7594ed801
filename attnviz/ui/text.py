"""Text from users, made safe for Streamlit's Markdown (at the bottom of the ui package:
no other ui module imported, so :mod:`~attnviz.ui.state`, :mod:`~attnviz.ui.page` and the
sidebar can all use it)."""

from __future__ import annotations

import html
import re

from attnviz.i18n import FSI, PDI
from attnviz.teaching.token_text import visible

#: Unicode's bidirectional controls (ALM, LRM, RLM, LRE … RLO, LRI … PDI). In text shown
#: back to a user they reorder what follows: U+202E (right-to-left override) before a
#: class code turned the rest of the error message around. :func:`visible_bidi` shows each
#: as its code point instead.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible_bidi(text: str) -> str:
    """``text`` with every bidirectional control replaced by its code point, ``<U+202E>``:
    seen, and reordering nothing; except a first-strong isolate closed in the same text
    (U+2068 ... U+2069, nested or not), which orders only what is inside it by its own first
    letter: what a right-to-left catalog puts around a formula or a value
    (:func:`attnviz.i18n.isolate`), kept in the app's words that pass through here."""
    if FSI not in text:
        return BIDI_CONTROLS.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
    kept, opened = set(), []
    for i, c in enumerate(text):
        if c == FSI:
            opened.append(i)
        elif c == PDI and opened:
            kept |= {opened.pop(), i}
    return "".join(
        f"<U+{ord(c):04X}>" if i not in kept and BIDI_CONTROLS.match(c) else c
        for i, c in enumerate(text)
    )


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")


def plain_text(text: object) -> str:
    """``text`` drawn literally by Markdown as ordinary text (not a code span: the
    projector's type, e.g. nicknames): every Markdown and LaTeX punctuation character
    escaped (a token label may hold ``*``, ``$``), bidirectional controls shown
    (:func:`visible_bidi`), line breaks made spaces."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(visible_bidi(str(text)).splitlines()))


def md_text(label: object) -> str:
    """``label`` as Markdown that Streamlit shows literally: a code span.

    Streamlit renders Markdown in st.markdown, st.caption, st.subheader, alerts, metric
    and widget labels: ``[visit](https://…)`` would become a link, ``**x**`` bold,
    ``:smile:`` an emoji, ``$x$`` maths. Inside a code span none of that applies, so
    every text that comes from a user (token labels, file names, URL values) goes
    through this function before it reaches Markdown. The fence is one backtick longer
    than the longest run of backticks in the text; line breaks become spaces, and
    bidirectional controls are shown as their code points (:func:`visible_bidi`).
    """
    text = " ".join(visible_bidi(str(label)).splitlines()) or " "
    longest = max(len(run) for run in re.findall("`*", text))
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end of a code span that has a space at both
    # ends (and is not all spaces); a backtick at an end would join the fence: pad both.
    edge = text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip())
    pad = " " if edge else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_token(token: object) -> str:
    """A token as literal Markdown (:func:`md_text`) with its whitespace visible
    (:func:`attnviz.teaching.token_text.visible`): a newline is `↵`, never a blank."""
    return md_text(visible(token))


def pointing(hover: str, tap: str) -> str:
    """Words about pointing at a chart that fit the device: ``hover`` for a mouse, ``tap``
    for a touch screen (a phone says "tap", issue 35). Both are sent; the app's stylesheet
    shows the one that fits (CSS ``(hover: none)``, the board's test of a touch screen):
    HTML for ``st.markdown`` / ``st.caption`` with ``unsafe_allow_html=True``; the words
    are the app's own, never a user's: literals or their translations (``_("Tap a
    cell")``), escaped here for HTML (a catalog's ``<`` or ``&`` is shown as written). Put
    the spans into a translated sentence with a placeholder, so that each language orders
    its words: ``_("{point} to see its weights.").format(point=pointing(_("Hover a cell"),
    _("Tap a cell")))``."""
    hover, tap = html.escape(hover, quote=False), html.escape(tap, quote=False)
    return f'<span class="attnviz-hover">{hover}</span><span class="attnviz-tap">{tap}</span>'
