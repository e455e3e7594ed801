"""The Heads section's figures (attnviz.viz.heads): their data and layout."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import viz
from attnviz.models.head_patterns import PATTERNS


def _scores(layers: int, heads: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(layers * heads)
    return {k: rng.random((layers, heads)) for k in PATTERNS}


@pytest.mark.parametrize(("layers", "heads", "grid"), [(30, 9, (2, 3)), (6, 12, (2, 3))])
def test_scores_figure_one_heatmap_per_pattern_in_order(layers, heads, grid):
    s = _scores(layers, heads)
    s["duplicate"][0, 0] = np.nan
    fig = viz.heads.scores_figure(s, selected=(2, 1))
    assert [t.name for t in fig.data] == list(PATTERNS)
    assert [a.text for a in fig.layout.annotations] == list(PATTERNS)
    for t, k in zip(fig.data, PATTERNS, strict=True):
        np.testing.assert_allclose(np.asarray(t.z, dtype=np.float64), s[k], rtol=1e-6)
        assert list(t.y) == list(range(layers))  # layer 0 first (at the top), from 0
        assert list(t.x) == list(range(heads))
        assert t.coloraxis == "coloraxis"
    assert np.isnan(np.asarray(fig.data[list(PATTERNS).index("duplicate")].z)[0, 0])
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert fig.layout.yaxis.autorange == "reversed"
    frames = [sh for sh in fig.layout.shapes if sh.type == "rect"]
    assert len(frames) == 6
    assert {(sh.x0, sh.x1, sh.y0, sh.y1) for sh in frames} == {(0.5, 1.5, 1.5, 2.5)}
    rows, cols = grid
    titled = [ax for name, ax in fig.layout.to_plotly_json().items() if name.startswith("xaxis")]
    assert sum(1 for ax in titled if ax.get("title", {}).get("text") == "head") == cols
    assert len(titled) == rows * cols


@pytest.mark.parametrize(("layers", "heads"), [(2, 4), (1, 1), (30, 9), (6, 12)])
def test_scores_figure_ticks_whole_layers_and_heads(layers, heads):
    """A 2-layer model's Heads section ticked 0, 0.5, 1, 1.5: plotly's automatic ticks on a
    short axis. Every tick is a whole layer or head (every one, or every 3rd / 2nd)."""
    axes = viz.heads.scores_figure(_scores(layers, heads)).layout.to_plotly_json()
    for name, ax in axes.items():
        if name.startswith(("xaxis", "yaxis")):
            assert ax.get("tick0", 0) == 0 and ax["dtick"] in (1, 2, 3), (name, ax)
            assert ax["dtick"] == 1 or (layers > 10 if name[0] == "y" else heads > 8), (name, ax)


def test_scores_figure_refuses_missing_patterns_and_mixed_shapes():
    s = _scores(3, 4)
    del s["induction"]
    with pytest.raises(ValueError, match=r"missing \['induction'\]"):
        viz.heads.scores_figure(s)
    s = _scores(3, 4)
    s["self"] = np.zeros((3, 5))
    with pytest.raises(ValueError, match=r"self \(3, 5\)"):
        viz.heads.scores_figure(s)


def test_probe_weights_figure_marks_the_second_copy():
    n, start, length = 22, 1, 10
    w = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    fig = viz.heads.probe_weights_figure(
        w, [f"t{i}" for i in range(n)], length=length, start=start, title="Layer 1, head 1"
    )
    lines = [sh for sh in fig.layout.shapes if sh.type == "line"]
    assert {sh.x0 for sh in lines} | {sh.y0 for sh in lines} >= {10.5}
    assert fig.layout.title.text.startswith("Layer 1, head 1")
    assert "grey = masked" in fig.layout.title.text  # causal: the future is masked
    assert fig.layout.yaxis.title.text == "query i (row)"
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    np.testing.assert_allclose(z[np.tril_indices(n)], w[np.tril_indices(n)], rtol=1e-6)


def test_any_text_has_no_copy_lines_and_a_note_under_the_title():
    """The top heads on the page's own text: no probe, so no dashed lines; the head's probe
    score on the title's second line (three charts abreast leave no room in the title)."""
    n = 7
    w = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    tokens = [f"t{i}" for i in range(n)]
    fig = viz.heads.probe_weights_figure(
        w, tokens, length=None, title="L", note="on the probe 0.91"
    )
    assert not [sh for sh in fig.layout.shapes if sh.type == "line"]
    assert (
        fig.layout.title.text == f"L{viz.style.NOTE_LINE}on the probe 0.91 · grey = masked</span>"
    )
    fig = viz.heads.probe_weights_figure(w, tokens, length=None, causal=False, title="L", note="x")
    assert fig.layout.title.text == f"L{viz.style.NOTE_LINE}x</span>"  # nothing masked


@pytest.mark.parametrize(
    ("shape", "start", "length", "message"),
    [
        ((5, 6), 0, 2, r"\(N, N\) for the 5 tokens, got shape \(5, 6\)"),
        ((5, 5), 0, 3, r"does not fit in 5 tokens"),
        ((5, 5), -1, 2, r"start -1"),
    ],
)
def test_probe_weights_figure_refuses_what_does_not_fit(shape, start, length, message):
    with pytest.raises(ValueError, match=message):
        viz.heads.probe_weights_figure(
            np.zeros(shape), ["a"] * 5, length=length, start=start, title="x"
        )
