"""attnviz.ui.text: user text shown literally (Markdown, bidi controls)."""

import pytest

from attnviz import ui
from attnviz.ui.text import BIDI_CONTROLS, plain_text

HOSTILE = [
    "[visit](https://example.org/)",
    "<b>bold</b>",
    "**x** _y_ $z$ :smile: :red[r]",
    "a`b",
    "`x",
    "``` y `",
    " a ",
    "",
    "x\ny",
    "# head",
]


@pytest.mark.parametrize("label", HOSTILE)
def test_md_text_is_a_code_span_that_shows_the_label_literally(label):
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").renderInline(ui.md_text(label))
    assert html.startswith("<code>") and html.endswith("</code>"), html
    assert html.count("<code>") == 1 and "<a " not in html and "<strong>" not in html
    shown = html[len("<code>") : -len("</code>")]
    expected = " ".join(label.splitlines()) or " "
    assert shown == expected.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


BIDI = ["\u202eQQQQQQ", "a\u2066b\u2069c", "\u200f\u200e\u061c", "x\u202a\u202b\u202c\u202dy"]


@pytest.mark.parametrize("label", BIDI)
def test_user_text_shows_bidi_controls_instead_of_obeying_them(label):
    """U+202E before a class code reversed the rest of the error message (issue 25)."""
    for shown, plus in ((ui.md_text(label), "+"), (plain_text(label), r"\+")):
        assert not BIDI_CONTROLS.search(shown), repr(shown)
        assert all(f"U{plus}{ord(c):04X}" in shown for c in label if BIDI_CONTROLS.match(c))
    assert ui.md_text("\u202eQQ") == "`<U+202E>QQ`"
    assert plain_text("\u202e*QQ*") == r"\<U\+202E\>\*QQ\*"  # Markdown shows <U+202E>*QQ*


def test_an_isolate_closed_in_the_text_is_kept_and_nothing_else():
    """A right-to-left catalog isolates formulas and values (U+2068 ... U+2069): shown as
    "<U+2068>" they littered every Arabic stop of a lesson's bar. A closed isolate (nested
    too) orders only its inside and is kept; an unclosed one, a stray end, an override
    inside one and every other control are shown."""
    fsi, pdi = "\u2068", "\u2069"
    said = f"الدرس: {fsi}مقدمة {fsi}√d_k{pdi}{pdi} · المحطة {fsi}3{pdi}"
    assert plain_text(said) == said.replace(":", r"\:").replace("_", r"\_")
    assert ui.md_text(f"{fsi}a{pdi}") == f"`{fsi}a{pdi}`"
    assert ui.md_text(f"{fsi}a") == "`<U+2068>a`"
    assert ui.md_text(f"a{pdi}{fsi}b") == "`a<U+2069><U+2068>b`"
    assert ui.md_text(f"{fsi}\u202eab{pdi}") == f"`{fsi}<U+202E>ab{pdi}`"
    assert ui.md_text(f"{fsi}a\u2066b{pdi}{pdi}") == f"`{fsi}a<U+2066>b{pdi}<U+2069>`"


def test_pointing_words_send_both_for_the_stylesheet_to_pick():
    """Issue 35: phone pages said "hover". Both words are sent, each in its class; the
    app's stylesheet shows the one that fits the device (tests/e2e/test_devices_e2e.py: a
    phone reads "Tap", a laptop "Hover")."""
    assert ui.pointing("Hover a cell", "Tap a cell") == (
        '<span class="attnviz-hover">Hover a cell</span><span class="attnviz-tap">Tap a cell</span>'
    )


def test_pointing_takes_translated_words_and_escapes_them_for_html():
    """A catalog's words go into HTML as text: a ``<`` or ``&`` in a translation is shown
    as written, and a placeholder puts the spans where the language wants them."""
    assert ui.pointing("a < b & c", "Toca") == (
        '<span class="attnviz-hover">a &lt; b &amp; c</span><span class="attnviz-tap">Toca</span>'
    )
    said = "{point} para ver su peso.".format(point=ui.pointing("Pasa", "Toca"))
    assert said.endswith("</span> para ver su peso.")


@pytest.mark.parametrize(
    ("token", "shown"), [("\n", "`↵`"), (" the", "`␣the`"), ("\t", "`⇥`"), ("", "`∅`")]
)
def test_md_token_never_shows_a_blank(token, shown):
    """A newline token was "Add the top token:  (61%)" (issue 47)."""
    assert ui.md_token(token) == shown
    assert ui.md_text(token) != shown  # md_text alone leaves the blank
