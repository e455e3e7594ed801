"""The Heads section of the two model pages (AppTest, inside the whole app): it renders the
engine's scores, an Open button moves the head view, the probe's link values are checked,
and the scores switch to the page's own text."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import numpy as np
import pytest
from board_view import board_args, figures_of

from attnviz.models import head_patterns, head_probes, minilm, smollm
from tests.models.test_smollm import _z

REPO = Path(__file__).resolve().parents[2]
IN_CI = bool(os.environ.get("CI"))

#: page file, widget-key prefix, loader of its model, the probe through it
PAGES = {
    "decoder": ("pages/decoder.py", "dec", smollm.load, head_probes.smollm_probe),
    "minilm": ("pages/real_model.py", "rm", minilm.load, head_probes.minilm_probe),
}


@pytest.fixture(scope="module", params=list(PAGES))
def page(request):
    """(page file, key prefix, model, probe): ``probe(model, seed, length)`` is the probe's
    run, made once per module and (seed, length): the tests ask for the default probe
    eight times (SmolLM2 on 80 tokens, ~2 CPU-s each), and a run is the same each time."""
    path, prefix, load, probe = PAGES[request.param]
    try:
        model = load()
    except ImportError:  # ModelNotInstalledError
        if IN_CI:
            raise
        pytest.skip(f"the weights of {path} are not installed")
    runs: dict[tuple[int, int], head_probes.ProbeRun] = {}

    def probe_once(m, seed: int, length: int) -> head_probes.ProbeRun:
        assert m is model
        if (seed, length) not in runs:
            runs[seed, length] = probe(m, seed, length)
        return runs[seed, length]

    return path, prefix, model, probe_once


def _run(path: str, query: dict[str, str] | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(path).run()


def _scores_z(fig: dict) -> dict[str, np.ndarray]:
    """Pattern -> (L, H) from the scores figure's heatmaps (one trace per pattern)."""
    return {t["name"]: _z(t) for t in fig["data"]}


def _number(at, key: str):
    return next(w for w in at.number_input if w.key == key).value


def test_heads_section_renders_the_engines_scores(page):
    path, prefix, model, probe = page
    at = _run(path)
    assert not at.exception
    assert not at.error and not at.warning
    assert "Heads" in [h.value for h in at.header]
    figs = figures_of(at)
    assert {f"{prefix}_heads_scores", *(f"{prefix}_heads_top{i}" for i in range(3))} <= set(figs)
    want = probe(model, head_probes.DEFAULT_SEED, head_probes.DEFAULT_LENGTH)
    got = _scores_z(figs[f"{prefix}_heads_scores"])
    assert list(got) == list(head_patterns.PATTERNS)
    for k in head_patterns.PATTERNS:
        np.testing.assert_allclose(got[k], want.scores[k], atol=1e-6, err_msg=k)
    tables = [d.value for d in at.dataframe if "induction" in d.value.columns]
    assert len(tables) == 1
    table = tables[0]  # one row per head, layer by layer
    assert table.shape == (want.scores["previous"].size, 8)
    np.testing.assert_allclose(table["induction"], want.scores["induction"].ravel(), atol=1e-3)
    text = " ".join(m.value for m in at.markdown)
    assert "How an induction head works" in text
    if prefix == "dec":  # the layers where SmolLM2 has them, from this probe
        assert "strongest induction heads 18/6 (0.91)" in text
        assert "previous-token heads 16/0 (0.90)" in text
    else:
        assert "MiniLM-L6 is an encoder" in text and "apply as they are" in text


def test_open_button_moves_the_head_view_to_that_head(page):
    path, prefix, model, probe = page
    at = _run(path)
    top = probe(model, 0, 40).scores
    pattern = "induction" if prefix == "dec" else "previous"
    layer, head, _ = head_patterns.top_heads(top[pattern], 1)[0]
    button = next(b for b in at.button if b.key == f"{prefix}_heads_open0")
    assert button.label == f"Open layer {layer}, head {head}"
    at = button.click().run()
    assert not at.exception
    assert at.slider(key=f"{prefix}_L").value == layer
    assert at.slider(key=f"{prefix}_H").value == head
    assert f"Layer {layer}, head {head} is open" in " ".join(s.value for s in at.success)
    title = figures_of(at)[f"{prefix}_head_fig"]["layout"]["title"]["text"]
    assert title.startswith(f"Layer {layer}, head {head}")
    # the head view's board scrolls itself into view once (the button is far below it)
    token = board_args(at)[f"board_{prefix}_head_fig"].get("reveal")
    assert token
    at = at.run()  # the notice is said once; the head stays open; no second scroll
    assert not any("is open" in s.value for s in at.success)
    assert at.slider(key=f"{prefix}_H").value == head
    assert "reveal" not in board_args(at)[f"board_{prefix}_head_fig"]
    at = next(b for b in at.button if b.key == f"{prefix}_heads_open1").click().run()
    assert board_args(at)[f"board_{prefix}_head_fig"]["reveal"] not in (None, token)


@pytest.mark.parametrize(
    ("query", "warned", "seed", "length"),
    [
        ({"_probe_seed": "-4"}, ["_probe_seed=-4"], 0, 40),
        (
            {"_probe_seed": "1e999", "_probe_len": "500"},
            ["_probe_seed=1e999", "_probe_len=500"],
            0,
            40,
        ),
        ({"_probe_len": "abc"}, ["_probe_len=abc"], 0, 40),
        ({"_probe_len": "12.5"}, ["_probe_len=12.5"], 0, 40),
        ({"_probe_seed": "5", "_probe_len": "12"}, [], 5, 12),
    ],
)
def test_probe_link_values_are_checked(page, query, warned, seed, length):
    path, prefix, model, probe = page
    at = _run(path, {prefix + k: v for k, v in query.items()})
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert len(warnings) == len(warned), warnings
    for w, bad in zip(warnings, warned, strict=True):
        key = prefix + bad.split("=")[0]
        assert f"`{prefix}{bad}`, which is not valid" in w
        assert f"using `{key}=" in w
    assert _number(at, f"{prefix}_probe_seed") == seed
    assert _number(at, f"{prefix}_probe_len") == length
    got = _scores_z(figures_of(at)[f"{prefix}_heads_scores"])
    np.testing.assert_allclose(
        got["previous"], probe(model, seed, length).scores["previous"], atol=1e-6
    )


def test_scores_on_the_pages_own_text(page):
    path, prefix, model, _ = page
    at = _run(path)
    at = at.radio(key=f"{prefix}_heads_source").set_value("text").run()
    assert not at.exception
    run = model.run(smollm.DEFAULT_TEXT if prefix == "dec" else minilm.DEFAULT_TEXT)
    want = head_patterns.scores(run.attentions, run.ids)
    got = _scores_z(figures_of(at)[f"{prefix}_heads_scores"])
    for k in head_patterns.PATTERNS:
        np.testing.assert_allclose(got[k], want[k], atol=1e-6, err_msg=k)
    assert "on your text" in figures_of(at)[f"{prefix}_heads_scores"]["layout"]["title"]["text"]
    if prefix == "dec":  # "The ... the": different tokens, nothing repeats
        assert np.isnan(got["induction"]).all()
        assert any("repeats no token" in c.value for c in at.caption)


def _top_titles(at, prefix: str) -> list[str]:
    figs = figures_of(at)
    return [figs[f"{prefix}_heads_top{i}"]["layout"]["title"]["text"] for i in range(3)]


def test_top_heads_follow_the_chosen_text(page):
    """Issue 25: after "Scores on: your text" the top heads were still the probe's."""
    path, prefix, model, probe = page
    text = "the cat sat on the mat . the cat sat on the mat ."
    at = _run(path, {f"{prefix}_text": text})
    pattern = "induction" if prefix == "dec" else "previous"
    on_probe = probe(model, head_probes.DEFAULT_SEED, head_probes.DEFAULT_LENGTH).scores
    assert not any("on the probe" in t for t in _top_titles(at, prefix))
    at = at.radio(key=f"{prefix}_heads_source").set_value("text").run()
    assert not at.exception
    run = model.run(text)
    own = head_patterns.scores(run.attentions, run.ids)
    top = head_patterns.top_heads(own[pattern], 3)
    figs = figures_of(at)
    for i, (lay, h, v) in enumerate(top):
        fig = figs[f"{prefix}_heads_top{i}"]
        title = fig["layout"]["title"]["text"]
        assert title.startswith(f"Layer {lay}, head {h}: {pattern} {v:.2f}")
        assert f"on the probe {on_probe[pattern][lay, h]:.2f}" in title
        np.testing.assert_allclose(
            np.nan_to_num(_z(fig["data"][0])), run.attentions[lay, h], atol=1e-6
        )
        assert not fig["layout"].get("shapes")  # no dashed lines: this is no probe
        button = next(b for b in at.button if b.key == f"{prefix}_heads_open{i}")
        assert button.label == f"Open layer {lay}, head {h}"
    assert any("Their weights on your text" in c.value for c in at.caption)


def test_a_repeated_phrase_in_one_click_shows_the_induction_head(page):
    """The decoder offers a prompt that repeats a phrase: its strongest induction head is
    the probe's (layer 18, head 6, from 0), clearly high on it, and the model copies it.
    MiniLM, an encoder (it sees the whole text at once), makes no such offer."""
    path, prefix, model, probe = page
    at = _run(path)
    if prefix != "dec":
        assert not at.exception
        assert not [b.key for b in at.button if b.key.endswith("_heads_repeat")]
        return
    at = next(b for b in at.button if b.key == "dec_heads_repeat").click().run()
    assert not at.exception
    assert at.text_input(key="dec_text").value == smollm.REPEAT_TEXT
    assert at.radio(key="dec_heads_source").value == "text"
    assert at.radio(key="dec_heads_pattern").value == "induction"
    run = model.run(smollm.REPEAT_TEXT)
    own = head_patterns.scores(run.attentions, run.ids)["induction"]
    on_probe = probe(model, head_probes.DEFAULT_SEED, head_probes.DEFAULT_LENGTH).scores
    (lay, h, v), *_ = head_patterns.top_heads(own, 3)
    assert (lay, h) == head_patterns.top_heads(on_probe["induction"], 1)[0][:2] == (18, 6)
    assert v >= 0.8  # measured 0.84 (0.91 on the probe)
    default = model.run(smollm.DEFAULT_TEXT)
    assert np.isnan(head_patterns.scores(default.attentions, default.ids)["induction"]).all()
    assert _top_titles(at, "dec")[0].startswith(f"Layer 18, head 6: induction {v:.2f}")
    assert any(
        f"strongest induction head is layer 18, head 6: {v:.2f}" in c.value for c in at.caption
    )
    assert not any(b.key == "dec_heads_repeat" for b in at.button)  # offered until used
    assert smollm.top_tokens(model, run, 1)[0][0] == " elephant"  # the phrase, copied


def test_importing_the_ui_module_needs_no_model():
    mod = importlib.import_module("attnviz.ui.heads")
    assert set(mod.MEANING) == set(head_patterns.PATTERNS)
