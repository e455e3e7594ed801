"""Pure helpers of attnviz.ui (no Streamlit session needed)."""

import numpy as np
import pytest

from attnviz import presets, ui
from attnviz.ui.text import BIDI_CONTROLS, plain_text


def test_divisors_and_nearest():
    assert ui.divisors(12) == [1, 2, 3, 4, 6, 12]
    assert ui.divisors(7) == [1, 7]
    assert ui.nearest_divisor(6, 4) == 3
    assert ui.nearest_divisor(10, 4) == 5 or ui.nearest_divisor(10, 4) == 2
    assert ui.nearest_divisor(10, 4) == 5  # |5-4| = 1 < |2-4| = 2
    assert ui.nearest_divisor(8, 3) == 2  # tie 2/4: the smaller
    for d in range(1, 40):
        assert d % ui.default_heads(d) == 0


@pytest.mark.parametrize("name", presets.names())
def test_code_lines_reproduce_every_preset(name):
    p = presets.get(name)
    s = ui.Settings(
        source="preset",
        text="",
        preset=name,
        n=p.n_tokens,
        d=p.d_model,
        heads=p.num_heads,
        seed=0,
        init="normal",
        bias=True,
        scale_mode="1/√d_k",
        factor=8.0,
        mask_kind="causal",
        mask_params=(),
        layout="columns",
    )
    x, labels, params, res = ui.compute(s)
    ns: dict = {}
    exec(ui.code_lines(ui.View(s, x, labels, params, res), head=p.num_heads - 1), ns)  # noqa: S102
    np.testing.assert_allclose(ns["A"], res.weights[-1], atol=1e-12)
    np.testing.assert_allclose(ns["Y"], res.output, atol=1e-9)


def test_preset_query_leaves_defaults_out():
    q = ui.preset_query("udl-multihead")  # N=6, D=8, heads=2: the defaults
    assert q == {"source": "preset", "preset": "udl-multihead"}
    q = ui.preset_query("udl-self-attention")
    assert q["N"] == "3" and q["D"] == "4" and q["heads"] == "1" and q["scale"] == "none"


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
