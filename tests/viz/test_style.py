"""Chart text readable on a projector: every builder draws ticks >= 13 px, axis and colour-bar
titles >= 14 px, all in near-black (viz.style.TEXT_COLOR), set explicitly on each axis and
colour bar so that Streamlit's chart theme (small light-grey ticks) cannot override them."""

import numpy as np
import pytest

from attnviz import engine, i18n, viz


def _res():
    x = np.random.default_rng(0).standard_normal((6, 8))
    p = engine.AttentionParams.random(8, seed=1)
    return engine.multi_head_attention(x, p, num_heads=2, mask=engine.causal_mask(6))


def _builders():
    r = _res()
    labels = list("abcdef")
    return {
        "attention": viz.heatmaps.attention_figure(r.weights[0], what="weights", labels=labels),
        "scores": viz.heatmaps.attention_figure(r.scores[0], what="scores", mask=r.mask),
        "token": viz.heatmaps.token_matrix_figure(r.queries[0], name="Q", labels=labels),
        "mask": viz.heatmaps.mask_figure(r.mask),
        "query_bars": viz.attention.query_weights_figure(r.weights[0, 2], query=2, labels=labels),
        "weighted_sum": viz.attention.weighted_sum_figure(r.values[0], r.weights[0, 2], query=2),
        "small_multiples": viz.attention.small_multiples_figure(r.weights, labels=labels),
        "entropy": viz.attention.entropy_figure(np.ones((2, 6)), max_entropy=2.0),
        "argmax": viz.attention.argmax_figure(r.weights, labels=labels),
        "bars": viz.charts.bars_figure(
            {"a": [1, 2]}, x_labels=["x", "y"], title="t", x_title="x", y_title="y"
        ),
        "line": viz.charts.line_figure(
            [1, 10], {"a": [1, 2]}, title="t", x_title="x", y_title="y", log_x=True
        ),
        "grid": viz.models.heads_grid_figure(np.full((2, 3, 5, 5), 0.2)),
        "summary": viz.models.summary_figure(np.ones((2, 3)), title="t"),
    }


@pytest.mark.parametrize("name", list(_builders()))
def test_every_axis_and_colour_bar_has_large_dark_text(name):
    fig = _builders()[name]
    axes = [k for k in fig.layout.to_plotly_json() if k.startswith(("xaxis", "yaxis"))]
    assert axes, name
    for k in axes:
        ax = fig.layout[k]
        assert ax.tickfont.size >= 13 and ax.tickfont.color == viz.style.TEXT_COLOR, (name, k)
        assert ax.title.font.size >= 14 and ax.title.font.color == viz.style.TEXT_COLOR, (name, k)
    bars = [t.colorbar for t in fig.data if "colorbar" in t and t.showscale is not False]
    if fig.layout.coloraxis.colorbar.tickfont.size is not None:
        bars.append(fig.layout.coloraxis.colorbar)
    for cb in bars:
        assert cb.tickfont.size >= 13 and cb.tickfont.color == viz.style.TEXT_COLOR, name
        assert cb.title.font.size >= 14, name
    assert fig.layout.font.color == viz.style.TEXT_COLOR


def test_small_matrix_heatmaps_write_their_values_large_ones_do_not():
    r = _res()  # N = 6
    small = viz.heatmaps.attention_figure(r.weights[0], what="weights", mask=r.mask)
    hm = small.data[0]
    assert hm.texttemplate == "%{text}" and hm.textfont.color == "auto"
    w = np.where(r.mask, r.weights[0], np.nan)
    for i in range(6):
        for j in range(6):
            t = hm.text[i][j]
            assert (t == "") if np.isnan(w[i, j]) else float(t) == round(float(w[i, j]), 2)
    assert hm.text[0][0] in ("1.00", "1")  # query 0 sees only key 0 (causal)
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)  # fixed 0..1 scale kept
    scores = viz.heatmaps.attention_figure(r.scores[0], what="scores")
    assert scores.data[0].texttemplate == "%{text}"  # the scores too (issue 35)
    assert float(scores.data[0].text[1][2]) == round(float(r.scores[0][1, 2]), 2)
    x = viz.heatmaps.token_matrix_figure(r.head_outputs[0], name="out")
    assert x.data[0].texttemplate == "%{text}"
    assert viz.style._short_number(0.19, ".2f") == ".19"
    assert viz.style._short_number(-0.5, ".2f") == "-.50"
    n = viz.style.MAX_CELL_TEXT_N + 1
    big = viz.heatmaps.attention_figure(np.full((n, n), 1 / n), what="weights")
    assert big.data[0].texttemplate is None
    wide = viz.heatmaps.token_matrix_figure(np.zeros((4, n)), name="X")
    assert wide.data[0].texttemplate is None


def test_heads_grid_colour_bar_sits_under_the_grid_not_at_the_paper_edge():
    fig = viz.models.heads_grid_figure(np.full((2, 3, 5, 5), 0.2))
    cb = fig.data[0].colorbar
    assert cb.orientation == "h" and cb.x == 0.5 and cb.xanchor == "center"
    assert fig.layout.xaxis.constrain == "domain" and fig.layout.yaxis.constrain == "domain"
    assert fig.layout.yaxis.scaleanchor == "x"  # square cells kept


# ---------------------------------------------------------------- whitespace tokens (issue 47)

#: a prompt's tokens with a newline, a tab, a leading space and a lone space
WS = ["Hi", "\n", "\t", " x", " "]
_W = np.full((2, 5, 5), 0.2)  # (heads, queries, keys)
_V = np.arange(15, dtype=float).reshape(5, 3)

TOKEN_BUILDERS = {
    "attention": lambda: viz.heatmaps.attention_figure(_W[0], what="weights", labels=WS),
    "token_matrix": lambda: viz.heatmaps.token_matrix_figure(_V, name="X", labels=WS),
    "query_weights": lambda: viz.attention.query_weights_figure(_W[0, 1], query=1, labels=WS),
    "weighted_sum": lambda: viz.attention.weighted_sum_figure(_V, _W[0, 1], query=1, labels=WS),
    "small_multiples": lambda: viz.attention.small_multiples_figure(_W, labels=WS),
    "argmax": lambda: viz.attention.argmax_figure(np.eye(5)[None].repeat(2, 0), labels=WS),
    "cross": lambda: viz.cross.cross_attention_figure(
        _W[0], what="weights", target_labels=WS, source_labels=WS
    ),
    "compare": lambda: viz.compare.difference_figure(_W[0], _W[0] * 0.5, what="weights", labels=WS),
    "entropy_change": lambda: viz.compare.entropy_change_figure(_W[0], _W[0], labels=WS),
    "learned_heads": lambda: viz.learned.heads_figure(_W, WS, step=0, heads_per_layer=2),
    "probe": lambda: viz.heads.probe_weights_figure(_W[0], WS, length=2, title="probe"),
    "newest_rows": lambda: viz.models.newest_rows_figure(_W[:, -1], WS, layer=0),
    "next_token": lambda: viz.models.next_token_figure([(t, 0.2) for t in WS]),
}


def _shown_texts(fig) -> list[str]:
    """Every tick label, bar or trace name, category and cell text of a figure."""
    out: list[str] = []
    lay = fig.to_plotly_json()["layout"]
    for k, ax in lay.items():
        if k.startswith(("xaxis", "yaxis")) and ax.get("ticktext") is not None:
            out += [str(t) for t in ax["ticktext"]]
    for t in fig.to_plotly_json()["data"]:
        out += [str(t.get("name") or "")]
        for key in ("x", "y"):
            v = t.get(key)
            if isinstance(v, (list, tuple)) and v and isinstance(v[0], str):
                out += list(v)
        text = t.get("text")
        if isinstance(text, (list, tuple)):
            out += [str(s) for row in text for s in (row if isinstance(row, list) else [row])]
    return out


@pytest.mark.parametrize("builder", TOKEN_BUILDERS, ids=list(TOKEN_BUILDERS))
def test_every_figure_that_names_tokens_shows_their_whitespace(builder):
    texts = _shown_texts(TOKEN_BUILDERS[builder]())
    joined = " | ".join(texts)
    assert "↵" in joined and "␣x" in joined, joined  # newline and leading space visible
    if builder not in ("weighted_sum", "argmax"):  # those name only the heaviest keys
        assert "⇥" in joined, joined
    for t in texts:  # no label is a blank or holds a raw newline or tab
        assert "\n" not in t and "\t" not in t, repr(t)


def test_token_ticks_keep_one_tick_per_token_where_tokens_look_alike():
    fig = viz.heatmaps.attention_figure(np.full((4, 4), 0.25), what="weights",
                                        labels=["\n", "\n", " ", "↵"])  # fmt: skip
    ax = fig.layout.xaxis
    assert list(ax.tickvals) == [0, 1, 2, 3]  # by position: equal texts stay apart
    assert list(ax.ticktext) == ["↵", "↵", "␣", "↵"]


def test_a_value_that_rounds_to_zero_has_no_minus_sign():
    """Step by step's step 7 wrote "-.00" for -0.001 (issue 47): now ".00", as wide as the
    other values (the board keeps the values while the widest fits its cells)."""
    f = viz.style._short_number
    assert [f(v, ".2f") for v in (-0.001, 0.001, -0.0, 0.0, -0.004999)] == [".00"] * 5
    assert (f(-0.006, ".2f"), f(0.19, ".2f"), f(-1.0, ".2f")) == ("-.01", ".19", "-1.00")
    assert f(-0.3, ".0f") == "0" and f(-0.00001, ".4f") == ".0000"
    fig = viz.heatmaps.token_matrix_figure(np.array([[-0.001, 0.5], [-0.3, 0.0]]), name="out")
    cells = [s for row in fig.data[0].text for s in row]
    assert cells == [".00", ".50", "-.30", ".00"]
    with i18n.use("es"):
        assert f(-0.001, ".2f") == ",00" and f(0.19, ".2f") == ",19"


@pytest.mark.parametrize(("lang", "x", "anchor"), [("en", 0.0, "left"), ("ar", 1.0, "right")])
def test_every_figure_title_starts_where_the_language_reads_from(lang, x, anchor):
    """Arabic prose starts at the right of the page, and so does each chart's title (the
    axes keep their order); every builder of the catalogue, so that none is left out."""
    from tests.figure_catalogue import catalogue

    with i18n.use(lang):
        figures = catalogue()
    titled = {k: f.layout.title for k, f in figures.items() if f.layout.title.text}
    assert len(titled) >= len(figures) - 2
    placed = {k: (t.x, t.xanchor) for k, t in titled.items()}
    assert placed == dict.fromkeys(titled, (x, anchor))


def test_in_arabic_a_title_keeps_the_shapes_the_code_wrote_into_it_left_to_right():
    """A shape the code appends to a translated title ("(6×4)") is isolated as a catalog's
    formulas are: unisolated, the right-to-left line showed it as "(4×6)"."""
    text = "out = A V (الرأس 0) (6×4)"
    with i18n.use("ar"):
        shown = viz.style.title_box(text)["text"]
    assert i18n.FSI + "(6×4)" + i18n.PDI in shown
    assert shown.replace(i18n.FSI, "").replace(i18n.PDI, "") == text
    with i18n.use("es"):
        assert viz.style.title_box(text)["text"] == text
