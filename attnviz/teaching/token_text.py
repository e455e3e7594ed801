"""A token as text a person can see (issue 47): whitespace made visible (pure Python).

A model's tokens are often whitespace: a newline, a word's leading space (" the"), a tab.
Written as they are, a chart's tick, a bar, a button or a caption shows a blank. Every view
that shows a token as text calls :func:`visible`; where the exact token matters (a hover, a
table) :func:`raw` writes it as code would ("\\n", " the").

- a newline is ``↵``, a carriage return ``␍``, a tab ``⇥``, wherever they are in the token;
- a space (any whitespace) at either end is ``␣``: " the" -> "␣the", "   " -> "␣␣␣";
  spaces between other characters stay ("New York");
- other control characters are their Unicode control pictures (U+0000 -> ``␀``);
- the empty token is ``∅``.

Word pieces keep their own marks, which already read well: MiniLM's "##ing", SentencePiece's
"▁cat" (T5, Marian), byte-level BPE's "Ġcat" (BART's pieces). :func:`visible` is idempotent
(``visible(visible(t)) == visible(t)``), so a label that went through it once may go through
again. Two tokens can look alike ("↵" and a real "↵"): the raw form tells them apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

__all__ = ["EMPTY", "NEWLINE", "SPACE", "TAB", "numbered", "raw", "visible", "visible_all"]

NEWLINE = "↵"  #: a newline ("\n")
TAB = "⇥"  #: a tab ("\t")
SPACE = "␣"  #: a space (any whitespace) at either end of a token
EMPTY = "∅"  #: the empty token

_INNER = {"\n": NEWLINE, "\r": "␍", "\t": TAB}


def _char(c: str) -> str:
    """One character that would draw as nothing (a control character), made visible."""
    if c in _INNER:
        return _INNER[c]
    o = ord(c)
    if o < 0x20:
        return chr(0x2400 + o)  # the Unicode control pictures: ␀ … ␟
    if o == 0x7F:
        return "␡"
    return c


def visible(token: object) -> str:
    """``token`` as text with its whitespace visible: "\\n" -> "↵", " the" -> "␣the",
    "\\t" -> "⇥", "" -> "∅" (the module's rules)."""
    s = str(token)
    if not s:
        return EMPTY
    start = len(s) - len(s.lstrip())
    end = len(s.rstrip())
    if start >= end:  # whitespace only
        start = end = len(s)
    head = "".join(_INNER.get(c, SPACE) if c.isspace() else _char(c) for c in s[:start])
    body = "".join(_char(c) for c in s[start:end])
    tail = "".join(_INNER.get(c, SPACE) if c.isspace() else _char(c) for c in s[end:])
    return head + body + tail


def visible_all(tokens: Iterable[object]) -> list[str]:
    """:func:`visible` of each token."""
    return [visible(t) for t in tokens]


def raw(token: object) -> str:
    """``token`` as code writes it, in double quotes with its escapes: "\\n" -> ``"\\n"``,
    " the" -> ``" the"``, "\\t" -> ``"\\t"``; other characters as they are ("é", "▁cat")."""
    return json.dumps(str(token), ensure_ascii=False)


def numbered(tokens: Iterable[object]) -> list[str]:
    """Distinct labels for tokens that may repeat or look alike ("0: the", "3: the", "4: ↵"):
    the position, then :func:`visible`. For a chart that names its categories by their text
    (a category axis merges equal names)."""
    return [f"{i}: {visible(t)}" for i, t in enumerate(tokens)]
