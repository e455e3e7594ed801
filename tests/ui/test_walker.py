"""The sidebar (attnviz.ui.walker) through AppTest: it walks the controls' table, checks the
link's values (a nonsense or contradicting value is replaced and a warning names it), settles
the derived controls (heads a divisor of D, N from the input), and on pages where the
random-weights controls do not apply hides them but keeps their values.

The per-page flags (which controls apply) are driven by the pages table in
tests/ui/test_pages.py; the table's own agreement with the walker in tests/ui/test_controls.py."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, assert_clean, run_app, view_of

from attnviz import ui

PAGE = "pages/exercises.py"


def test_nonsense_url_is_corrected_with_a_notice():
    at = run_app({"N": "-3", "heads": "7", "mask": "xyz", "seed": "abc", "layout": "diagonal"})
    assert_clean(at)
    text = " ".join(w.value for w in at.warning)
    for key in ("N=-3", "heads=7", "mask=xyz", "seed=abc", "layout=diagonal"):
        assert key in text
    s = view_of(at).settings
    assert 1 <= s.n <= 512 and s.d % s.heads == 0 and s.mask_kind in ui.MASKS
    assert "N" not in at.query_params and "mask" not in at.query_params


def test_overflowing_integers_in_the_url_do_not_crash():
    # Streamlit itself raises OverflowError on int(float("1e999")) for number inputs
    at = run_app({"seed": "1e999", "mask": "padding", "pad": "-inf"})
    assert_clean(at)
    text = " ".join(w.value for w in at.warning)
    assert "seed=1e999" in text and "pad=-inf" in text
    assert view_of(at).settings.seed == 0 and "seed" not in at.query_params
    assert_clean(run_app({"perm_seed": "inf"}, "pages/permutation.py"))


def test_heads_not_dividing_d_in_the_url():
    at = run_app({"D": "12", "heads": "5"})
    assert_clean(at)
    assert any("heads=5" in w.value and "divisor" in w.value for w in at.warning)
    assert view_of(at).settings.heads in ui.divisors(12)


def test_changing_d_never_leaves_an_invalid_pair():
    at = run_app({"D": "8", "heads": "4"})
    at.slider(key="D").set_value(6).run()
    assert_clean(at)
    s = view_of(at).settings
    assert s.d == 6 and s.heads == 3  # the divisor of 6 nearest to 4
    assert at.selectbox(key="heads").options == ["1", "2", "3", "6"]
    at.slider(key="D").set_value(7).run()
    assert view_of(at).settings.heads in (1, 7)


# Links whose N/D/heads contradict the input (text, preset, upload): the input wins, a
# notice says so, and the controls show the derived value (no widget-state exception).
LINK_CASES = {
    "text-N": ({"N": "10", "source": "text", "text": "the cat sat"}, (3, 8, 2), "N=10"),
    "preset-N": ({"N": "30", "source": "preset"}, (3, 4, 1), "N=30"),
    "preset-heads": (
        {"source": "preset", "preset": "udl-multihead", "heads": "3"},
        (6, 8, 2),
        "heads=3",
    ),
    "empty-text-N": ({"source": "text", "text": "", "N": "4"}, (10, 8, 2), "N=4"),
    "bad-preset": ({"preset": "nonsense", "source": "preset"}, (3, 4, 1), "preset=nonsense"),
}


@pytest.mark.parametrize("case", list(LINK_CASES))
def test_links_contradicting_the_input_are_corrected_with_a_notice(case):
    query, (n, d, heads), shown = LINK_CASES[case]
    at = run_app(query)
    assert_clean(at)
    s = view_of(at).settings
    assert (s.n, s.d, s.heads) == (n, d, heads)
    assert (at.slider(key="N").value, at.slider(key="D").value) == (n, d)
    assert at.selectbox(key="heads").value == heads
    assert at.slider(key="N").disabled
    assert any(shown in w.value for w in at.warning), [w.value for w in at.warning]
    assert view_of(at).result.weights.shape == (heads, n, n)
    for k, v in query.items():  # the contradicted value is no longer in the link
        if k in ("N", "heads") or v == "nonsense":
            assert at.query_params.get(k) in (None, str({"N": n, "heads": heads}.get(k))), k
    at.run()  # a later rerun keeps the corrected view
    assert_clean(at)
    assert (view_of(at).settings.n, view_of(at).settings.heads) == (n, heads)


def test_upload_link_without_a_file_keeps_n_and_says_x_is_random():
    at = run_app({"source": "upload", "N": "7"})
    assert_clean(at)
    s = view_of(at).settings
    assert (s.source, s.n) == ("random", 7)
    assert any("No CSV uploaded yet" in i.value for i in at.info)
    csv = "".join(f"{i},{i + 1},{i * 2}\n" for i in range(4)).encode()
    at.file_uploader(key="upload").set_value(("x.csv", csv, "text/csv")).run()
    assert_clean(at)
    s = view_of(at).settings
    assert (s.source, s.n, s.d) == ("upload", 4, 3)
    assert at.slider(key="N").value == 4 and at.slider(key="D").value == 3


@pytest.mark.parametrize("page", ["pages/multi_head.py", "pages/masking.py"])
def test_contradicting_link_on_another_page(page):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"source": "preset", "N": "30"})
    at.switch_page(page).run()
    assert_clean(at)
    assert view_of(at).settings.n == 3 and at.slider(key="N").value == 3
    assert any("N=30" in w.value for w in at.warning), [w.value for w in at.warning]


def _controls_hidden(at: AppTest) -> bool:
    return any(
        f".st-key-{ui.walker.CONTROLS_BOX}" in h.proto.body and "display: none" in h.proto.body
        for h in at.get("html")
    )


def test_model_pages_hide_the_random_weights_controls_but_keep_their_values():
    at = run_app({"N": "9", "mask": "causal"})
    assert not _controls_hidden(at)
    assert not any(ui.walker.NOT_APPLYING in i.value for i in at.sidebar.info)
    at.switch_page("pages/real_model.py").run()
    assert not at.exception
    assert _controls_hidden(at)
    assert any(ui.walker.NOT_APPLYING in i.value for i in at.sidebar.info)
    assert at.slider(key="N").value == 9  # drawn (hidden), so the value is kept
    at.switch_page("pages/playground.py").run()
    assert not _controls_hidden(at)
    assert view_of(at).settings.n == 9 and view_of(at).settings.mask_kind == "causal"


def test_only_the_seed_applies_on_the_exercises_page():
    at = run_app({"N": "9"}, PAGE)
    css = [h.proto.body for h in at.get("html") if ui.walker.CONTROLS_BOX in h.proto.body]
    assert css and ":not(.st-key-seed)" in css[0]
    assert at.slider(key="N").value == 9  # drawn (hidden), so kept for the other pages
    at.switch_page("pages/playground.py").run()
    assert not any(":not(.st-key-seed)" in h.proto.body for h in at.get("html"))


def test_a_radio_says_its_options_in_the_shown_language_and_keeps_them_in_the_link():
    """Outside English, each option of a radio with words (LABELS) gets a caption in the
    shown language; the options stay the link's values, so ?source=text is one view in every
    language. English has no captions (nothing doubled)."""
    english = run_app({"source": "text"})
    assert_clean(english)
    source = english.radio(key="source")
    assert list(source.proto.captions) == [] and source.value == "text"
    spanish = run_app({"source": "text", "lang": "es"})
    assert_clean(spanish)
    source = spanish.radio(key="source")
    assert source.value == "text" and list(source.options) == list(
        english.radio(key="source").options
    )
    captions = list(source.proto.captions)
    assert len(captions) == len(source.options) and "texto escrito" in captions[1].lower()
    assert view_of(spanish).settings.source == "text"
