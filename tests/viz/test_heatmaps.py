"""Figure builders: read the data back out of the plotly figures."""

import json

import numpy as np
import plotly.io as pio
import pytest

from attnviz import engine, viz


def z_of(fig, i=0):
    return np.asarray(fig.data[i].z, dtype=float)


def payload(fig) -> int:
    return len(pio.to_json(fig, validate=False))


@pytest.fixture
def res():
    x = np.random.default_rng(0).standard_normal((5, 4))
    p = engine.AttentionParams.random(4, seed=1)
    return engine.multi_head_attention(x, p, num_heads=2, mask=engine.causal_mask(5))


def test_scores_diverging_centred_and_masked_cells_are_gaps(res):
    fig = viz.heatmaps.attention_figure(
        res.scores[0], what="scores", labels=list("abcde"), mask=res.mask, scale=res.scale, d_k=2
    )
    hm = fig.data[0]
    z = z_of(fig)
    assert z.shape == (5, 5)
    assert hm.zmid == 0 and hm.zmin == -hm.zmax
    cs = [tuple(c) for c in hm.colorscale]  # ColorBrewer RdBu: blue .. white .. red
    assert cs[0][1] == "rgb(5,48,97)" and cs[5] == (0.5, "rgb(247,247,247)")
    assert cs[-1] == (1.0, "rgb(103,0,31)")
    assert np.isnan(z[np.triu_indices(5, 1)]).all()  # masked = gap, not a colour
    np.testing.assert_allclose(z[np.tril_indices(5)], res.scores[0][np.tril_indices(5)], rtol=1e-6)
    assert "q<sub>%{y}</sub>·k<sub>%{x}</sub> / √d<sub>k</sub>" in hm.hovertemplate
    assert list(fig.layout.yaxis.ticktext) == list("abcde")
    assert "rows = tokens" in fig.layout.yaxis.title.text  # the orientation is named
    marks = [t for t in fig.data if t.name == "masked"]
    assert len(marks) == 1 and len(marks[0].x) == 10  # one × per masked cell
    assert fig.layout.plot_bgcolor == viz.style.MASK_BG


def test_weights_sequential_0_to_1(res):
    fig = viz.heatmaps.attention_figure(res.weights[1], what="weights", mask=res.mask)
    hm = fig.data[0]
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)
    assert hm.colorscale == "Viridis"
    z = z_of(fig)
    np.testing.assert_allclose(np.nansum(z, axis=1), 1.0, rtol=1e-6)


def test_column_layout_transposes_and_says_so(res):
    rows = viz.heatmaps.attention_figure(res.weights[0], what="weights", layout="rows")
    cols = viz.heatmaps.attention_figure(res.weights[0], what="weights", layout="columns")
    np.testing.assert_array_equal(z_of(cols), z_of(rows).T)
    assert "UDL" in cols.layout.xaxis.title.text
    assert "q<sub>%{x}</sub>" in cols.data[0].hovertemplate  # queries are the columns
    tm = viz.heatmaps.token_matrix_figure(res.output, name="Y", layout="columns")
    assert z_of(tm).shape == (4, 5) and "UDL" in tm.layout.xaxis.title.text


def test_token_matrix_diverging_and_separators(res):
    fig = viz.heatmaps.token_matrix_figure(res.concat, name="concat", feature_groups=2)
    assert fig.data[0].zmid == 0
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(lines) == 1 and lines[0].x0 == 1.5


def test_large_n_drops_tick_labels_markers_and_stays_small():
    n = 256
    a = np.random.default_rng(0).random((n, n))
    mask = engine.causal_mask(n)
    fig = viz.heatmaps.attention_figure(
        a, what="weights", labels=[f"t{i}" for i in range(n)], mask=mask
    )
    assert fig.layout.yaxis.ticktext is None  # indices only above MAX_TICK_LABELS
    assert not [t for t in fig.data if t.name == "masked"]  # no 30k markers
    spec = json.loads(pio.to_json(fig, validate=False))
    assert spec["data"][0]["z"]["dtype"] == "f4"  # float32, base64-encoded
    # base64 float32 is ~5.3 characters per cell (plotly escapes '/'); JSON text is ~19
    assert payload(fig) < 8 * n * n


def test_query_figures_read_back(res):
    w = res.weights[0, 3]
    fig = viz.attention.query_weights_figure(w, query=3, labels=list("abcde"), mask_row=res.mask[3])
    np.testing.assert_allclose(np.asarray(fig.data[0].y, float), w, rtol=1e-6)
    assert "a<sub>3,%{x}</sub>" in fig.data[0].hovertemplate
    s = viz.attention.weighted_sum_figure(res.values[0], w, query=3, top=2)
    bars = [t for t in s.data if t.type == "bar"]
    total = sum(np.asarray(b.y, float) for b in bars)
    out = [t for t in s.data if t.type == "scatter"][0]
    np.testing.assert_allclose(total, res.head_outputs[0, 3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out.y, float), res.head_outputs[0, 3], rtol=1e-5)
    assert len(bars) == 3  # two top keys + "other keys"


def test_small_multiples_one_heatmap_per_head_shared_scale(res):
    fig = viz.attention.small_multiples_figure(res.weights, mask=res.mask)
    hms = [t for t in fig.data if t.type == "heatmap"]
    assert len(hms) == 2 and all(h.coloraxis == "coloraxis" for h in hms)
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert np.isnan(np.asarray(hms[1].z, float)[0, 1])
    big = np.ones((2, 100, 100)) / 100
    with pytest.raises(ValueError, match="summary"):
        viz.attention.small_multiples_figure(big)


def test_entropy_and_argmax(res):
    ent = engine.row_entropy(res.weights)
    fig = viz.attention.entropy_figure(ent, max_entropy=np.log2(5))
    np.testing.assert_allclose(np.asarray(fig.data[0].y, float), ent.mean(axis=1), rtol=1e-6)
    am = viz.attention.argmax_figure(res.weights, labels=list("abcde"))
    np.testing.assert_array_equal(np.asarray(am.data[0].customdata), res.weights.argmax(axis=2))
    assert am.data[0].text[0][0] == "a"  # query 0 under a causal mask can only see key 0


def test_mask_figure_marks_masked_cells():
    fig = viz.heatmaps.mask_figure(engine.padding_mask(4, 1))
    z = z_of(fig)
    assert np.isnan(z[:, 3]).all() and not np.isnan(z[:, :3]).any()


def test_bad_shapes_raise():
    with pytest.raises(ValueError):
        viz.heatmaps.matrix_figure(np.ones(3), title="", x_title="", y_title="", hover="")
    with pytest.raises(ValueError, match="layout"):
        viz.heatmaps.attention_figure(np.ones((2, 2)), what="weights", layout="diagonal")
    with pytest.raises(ValueError):
        viz.charts.softmax_factor_figure([1, 2], [1, 8], np.ones((2, 3)))


def test_scale_label():
    assert viz.style.scale_label(0.5, 4) == " / √d<sub>k</sub>"
    assert viz.style.scale_label(1.0, 4) == ""
    assert viz.style.scale_label(8.0, 4) == " × 8"


def test_plotly_text_escapes_plotly_markup():
    assert viz.style.plotly_text("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"
    assert viz.style.plotly_text("AT&T &lt;") == "AT&amp;T &amp;lt;"
    assert viz.style.plotly_text("%{z}") == "&#37;{z}"
    assert viz.style.plotly_text(3) == "3"
    assert viz.style.plotly_text("plain words") == "plain words"


def test_builders_escape_token_labels_everywhere(res):
    labels = ['<a href="https://x.org">v</a>', "<b>b</b>", "c&d", "%{z}", "e"]
    esc = [viz.style.plotly_text(s) for s in labels]
    att = viz.heatmaps.attention_figure(res.weights[0], what="weights", labels=labels)
    assert list(att.layout.xaxis.ticktext) == esc and list(att.layout.yaxis.ticktext) == esc
    tm = viz.heatmaps.token_matrix_figure(res.output, name="Y", labels=labels, layout="columns")
    assert list(tm.layout.xaxis.ticktext) == esc
    q = viz.attention.query_weights_figure(res.weights[0, 1], query=1, labels=labels)
    assert esc[1] in q.layout.title.text and "<b>" not in q.layout.title.text
    ws = viz.attention.weighted_sum_figure(res.values[0], res.weights[0, 4], query=4, labels=labels)
    names = " ".join(t.name for t in ws.data)
    assert "<a " not in names and "<b>b" not in names and esc[0] in names
    am = viz.attention.argmax_figure(res.weights, labels=labels)
    cells = {c for row in am.data[0].text for c in row if c}
    assert cells and cells <= set(esc)
    sm = viz.attention.small_multiples_figure(res.weights, labels=labels)
    assert list(sm.layout.xaxis.ticktext) == esc
    bars = viz.charts.bars_figure(
        {"s": np.ones(5)}, x_labels=labels, title="", x_title="", y_title=""
    )
    assert list(bars.data[0].x) == esc


def test_unlabelled_axes_have_integer_ticks(res):
    """Feature axes (and token axes above MAX_TICK_LABELS) tick at whole cells."""
    tm = viz.heatmaps.token_matrix_figure(res.head_outputs[0], name="out")  # 5 tokens x 2 features
    assert (tm.layout.xaxis.tickmode, tm.layout.xaxis.tick0, tm.layout.xaxis.dtick) == (
        "linear",
        0,
        1,
    )
    big = viz.heatmaps.attention_figure(np.ones((300, 300)) / 300, what="weights")
    assert big.layout.yaxis.dtick == 50 and float(big.layout.yaxis.dtick).is_integer()
    for n in (1, 4, 10, 11, 33, 64, 128, 512):
        step = viz.style._tick_step(n)
        assert step >= 1 and -(-n // step) <= 10 and str(step)[0] in "125"


def test_log_axes_tick_at_the_data():
    dims = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    fig = viz.charts.variance_figure(dims, np.array(dims, float), np.ones(10))
    assert list(fig.layout.xaxis.tickvals) == dims
    assert list(fig.layout.xaxis.ticktext) == [str(d) for d in dims]
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1  # one per decade
    lin = viz.charts.line_figure([1, 2], {"a": [1, 2]}, title="", x_title="", y_title="")
    assert lin.layout.xaxis.tickvals is None


def test_cross_attention_matrices_label_rows_and_columns_apart():
    """T = 2 target rows, S = 3 source columns: attention and mask figures, both layouts."""
    tgt, src = ["le", "chat"], ["the", "black", "cat"]
    a = np.full((2, 3), 1 / 3)
    f = viz.heatmaps.attention_figure(a, what="weights", labels=tgt, key_labels=src)
    assert list(f.layout.yaxis.ticktext) == tgt and list(f.layout.xaxis.ticktext) == src
    c = viz.heatmaps.attention_figure(
        a, what="weights", labels=tgt, key_labels=src, layout="columns"
    )
    assert list(c.layout.yaxis.ticktext) == src and list(c.layout.xaxis.ticktext) == tgt
    m = viz.heatmaps.mask_figure(np.ones((2, 3), bool), labels=tgt, key_labels=src)
    assert list(m.layout.yaxis.ticktext) == tgt and list(m.layout.xaxis.ticktext) == src


def test_a_whitespace_tokens_hover_writes_it_as_code_does():
    """The tick shows "↵"; the hover keeps the raw token, "\\n" (issue 47)."""
    fig = viz.heatmaps.attention_figure(np.full((3, 3), 1 / 3), what="weights",
                                        labels=["a", "\n", " b"])  # fmt: skip
    hm = fig.data[0]
    assert list(fig.layout.xaxis.ticktext) == ["a", "↵", "␣b"]
    assert [list(c) for c in hm.customdata[1]] == [['"\\n"', '"a"'], ['"\\n"', '"\\n"'],
                                                   ['"\\n"', '" b"']]  # fmt: skip
    assert "%{customdata[0]}" in hm.hovertemplate and "%{customdata[1]}" in hm.hovertemplate
    assert hm.hovertemplate.count("<extra></extra>") == 1
    x = viz.heatmaps.token_matrix_figure(np.ones((3, 2)), name="X", labels=["a", "\t", "c"])
    assert x.data[0].customdata[1][0][0] == '"\\t"' and "%{customdata[1]}" not in (
        x.data[0].hovertemplate
    )
    plain = viz.heatmaps.attention_figure(np.full((2, 2), 0.5), what="weights", labels=["a", "b"])
    assert plain.data[0].customdata is None  # words without whitespace: the hover as before
