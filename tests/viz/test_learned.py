"""attnviz/viz/learned.py: the Learned attention page's figures, read back as plotly JSON."""

from __future__ import annotations

import numpy as np
import pytest
from test_app import z_of

from attnviz import toys
from attnviz.viz import learned as viz


def lines(fig) -> list[dict]:
    return [s for s in fig.to_plotly_json()["layout"].get("shapes", []) if s["type"] == "line"]


@pytest.mark.parametrize(("flat", "heads", "want"), [(0, 2, "head 0 (layer 0)"),
                                                     (3, 2, "head 3 (layer 1)"),
                                                     (5, 3, "head 5 (layer 1)")])  # fmt: skip
def test_head_name_numbers_heads_across_layers(flat, heads, want):
    assert viz.head_name(flat, heads) == want


def test_running_mean_is_the_mean_of_the_last_window_steps():
    rng = np.random.default_rng(0)
    a = rng.random(37)
    got = viz.running_mean(a, 10)
    want = [a[max(0, i - 9) : i + 1].mean() for i in range(37)]
    np.testing.assert_allclose(got, want)


def test_loss_figure_draws_every_step_marks_the_step_and_points_at_the_phase():
    losses = np.concatenate([np.full(50, 3.0), np.linspace(3.0, 0.5, 20), np.full(30, 0.5)])
    fig = viz.loss_figure(losses, 60, phase=58, phase_text="here", total=200)
    raw, mean = fig.data
    np.testing.assert_array_equal(np.asarray(raw.y), losses)
    np.testing.assert_array_equal(np.asarray(raw.x), np.arange(1, 101))
    np.testing.assert_allclose(np.asarray(mean.y), viz.running_mean(losses))
    (line,) = lines(fig)
    assert line["x0"] == line["x1"] == 60
    (arrow,) = [a for a in fig.layout.annotations if a.showarrow]
    assert arrow.x == 58 and arrow.text == "here<br>(step 58)"
    assert arrow.y == pytest.approx(viz.running_mean(losses)[57])
    assert tuple(fig.layout.xaxis.range) == (0, 200)  # a live run: room for the rest
    assert "step 60" in fig.layout.title.text


def test_loss_figure_without_a_phase_points_at_nothing_and_refuses_nan():
    fig = viz.loss_figure(np.ones(5), 3)
    assert not [a for a in fig.layout.annotations if a.showarrow]
    with pytest.raises(ValueError, match="NaN or inf"):
        viz.loss_figure([1.0, np.nan], 1)


def test_heads_figure_shows_every_head_with_the_tokens_as_labels():
    task = toys.TASKS["induction"]
    run = toys.load("induction")
    w = toys.example_attentions(task, run.checkpoints[-1])  # (L, H, T, T)
    flat = w.reshape(-1, *w.shape[2:])
    labels = toys.example(task).labels
    fig = viz.heads_figure(flat, labels, step=1500, heads_per_layer=task.heads)
    spec = fig.to_plotly_json()
    assert len(spec["data"]) == task.layers * task.heads
    causal = np.tril(np.ones(w.shape[-2:], bool))
    for i in range(len(spec["data"])):
        z = z_of(spec, i).astype(np.float64)
        np.testing.assert_allclose(np.where(causal, z, 0), flat[i], atol=1e-6)
        assert np.isnan(z[~causal]).all()  # a later key: masked
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert titles == [viz.head_name(i, task.heads) for i in range(4)]
    for axis in ("xaxis", "xaxis4", "yaxis", "yaxis3"):
        assert spec["layout"][axis]["ticktext"] == list(labels)
        assert spec["layout"][axis]["tickvals"] == list(range(len(labels)))
    assert spec["layout"]["yaxis2"]["showticklabels"] is False  # labels left of each layer
    assert "step 1500" in spec["layout"]["title"]["text"]


def test_heads_figure_puts_every_head_in_one_row_on_request():
    """A slide's layout (issue 47): ``cols`` panels a row, the y words and title on a row's
    first panel only (a layer's first, head 2, had a title between two panels)."""
    w = toys.example_attentions("induction", toys.load("induction").checkpoints[-1])
    flat = w.reshape(-1, *w.shape[2:])  # (4, T, T)
    labels = toys.example("induction").labels
    lay = viz.heads_figure(flat, labels, step=1, heads_per_layer=2, cols=4).to_plotly_json()
    lay = lay["layout"]
    assert lay["meta"]["grid"]["rows"] == 1 and lay["meta"]["grid"]["cols"] == 4
    assert len({a["y"] for a in lay["annotations"]}) == 1  # the titles on one line
    assert lay["yaxis"]["title"]["text"] and lay["yaxis"]["title"]["standoff"] > 0
    for axis in ("yaxis2", "yaxis3", "yaxis4"):
        assert lay[axis]["showticklabels"] is False and not lay[axis]["title"]["text"]
    default = viz.heads_figure(flat, labels, step=1, heads_per_layer=2).layout
    assert default.meta["grid"]["cols"] == 2 and default.yaxis3.title.text  # a layer a row
    with pytest.raises(ValueError, match="cols"):
        viz.heads_figure(flat, labels, step=1, heads_per_layer=2, cols=0)


def test_heads_figure_text_is_20_px_on_a_slide():
    """Ticks, the colour bar's ticks and the values written in the cells at
    HEADS_TEXT_PX: at least 20 px at the presenter view's chart text scale (issue 47)."""
    from attnviz.ui.present import CHART_TEXT_SCALE  # the presenter view's

    task = toys.get_task("align")
    ex = toys.example(task)
    w = toys.example_cross(task, toys.load("align").checkpoints[-1])  # (L, H, T, S)
    fig = viz.heads_figure(
        w.reshape(-1, *w.shape[2:]), ex.target_labels, step=400, heads_per_layer=2,
        key_labels=ex.src_labels, cols=2,
    )  # fmt: skip
    spec = fig.to_plotly_json()
    lay = spec["layout"]
    sizes = [lay[k]["tickfont"]["size"] for k in lay if k[1:5] == "axis"]
    sizes += [lay["coloraxis"]["colorbar"]["tickfont"]["size"]]
    sizes += [t["textfont"]["size"] for t in spec["data"]]  # every head writes its values
    assert len(sizes) == 2 * 2 + 1 + 2 and set(sizes) == {viz.HEADS_TEXT_PX}, sizes
    assert viz.HEADS_TEXT_PX * CHART_TEXT_SCALE >= 20


def test_heads_figure_writes_labels_literally():
    w = np.tile(np.eye(3), (2, 1, 1))
    fig = viz.heads_figure(w, ["<b>", "&", "|"], step=0, heads_per_layer=1)
    assert fig.layout.xaxis.ticktext == ("&lt;b&gt;", "&amp;", "|")


@pytest.mark.parametrize(
    ("shape", "labels", "heads", "match"),
    [((2, 3, 4), 3, 1, "L·H, T, T"), ((3, 3, 3), 3, 2, "multiple"), ((2, 3, 3), 2, 1, "labels")],
)
def test_heads_figure_refuses_bad_shapes(shape, labels, heads, match):
    with pytest.raises(ValueError, match=match):
        viz.heads_figure(np.zeros(shape), ["a"] * labels, step=0, heads_per_layer=heads)


def test_job_figure_draws_one_line_per_head_named_by_its_job():
    jobs = toys.job_scores("induction", toys.load("induction"))
    fig = viz.job_figure(jobs.steps, jobs.scores, jobs.labels, 400)
    assert [t.name for t in fig.data] == [
        "head 0 (layer 0): previous-token score",
        "head 1 (layer 0): previous-token score",
        "head 2 (layer 1): induction score",
        "head 3 (layer 1): induction score",
    ]
    for t, (layer, h) in zip(fig.data, [(0, 0), (0, 1), (1, 0), (1, 1)], strict=True):
        np.testing.assert_allclose(np.asarray(t.y), jobs.scores[:, layer, h])
        np.testing.assert_array_equal(np.asarray(t.x), jobs.steps)
    (line,) = lines(fig)
    assert line["x0"] == 400


def test_job_figure_refuses_scores_that_do_not_match_the_steps():
    with pytest.raises(ValueError, match="C = 3 steps"):
        viz.job_figure([0, 1, 2], np.zeros((2, 1, 2)), ["x"], 0)
