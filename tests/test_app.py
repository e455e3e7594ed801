"""The Streamlit app through ``streamlit.testing.v1.AppTest``: every page, every option,
URL binding, bad links and bad uploads. Figures are read from the plotly JSON in the
element protos."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from board_view import BOARD, board_args, board_data, board_entries, figures_of, prefetched
from page_words import page_offences
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from attnviz import ui, viz
from attnviz.ui import pages
from attnviz.ui.board import DOM, MODULES, PLOTLY

APP = str(Path(__file__).resolve().parents[1] / "app.py")
#: The pages drawn from the sidebar's view (every control applies, or the sizes, weights
#: and scaling: Cross-attention; no trained model), from the pages table;
#: tests/ui/test_pages.py opens every page of the table.
PAGES = [p.file for p in pages.PAGES if p.controls in ("all", "weights") and not p.runs_model]
CONFIGS = {
    "defaults": {},
    "N=1": {"N": "1"},
    "N=2": {"N": "2"},
    "N=33": {"N": "33"},
    "D=heads": {"D": "4", "heads": "4"},
    "causal": {"mask": "causal"},
    "padding-all": {"mask": "padding", "pad": "6"},
    "scale-none": {"scale": "none"},
    "scale-custom": {"scale": "custom", "factor": "-2.5"},
    "columns+normal": {"layout": "columns", "init": "normal", "bias": "false"},
    "text": {"source": "text", "text": "the cat and the hat"},
    "preset": {"source": "preset", "preset": "udl-multihead"},
}


@pytest.fixture(autouse=True)
def server_like_navigation(request, monkeypatch):
    """AppTest builds a new PagesManager per run, so Streamlit takes this app (a pages/
    folder next to app.py) for a legacy multipage app on every run; a server does that
    only until st.navigation first runs. Make AppTest behave like the server, except in
    the test_legacy_* tests, which check attnviz.ui.page_guard's recovery from it."""
    if request.node.name.startswith("test_legacy"):
        return
    orig = PagesManager.__init__

    def init(self, *args, **kwargs):
        PagesManager.uses_pages_directory = False
        orig(self, *args, **kwargs)

    monkeypatch.setattr(PagesManager, "__init__", init)


def run_app(query: dict | None = None, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query or {})
    at.run()
    if page and page != PAGES[0]:
        at.switch_page(page).run()
    return at


def open_exports(at: AppTest) -> AppTest:
    """Open the page's Export, LaTeX and worked example boxes (their content is drawn only
    while open: the expander's id ends with its key) and rerun."""
    keys = [
        box.proto.id.split("-")[-1]
        for box in at.expander
        if box.proto.id.split("-")[-1].startswith(("export_box_", "latex_box_", "worked_box_"))
    ]
    for key in keys:
        at.session_state[key] = True
    if keys:
        at.run()
    return at


def code_box_keys(at: AppTest) -> list[str]:
    """The keys of the page's code boxes: ``code_box`` (:func:`attnviz.ui.code_box`) or a
    page's own (``code_box_compare``)."""
    keys = [box.proto.id.split("-")[-1] for box in at.expander]
    return [k for k in keys if k.startswith(ui.code.CODE_BOX_KEY)]


def open_code_box(at: AppTest) -> AppTest:
    """Open the page's code box (its code is drawn only while open) and rerun."""
    closed = len(at.get("code"))
    keys = code_box_keys(at) or [ui.code.CODE_BOX_KEY]
    for key in keys:
        at.session_state[key] = True
    at.run()
    assert len(at.get("code")) == closed + len(keys), "the code box drew its code while closed"
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def z_of(spec: dict, trace: int = 0) -> np.ndarray:
    z = spec["data"][trace]["z"]
    if isinstance(z, dict):  # plotly's base64 typed array
        shape = tuple(int(s) for s in z["shape"].split(","))
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)
    return np.array(z, dtype=float)


def view_of(at: AppTest) -> ui.View:
    return at.session_state["_attnviz"]["view"]


# The notebooks page does not depend on the sidebar's sizes, mask or scale: it runs at the
# defaults, N=1 and with a preset only.
PAGE_CONFIGS = [
    (page, config)
    for config in CONFIGS
    for page in PAGES
    if page != "pages/notebooks.py" or config in ("defaults", "N=1", "preset")
]


@pytest.mark.parametrize(("page", "config"), PAGE_CONFIGS)
def test_every_page_runs(page, config):
    """Every page under every configuration: a title, its shapes, the code box and NPZ
    export its entry in the pages table promises (and none it does not), and words a
    student reads, not test output (tests/page_words.py)."""
    entry = pages.page(Path(page).stem)
    at = run_app(CONFIGS[config], page)
    assert_clean(at)
    assert at.title, "every page has a title"
    assert any("Shapes:" in c.value for c in at.caption), "every page lists the shapes"
    assert bool(code_box_keys(at)) == entry.code_box, f"code box: the entry says {entry.code_box}"
    if entry.code_box:
        open_code_box(at)
    open_exports(at)
    assert_clean(at)
    npz = any(b.key.endswith("_npz") for b in at.get("download_button"))
    assert npz == entry.export, f"NPZ export: the entry says {entry.export}"
    assert not page_offences(at), page_offences(at)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_at_the_largest_n(page):
    at = run_app({"N": "512", "D": "16", "heads": "4", "mask": "causal"}, page)
    assert_clean(at)
    assert view_of(at).result.weights.shape == (4, 512, 512)


def test_multi_head_summarises_large_n():
    at = run_app({"N": "100"}, "pages/multi_head.py")
    assert_clean(at)
    assert "mh_small" not in figures_of(at)
    assert any("summarised" in i.value for i in at.info)
    small = run_app({"N": "10"}, "pages/multi_head.py")
    assert "mh_small" in figures_of(small)


def _arr(v) -> np.ndarray:
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), v["dtype"])
    return np.asarray(v, dtype=float)


@pytest.mark.parametrize("page", [PAGES[0], "pages/step_by_step.py", "pages/decoder.py"])
def test_every_run_starts_with_the_hidden_board_that_preloads_plotly_js(page):
    """The first component of a run is the hidden board that only starts loading plotly.js
    (no figures), with the same plotly.js the charts use, in a box the page hides, and the
    shown language (English: no messages, the board's English is its own); its data is the
    same in every run (nothing new to send after the first)."""
    at = run_app({"N": "5"}, page)
    assert_clean(at)
    comps = [el for el in at.get("bidi_component") if el.proto.component_name == BOARD]
    first = board_data(comps[0])
    locale = {"lang": "en", "dir": "ltr", "separators": ".,", "plural": ["one", "other"]}
    want = {"preload": {**PLOTLY, "modules": list(MODULES)}, "dom": DOM}
    assert first == {**want, "locale": {**locale, "messages": {}}}
    assert PLOTLY["src"].startswith("vendor/plotly-")
    assert all("preload" not in board_data(c) for c in comps[1:])
    at.run()
    again = [el for el in at.get("bidi_component") if el.proto.component_name == BOARD]
    assert board_data(again[0]) == first


def test_playground_prefetches_the_other_heads_while_the_user_flips_through_them():
    """After a head change, the playground sends the other heads' charts (a hidden board,
    after the visible ones). Head h's entry there is what the page draws at head h, with
    the same revision: the rerun after a switch in the browser is skipped. Nothing is sent
    on the first load or after an N move (the core gesture pays nothing), nor when the
    heads are too many for the size limit."""
    at = run_app({"N": "5", "D": "8", "heads": "4"})
    assert_clean(at)
    assert prefetched(at) == {}
    at.selectbox(key="head").set_value(1).run()
    pre = prefetched(at)
    assert set(pre) == {"pg_top", "pg_inputs", "pg_query"}
    args = board_args(at)
    for name, entry in pre.items():
        assert args[name]["watch"] == "head"
        assert entry["current"] == 1 and entry["current_rev"] == args[name]["rev"]
        assert set(entry["values"]) == {"0", "2", "3"}
    at.selectbox(key="head").set_value(3).run()
    assert_clean(at)
    now = board_args(at)
    for name in pre:
        alt = pre[name]["values"]["3"]
        assert alt["rev"] == now[name]["rev"], name
        assert alt["figures"] == now[name]["figures"], name
    out3 = next(f for f in pre["pg_top"]["values"]["3"]["figures"] if f["key"] == "pg_out")
    assert "head 3" in out3["figure"]["layout"]["title"]["text"]
    np.testing.assert_allclose(
        z_of(out3["figure"]), view_of(at).result.head_outputs[3], rtol=1e-6, atol=1e-7
    )
    assert set(prefetched(at)["pg_top"]["values"]) == {"0", "1", "2"}
    at.slider(key="N").set_value(6).run()
    assert_clean(at)
    assert prefetched(at) == {}
    big = run_app({"N": "40", "D": "8", "heads": "8"})
    big.selectbox(key="head").set_value(2).run()
    assert_clean(big)
    assert prefetched(big) == {}  # 7 other heads x 40 x 40 cells: above the limit


def test_multi_head_query_section_follows_the_pickers():
    """One query in every head (one bar trace per head), its output in the picked head;
    the small multiples link each trace to its head so a click picks query and head."""
    at = run_app({"N": "5", "D": "8", "heads": "4", "mask": "causal"}, "pages/multi_head.py")
    at.selectbox(key="query").set_value(3).run()
    at.selectbox(key="head").set_value(2).run()
    assert_clean(at)
    r = view_of(at).result
    fig = figures_of(at)
    bars = fig["mh_qheads"]["data"]
    assert [t["name"] for t in bars] == [f"head {i}" for i in range(4)]
    for i, t in enumerate(bars):
        np.testing.assert_allclose(_arr(t["y"]), r.weights[i, 3], rtol=1e-6)
        assert _arr(t["y"])[4] == 0  # causal: query 3 cannot see key 4
    assert "query 3 in head 2" in fig["mh_qsum"]["layout"]["title"]["text"]
    diamonds = [t for t in fig["mh_qsum"]["data"] if t.get("type") == "scatter"]
    np.testing.assert_allclose(_arr(diamonds[0]["y"]), r.head_outputs[2, 3], rtol=1e-5, atol=1e-6)
    link = board_entries(at)["mh_small"]["link"]
    assert link["heads"] == [0, 1, 2, 3] and link["select"]


def test_changing_n_changes_the_heatmaps():
    at = run_app({"N": "4"})
    f = figures_of(at)
    assert z_of(f["pg_scores"]).shape == (4, 4)
    assert z_of(f["pg_weights"]).shape == (4, 4)
    assert z_of(f["pg_x"]).shape == (4, 8)
    at.slider(key="N").set_value(7).run()
    assert_clean(at)
    f = figures_of(at)
    assert z_of(f["pg_scores"]).shape == (7, 7)
    assert z_of(f["pg_out"]).shape == (7, 4)  # d_k = 8 / 2 heads
    assert f["pg_x"]["layout"]["yaxis"]["ticktext"] == [f"t{i}" for i in range(7)]


def test_weights_figure_matches_the_engine_and_rows_sum_to_one():
    at = run_app({"N": "5", "seed": "3"})
    v = view_of(at)
    z = z_of(figures_of(at)["pg_weights"])
    np.testing.assert_allclose(z, v.result.weights[0], rtol=1e-6)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, rtol=1e-5)


def test_causal_mask_zeroes_the_upper_triangle():
    at = run_app({"N": "6", "mask": "causal"})
    assert_clean(at)
    w = view_of(at).result.weights
    iu = np.triu_indices(6, 1)
    assert (w[:, iu[0], iu[1]] == 0).all()
    np.testing.assert_allclose(w.sum(axis=2), 1.0)
    z = z_of(figures_of(at)["pg_weights"])
    assert np.isnan(z[iu]).all()  # shown as masked, not as a colour
    assert not np.isnan(z[np.tril_indices(6)]).any()


def test_padding_all_tokens_gives_zero_rows_not_nan():
    at = run_app({"N": "3", "mask": "padding", "pad": "3"})
    assert_clean(at)
    r = view_of(at).result
    assert (r.weights == 0).all() and not np.isnan(r.output).any()
    assert any("every key is masked" in i.value for i in at.info)


def test_columns_layout_transposes_the_figures():
    rows = figures_of(run_app({"N": "5", "D": "6", "heads": "2"}))
    cols = figures_of(run_app({"N": "5", "D": "6", "heads": "2", "layout": "columns"}))
    np.testing.assert_array_equal(z_of(cols["pg_weights"]), z_of(rows["pg_weights"]).T)
    assert z_of(cols["pg_x"]).shape == (6, 5)
    assert "UDL" in cols["pg_x"]["layout"]["xaxis"]["title"]["text"]


def test_url_binding_round_trips():
    query = {
        "N": "9",
        "D": "12",
        "heads": "3",
        "seed": "42",
        "init": "uniform",
        "bias": "false",
        "scale": "custom",
        "factor": "2.5",
        "mask": "padding",
        "pad": "2",
        "layout": "columns",
    }
    at = run_app(query)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    s = view_of(at).settings
    assert (s.n, s.d, s.heads, s.seed, s.init, s.bias) == (9, 12, 3, 42, "uniform", False)
    assert (s.scale_mode, s.factor, s.mask_kind, s.pad, s.layout) == (
        "custom",
        2.5,
        "padding",
        2,
        "columns",
    )
    assert at.slider(key="N").value == 9 and at.selectbox(key="heads").value == 3
    assert dict(at.query_params) == query  # valid values stay in the link
    again = run_app(dict(at.query_params))
    assert view_of(again).settings == s
    np.testing.assert_array_equal(view_of(again).result.output, view_of(at).result.output)


def test_the_default_view_shows_soft_attention():
    """Xavier weights by default: scores of order 1 and graded weights, where the
    notebooks' N(0,1) weights give scores of ±10 and nearly one-hot rows."""
    at = run_app()
    v = view_of(at)
    assert v.settings.init == ui.DEFAULTS["init"] == "xavier"
    assert at.radio(key="init").value == "xavier" and "init" not in at.query_params
    normal = view_of(run_app({"init": "normal"})).result
    soft, sharp = v.result.weights.max(axis=-1).mean(), normal.weights.max(axis=-1).mean()
    assert soft < 0.6 < sharp, (soft, sharp)
    assert np.abs(v.result.scores).max() < np.abs(normal.scores).max()


def test_default_values_stay_out_of_the_link():
    at = run_app({"N": "6", "mask": "causal"})
    assert dict(at.query_params) == {"mask": "causal"}


def test_text_input_sets_n_and_labels():
    at = run_app({"source": "text", "text": "a rose is a rose"})
    assert_clean(at)
    v = view_of(at)
    assert v.labels == ("a", "rose", "is", "a", "rose") and v.settings.n == 5
    assert at.slider(key="N").disabled
    np.testing.assert_array_equal(v.x[1], v.x[4])


def test_preset_sets_the_controls():
    at = run_app({"source": "preset", "preset": "udl-self-attention"})
    assert_clean(at)
    s = view_of(at).settings
    assert (s.n, s.d, s.heads) == (3, 4, 1)


def test_load_preset_button_on_the_notebooks_page():
    at = run_app(None, "pages/notebooks.py")
    assert_clean(at)
    assert any("34 of 34" in m.value or " of " in m.value for m in at.markdown)
    at.button(key="load_numpy-multihead").click().run()
    assert_clean(at)
    s = view_of(at).settings
    assert (s.source, s.preset, s.n, s.d, s.heads) == ("preset", "numpy-multihead", 4, 8, 2)
    links = at.get("page_link")
    assert links and links[0].proto.page_script_hash and "playground" in links[0].proto.label
    assert "preset=numpy-multihead" in links[0].proto.query_string


def test_the_notebooks_verdicts_and_labels_get_the_width_of_their_words():
    """The data grid draws on a canvas and cuts what does not fit its column: the verdict
    column was 60 px in every language, and Spanish's "✓ correcto" lost its end. Its width
    and the label's now follow their longest text in the shown language."""

    def widths(lang: str) -> list[int]:
        at = run_app({"lang": lang}, "pages/notebooks.py")
        assert_clean(at)
        columns = json.loads(at.dataframe[0].proto.columns)
        return [c["width"] for c in list(columns.values())[:2]]

    en, es = widths("en"), widths("es")
    assert es[0] > en[0] >= 60, (en, es)  # "✓ correcto" is longer than "✓ pass"
    assert 180 <= en[1] <= es[1] <= 280, (en, es)


@pytest.mark.parametrize("page", ["pages/masking.py", "pages/notebooks.py", "pages/exercises.py"])
def test_legacy_deep_link_still_runs_the_whole_app(page):
    """A first request for /masking in a fresh process runs the page file alone; the
    page guard switches to navigation mode and reruns, so the sidebar and view exist."""
    at = run_app({"N": "5"}, page)
    assert_clean(at)
    assert at.slider(key="N").value == 5
    assert view_of(at).settings.n == 5
    assert at.title[0].value != "app"


def test_bad_upload_shows_an_error_and_keeps_the_previous_view():
    at = run_app({"source": "upload"})
    assert_clean(at)
    at.file_uploader(key="upload").set_value(("x.csv", b"1,2,3\n4,5,6\n", "text/csv")).run()
    assert_clean(at)
    v = view_of(at)
    assert v.x.shape == (2, 3) and v.settings.source == "upload"
    at.file_uploader(key="upload").set_value(("bad.csv", b"1,2\n3,oops\n", "text/csv")).run()
    assert at.error and "oops" in at.error[0].value and "previous upload" in at.error[0].value
    np.testing.assert_array_equal(view_of(at).x, v.x)  # previous view kept


def test_first_bad_upload_falls_back_to_random():
    at = run_app({"source": "upload"})
    at.file_uploader(key="upload").set_value(("bad.csv", b"1,nan\n", "text/csv")).run()
    assert at.error and "finite" in at.error[0].value
    assert not at.exception


def test_query_selector_drives_the_bars():
    at = run_app({"N": "5", "mask": "causal"})
    at.selectbox(key="query").set_value(2).run()
    assert_clean(at)
    bars = figures_of(at)["pg_qbars"]["data"][0]
    y = bars["y"]
    y = np.frombuffer(base64.b64decode(y["bdata"]), y["dtype"]) if isinstance(y, dict) else y
    np.testing.assert_allclose(y, view_of(at).result.weights[0, 2], rtol=1e-6)
    assert y[3] == 0 and y[4] == 0


def test_code_box_reproduces_the_view():
    for query in (
        {"N": "5", "mask": "causal", "init": "normal"},
        {"N": "4", "D": "6", "heads": "3", "bias": "false"},  # default init (xavier)
        {"source": "preset", "preset": "numerical-example", "scale": "none"},
        {"source": "text", "text": "one two one", "mask": "padding", "pad": "1"},
    ):
        at = open_code_box(run_app(query))
        v = view_of(at)
        code = at.get("code")[-1].proto.code_text
        ns: dict = {}
        exec(code, ns)  # noqa: S102 - the code the page shows
        np.testing.assert_allclose(ns["A"], v.result.weights[0], atol=1e-12)
        np.testing.assert_allclose(ns["Y"], v.result.output, atol=1e-9)


def test_npz_holds_the_whole_state():
    at = run_app({"N": "4", "mask": "causal"})
    v = view_of(at)
    import io

    data = np.load(io.BytesIO(ui.npz_bytes(v)))
    for k in ("x", "w_q", "scores", "weights", "output", "mask", "settings_json"):
        assert k in data
    np.testing.assert_array_equal(data["weights"], v.result.weights)
    assert json.loads(str(data["settings_json"]))["mask_kind"] == "causal"


def test_hostile_token_labels_are_shown_literally():
    """CSV labels that look like HTML or Markdown reach plotly escaped and Markdown as
    code spans (st.markdown/st.caption/st.subheader would make [x](url) a link)."""
    labels = ['<a href="https://example.org/">visit</a>', "<b>bold</b>", "[visit](https://x.org/)"]
    csv = "".join(
        f'"{lab.replace(chr(34), 2 * chr(34))}",{i},{i + 1}\n' for i, lab in enumerate(labels)
    )
    at = run_app({"source": "upload"})
    at.file_uploader(key="upload").set_value(
        ("l[x](https://x.org/).csv", csv.encode(), "text/csv")
    ).run()
    at.selectbox(key="query").set_value(2).run()
    assert_clean(at)
    assert view_of(at).labels == tuple(labels)
    f = figures_of(at)
    escaped = [viz.style.plotly_text(s) for s in labels]
    for key in ("pg_scores", "pg_weights", "pg_x", "pg_qbars"):
        ax = f[key]["layout"]["xaxis" if key == "pg_qbars" else "yaxis"]
        assert ax["ticktext"] == escaped, key
    assert escaped[2] in f["pg_qbars"]["layout"]["title"]["text"]
    texts = [m.value for m in (*at.markdown, *at.caption, *at.header)]
    shown = [t for t in texts if "x.org" in t]
    assert len(shown) >= 2, texts  # the head info line and the query heading
    assert any(ui.md_text(labels[2]) in t for t in at.header.values)
    assert any(ui.md_text("l[x](https://x.org/).csv") in t for t in at.sidebar.caption.values)
    for t in shown:  # the link syntax only ever appears inside a code span
        assert t.count("](https://x.org/)") == t.count("`[visit](https://x.org/)`") + t.count(
            "`l[x](https://x.org/).csv`"
        ), t


@pytest.mark.parametrize(
    ("page", "names"),
    [
        ("pages/masking.py", ("causal", "padding", "A_causal")),
        ("pages/permutation.py", ("perm", "X_p")),
        ("pages/scaling.py", ("z", "dots")),
        ("pages/notebooks.py", ("presets",)),
        ("pages/step_by_step.py", ("A", "Y")),
    ],
)
def test_every_code_box_runs_with_its_page_lines(page, names):
    at = open_code_box(run_app({"N": "5", "mask": "causal"}, page=page))
    assert_clean(at)
    code = at.get("code")[-1].proto.code_text
    ns: dict = {}
    exec(code, ns)  # noqa: S102 - the code the page shows
    for name in names:
        assert name in ns, f"{page}: the code box does not define {name}"
    v = view_of(at)
    np.testing.assert_allclose(ns["Y"], v.result.output, atol=1e-9)
    if page == "pages/masking.py":
        np.testing.assert_array_equal(ns["causal"], np.tril(np.ones((5, 5), bool)))
    if page == "pages/permutation.py":
        assert sorted(ns["perm"].tolist()) == list(range(5))
