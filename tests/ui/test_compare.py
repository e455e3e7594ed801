"""The Compare page (pages/compare.py, attnviz.ui.compare) and its figures
(attnviz.viz.compare): B's settings in the link, invalid ones replaced with a warning,
B − A exactly the difference of the two engine results, presets, the cell pair."""

from __future__ import annotations

import numpy as np
import pytest
from board_view import board_entries, figures_of
from streamlit.testing.v1 import AppTest
from test_app import APP, assert_clean, open_exports, view_of, z_of

from attnviz import engine, viz
from attnviz.teaching import inputs
from attnviz.ui.board import figure_json
from attnviz.ui.controls import replace

PAGE = "pages/compare.py"


def run_app(query: dict, page: str = PAGE) -> AppTest:
    """The app opened on ``page`` with the link's ``query`` (its first run is the page's,
    as a deep link /compare?... is)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    at.switch_page(page).run()
    return at


def _engine_weights(n: int, d: int, heads: int, seed: int, init: str = "xavier", **kw):
    """The weights of a random view computed straight from the engine (not the app)."""
    x = inputs.random_input(n, d, seed).x
    params = engine.AttentionParams.random(d, seed=seed + 1, init=init, bias=kw.pop("bias", True))
    return engine.multi_head_attention(x, params, num_heads=heads, **kw).weights


def test_the_charts_say_which_is_which():
    at = run_app({"N": "5", "b_scale": "none"}, PAGE)
    assert_clean(at)
    titles = {k: f["layout"]["title"]["text"] for k, f in figures_of(at).items()}
    assert titles["cmp_a"].startswith("A: weights") and "scale 1/√d_k" in titles["cmp_a"]
    assert titles["cmp_b"].startswith("B: weights") and "scale none" in titles["cmp_b"]
    assert titles["cmp_diff"].startswith("B − A: ")
    assert titles["cmp_entropy"].startswith("B − A: entropy")
    links = {k: e["link"] for k, e in board_entries(at).items() if k != "cmp_entropy"}
    assert all(s["kind"] == "attn" and s["head"] is None for s in links.values())  # all linked


def test_b_minus_a_is_exactly_the_difference_of_the_engine_results():
    q = {"N": "6", "D": "8", "heads": "2", "seed": "5", "b_mask": "causal", "b_seed": "9"}
    at = run_app(q, PAGE)
    assert_clean(at)
    wa = _engine_weights(6, 8, 2, 5)[0]
    wb = _engine_weights(6, 8, 2, 9, mask=engine.causal_mask(6))[0]
    f = figures_of(at)
    np.testing.assert_array_equal(z_of(f["cmp_diff"]), (wb - wa).astype(np.float32))
    np.testing.assert_allclose(z_of(f["cmp_a"]), wa, rtol=1e-6)
    b = z_of(f["cmp_b"])
    assert np.isnan(b[np.triu_indices(6, 1)]).all()  # B's masked cells drawn as masked
    diff = f["cmp_diff"]["data"][0]
    assert diff["zmid"] == 0 and diff["zmin"] == -diff["zmax"] > -1.0001


def test_url_round_trip_of_b_parameters():
    q = {
        "N": "5",
        "b_D": "12",
        "b_heads": "4",
        "b_seed": "3",
        "b_init": "normal",
        "b_bias": "false",
        "b_scale": "custom",
        "b_factor": "2.5",
        "b_mask": "padding",
        "b_pad": "2",
        "b_head": "3",
    }
    at = run_app(q, PAGE)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert dict(at.query_params) == q
    mask = engine.padding_mask(5, 2)
    wb = _engine_weights(5, 12, 4, 3, "normal", bias=False, scale=2.5, mask=mask)[3]
    got = z_of(figures_of(at)["cmp_b"])
    np.testing.assert_allclose(got[:, :3], wb[:, :3], rtol=1e-6, atol=1e-30)  # float32 figure
    assert np.isnan(got[:, 3:]).all()
    again = run_app(dict(at.query_params), PAGE)
    np.testing.assert_array_equal(
        z_of(figures_of(again)["cmp_diff"]), z_of(figures_of(at)["cmp_diff"])
    )
    assert at.number_input(key="b_seed").value == 3 and at.selectbox(key="b_heads").value == 4


@pytest.mark.parametrize(
    ("key", "value", "rule"),
    [
        ("b_mask", "xyz", "one of none, causal, padding"),
        ("b_heads", "3", "a divisor of D=8"),
        ("b_seed", "abc", "an integer from 0 to"),
        ("b_seed", "1e999", "not a usable number"),
        ("b_init", "he", "one of normal, uniform, xavier"),
        ("b_bias", "maybe", "true or false"),
        ("b_D", "0", "an integer from 1 to"),
    ],
)
def test_an_invalid_b_value_is_replaced_with_a_warning(key, value, rule):
    at = run_app({"N": "4", key: value, "b_scale": "none"}, PAGE)
    assert_clean(at)
    text = " ".join(w.value for w in at.warning)
    assert f"{key}={value}" in text and rule in text, text
    assert key not in at.query_params and at.query_params["b_scale"] == "none"
    wa = view_of(at).result.weights[0]
    np.testing.assert_allclose(z_of(figures_of(at)["cmp_a"]), wa, rtol=1e-6)
    at.run()  # the warning is said once
    assert not [w for w in at.warning if f"{key}={value}" in w.value]


def test_two_heads_of_one_view():
    at = run_app({"N": "5", "D": "8", "heads": "4", "b_head": "2"}, PAGE)
    assert_clean(at)
    r = view_of(at).result
    f = figures_of(at)
    np.testing.assert_allclose(z_of(f["cmp_b"]), r.weights[2], rtol=1e-6)
    np.testing.assert_array_equal(
        z_of(f["cmp_diff"]), (r.weights[2] - r.weights[0]).astype(np.float32)
    )
    assert "head 2 − head 0" in f["cmp_diff"]["layout"]["title"]["text"]


def test_b_equal_to_a_says_so():
    at = run_app({"N": "4"}, PAGE)
    assert_clean(at)
    assert any("B is the same as A" in i.value for i in at.info)
    assert not z_of(figures_of(at)["cmp_diff"]).any()


@pytest.mark.parametrize(
    ("label", "check"),
    [
        ("Scaled vs not", lambda s, b: s.scale_mode == "1/√d_k" and b.scale_mode == "none"),
        ("Causal vs none", lambda s, b: s.mask_kind == "none" and b.mask_kind == "causal"),
        ("Two seeds", lambda s, b: b.seed == s.seed + 1),
        ("1 vs 4 heads", lambda s, b: s.heads == 1 and b.heads == 4),
        ("Xavier vs normal", lambda s, b: s.init == "xavier" and b.init == "normal"),
    ],
)
def test_presets(label, check):
    at = run_app({"N": "5", "D": "6", "b_scale": "none", "init": "uniform"}, PAGE)
    at.button(key=f"cmp_preset_{label}").click().run()
    assert_clean(at)
    s = view_of(at).settings
    b = replace(s, **_b_changes(at))
    assert check(s, b), (s, b)
    if label != "Scaled vs not":  # the preset resets what B changed before
        assert at.selectbox(key="b_scale").value == "same as A"


def _b_changes(at) -> dict:
    from attnviz.ui.compare import B_KEYS, SAME
    from attnviz.ui.controls import BY_KEY

    out = {}
    for k in B_KEYS:
        v = at.session_state[f"b_{k}"] if f"b_{k}" in at.session_state else None  # noqa: SIM401
        if v is not None and v != SAME:
            out[k if BY_KEY[k].mask_param else BY_KEY[k].field] = v  # a field, or "pad"
    return out


def test_a_click_on_any_board_works_the_cell_out_in_a_and_b():
    at = run_app({"N": "5", "b_scale": "none"}, PAGE)
    at.session_state["board_cmp_diff"] = {
        "selection": {"query": 2, "key": 4, "head": None, "chart": "weights"}
    }
    at.run()
    assert_clean(at)
    # the browser wrote each view's steps under its chart (cell.js); the server adds one
    # closed box of equations per view, named by the view, and never the steps again
    boxes = [e.label for e in at.expander if "as equations" in e.label]
    assert [b[:3] for b in boxes] == ["A: ", "B: "] and all("a\\_2,4" in b for b in boxes)
    assert not [m.value for m in at.markdown if "came about" in m.value]
    weights = [m.value for m in at.markdown if "a_{2,4} = \\frac" in m.value]
    wa = view_of(at).result.weights[0, 2, 4]
    wb = z_of(figures_of(at)["cmp_b"])[2, 4]
    assert len(weights) == 2 and f"= {wa:.4f}$" in weights[0] and f"= {wb:.4f}$" in weights[1]
    at.session_state["board_cmp_a"] = {"selection": {"query": 0, "key": 1, "head": None}}
    at.run()
    boxes = [e.label for e in at.expander if "as equations" in e.label]
    assert len(boxes) == 2 and all("a\\_0,1" in b for b in boxes)  # the newest click wins


# --------------------------------------------------------------------------- figures


def test_largest_changes_and_entropy_change():
    a = np.array([[0.5, 0.5], [1.0, 0.0]])
    b = np.array([[0.9, 0.1], [1.0, 0.0]])
    rows = viz.compare.largest_changes(a, b, k=5)
    assert [(c.query, c.key) for c in rows] == [(0, 0), (0, 1)]  # unchanged cells left out
    assert rows[0].delta == pytest.approx(0.4) and rows[1].delta == pytest.approx(-0.4)
    dh = viz.compare.entropy_change(a, b)
    assert dh[0] < 0 and dh[1] == 0
    assert dh[0] == pytest.approx(engine.row_entropy(b[0]) - 1.0)


def test_difference_figure_is_centred_on_zero_and_transposes_for_columns():
    rng = np.random.default_rng(3)
    a, b = rng.dirichlet(np.ones(4), 4), rng.dirichlet(np.ones(4), 4)
    rows = figure_json(viz.compare.difference_figure(a, b, what="x"))
    cols = figure_json(viz.compare.difference_figure(a, b, what="x", layout="columns"))
    tr = rows["data"][0]
    m = np.abs(b - a).max()
    assert tr["zmid"] == 0 and tr["zmax"] == pytest.approx(m) and tr["zmin"] == -tr["zmax"]
    np.testing.assert_array_equal(z_of(cols), z_of(rows).T)
    np.testing.assert_array_equal(z_of(rows), (b - a).astype(np.float32))
    custom = np.array(tr["customdata"])  # (N, N, 2): A and B for the hover
    np.testing.assert_allclose(custom[1, 2], [a[1, 2], b[1, 2]], atol=5e-5)
    big = figure_json(viz.compare.difference_figure(np.eye(41), np.eye(41), what="x"))["data"][0]
    assert "customdata" not in big and "customdata" not in big["hovertemplate"]
    assert rows["layout"]["title"]["text"] == "B − A: x"


def test_views_of_different_inputs_are_refused():
    with pytest.raises(ValueError, match="same N×N shape.*got A 3×3 and B 4×4"):
        viz.compare.difference(np.eye(3), np.eye(4))


@pytest.mark.parametrize(
    "query",
    [
        {"N": "6", "D": "8", "heads": "2", "seed": "5", "b_mask": "causal", "b_seed": "9"},
        {"N": "5", "D": "8", "heads": "2", "b_scale": "none", "b_head": "1", "layout": "columns"},
        {"N": "4", "D": "8", "heads": "2", "b_heads": "4", "b_init": "normal"},
    ],
)
def test_the_code_box_recomputes_a_b_and_b_minus_a(query):
    """Compare's code box, executed: its ``A_a``, ``A_b`` and ``diff`` are the engine's A,
    B and B − A (row layout, whatever the page's layout)."""
    at = run_app(query, PAGE)
    assert_clean(at)
    assert not [c for c in at.code if "# ---- view B" in c.value]  # built only while open
    at.session_state["code_box_compare"] = True
    at.run()
    (code,) = [c.value for c in at.code if "# ---- view B" in c.value]
    ns: dict = {}
    exec(code, ns)  # noqa: S102 - our own generated code
    n, d, seed = int(query["N"]), int(query["D"]), int(query.get("seed", 0))
    heads_b = int(query.get("b_heads", query["heads"]))
    kw_b = {"mask": engine.causal_mask(n)} if query.get("b_mask") == "causal" else {}
    if query.get("b_scale") == "none":
        kw_b["scale"] = False
    wa = _engine_weights(n, d, int(query["heads"]), seed)[0]
    b_seed, b_init = int(query.get("b_seed", seed)), query.get("b_init", "xavier")
    wb = _engine_weights(n, d, heads_b, b_seed, init=b_init, **kw_b)[int(query.get("b_head", 0))]
    np.testing.assert_allclose(ns["A_a"], wa, atol=1e-12)
    np.testing.assert_allclose(ns["A_b"], wb, atol=1e-12)
    np.testing.assert_allclose(ns["diff"], wb - wa, atol=1e-12)


def test_the_export_offers_a_b_and_b_minus_a():
    """Opened, the Export box of Compare offers A's and B's weights and B − A as CSV and
    the NPZ of the whole state."""
    at = open_exports(run_app({"N": "5", "b_scale": "none"}, PAGE))
    assert_clean(at)
    labels = [b.proto.label for b in at.get("download_button")]
    for name in ("A weights (5×5)", "B weights (5×5)", "B minus A (5×5)", "Whole state"):
        assert any(lb.startswith(name) for lb in labels), (name, labels)
