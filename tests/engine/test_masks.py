"""The mask registry (attnviz.engine.masks) against everything that reads it: every kind reaches
the sidebar, the links, Compare's b_ controls, the code box, the presets and the
exercises, and each reader follows the table (a reader with its own list fails here).
Cases are made from the table, so a new kind is checked without a new test."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from board_view import figures_of
from test_app import assert_clean, open_code_box, open_exports, run_app, view_of, z_of

from attnviz import engine, ui
from attnviz.classroom import exercises
from attnviz.engine import masks
from attnviz.teaching import experiments, presets
from attnviz.ui import compare, links, walker
from attnviz.ui.controls import BY_KEY, DEFAULTS, KEYS, LABELS, Settings, replace
from tests.ui.test_compare import run_app as run_compare

N = 6
KINDS = list(masks.KINDS.values())
PARAMS = list(masks.PARAMS.items())  # (key, (kind name, Param))


def _values(kind: masks.MaskKind, n: int = N) -> dict[str, int]:
    """A value of each parameter other than its default (a round trip can tell them apart)."""
    return {p.key: p.default + 1 if p.default + 1 <= n - 1 else p.default - 1 for p in kind.params}


def _settings(kind: str = "none", **values: int) -> Settings:
    s = Settings(**{c.field: c.default for c in ui.CONTROLS if c.field}, mask_params=())
    return replace(s, mask_kind=kind, **values)


# --------------------------------------------------------------------------- the table


def test_the_table_is_consistent():
    assert masks.NAMES[0] == "none" and masks.KINDS["none"].builder is None
    assert len(set(masks.NAMES)) == len(masks.NAMES)
    assert len(masks.PARAMS) == sum(len(k.params) for k in KINDS)  # no key in two kinds
    for k in KINDS:
        assert k.label and k.explain, k.name
        assert (k.builder is None) == (k.code is None) == (k.name == "none"), k.name
        for p in k.params:
            assert p.lo <= p.default and p.short and p.label and p.doc, p.key
            assert p.key not in BY_KEY or BY_KEY[p.key].mask_param, f"{p.key} is taken"


def test_the_registry_imports_numpy_and_the_engine_only():
    tree = ast.parse(Path(masks.__file__).read_text())
    imported = {
        (n.module or "") if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    assert imported <= {"__future__", "collections.abc", "dataclasses", "numpy", "attnviz"}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_build_is_the_engines_builder_and_clamps_to_n(kind):
    values = _values(kind)
    m = masks.build(kind.name, N, **values)
    if kind.builder is None:
        assert m is None
        return
    np.testing.assert_array_equal(m, kind.builder(N, *values.values()))
    assert m.shape == (N, N) and m.dtype == bool
    big = {key: 10 * N for key in values}  # above N: the mask of N
    np.testing.assert_array_equal(
        masks.build(kind.name, N, **big), kind.builder(N, *[N] * len(big))
    )
    np.testing.assert_array_equal(experiments.make_mask(kind.name, N, **values), m)


def test_an_unknown_kind_names_the_kinds():
    with pytest.raises(ValueError, match="mask kind must be one of " + ", ".join(masks.NAMES)):
        masks.build("future", 3)


# --------------------------------------------------------------------------- the sidebar, links


def test_the_sidebar_offers_every_kind_with_its_label_and_explanation():
    c = BY_KEY["mask"]
    assert tuple(c.option_list(DEFAULTS)) == masks.NAMES == ui.MASKS
    assert LABELS["mask"] == {k.name: k.label for k in KINDS}
    assert c.rule == "one of " + ", ".join(masks.NAMES)
    for k in KINDS:
        assert f"`{k.name}`" in c.doc
        if k.builder is not None:
            assert k.explain in c.help


@pytest.mark.parametrize(("key", "kp"), PARAMS, ids=[k for k, _ in PARAMS])
def test_every_parameter_is_a_url_bound_control_shown_with_its_kind(key, kp):
    kind, p = kp
    c = BY_KEY[key]
    assert c.mask_param and c.bind and key in KEYS and DEFAULTS[key] == p.default
    assert c.when == ("mask", kind) and c.kind == "number" and c.type is int
    assert (c.lo, c.label, c.doc) == (p.lo, p.label, p.doc)
    assert c.after == key and key in walker.AFTER  # a value above N gets the kind's notice
    assert f"| `{key}` | number | {p.doc} |" in ui.markdown_table()
    # Streamlit cannot parse seed=1e999-like integers: the links drop them first
    assert key in links.INT_URL_KEYS and f"b_{key}" in links.INT_URL_KEYS


@pytest.mark.parametrize(("key", "kp"), PARAMS, ids=[k for k, _ in PARAMS])
def test_compare_offers_every_parameter_with_a_short_label(key, kp):
    assert "mask" in compare.B_KEYS and key in compare.B_KEYS and compare.SHORT[key] == kp[1].short
    s = _settings(kp[0], **{key: kp[1].default + 1})
    assert compare.a_values(s)[key] == kp[1].default + 1
    assert f"{kp[1].short} {kp[1].default + 1}" in compare.describe(s)
    assert key in compare.differing(s, replace(s, **{key: kp[1].default}))


def test_settings_keep_only_the_chosen_kinds_parameters():
    for k in KINDS:
        values = _values(k)
        s = _settings(k.name, **values)
        assert s.mask_params == tuple(values.items())
        for key, v in values.items():
            assert getattr(s, key) == s.value(key) == v
        other = replace(s, mask_kind="none")
        assert other.mask_params == () and other.mask() is None
        for key, (_, p) in masks.PARAMS.items():  # a hidden parameter reads as its default
            assert getattr(other, key) == p.default
    with pytest.raises(AttributeError):
        _settings().not_a_parameter  # noqa: B018


# --------------------------------------------------------------------------- the code box


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_the_code_box_recomputes_every_kind(kind):
    s = _settings(kind.name, **_values(kind))
    x, labels, params, res = ui.compute(s)
    ns: dict = {}
    exec(ui.code_lines(ui.View(s, x, labels, params, res), head=1), ns)  # noqa: S102
    np.testing.assert_allclose(ns["A"], res.weights[1], atol=1e-12)
    np.testing.assert_allclose(ns["Y"], res.output, atol=1e-9)
    if kind.builder is None:
        assert "mask" not in ns
    else:
        np.testing.assert_array_equal(ns["mask"], masks.build(kind.name, N, **_values(kind)))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_the_code_line_is_the_builders_mask(kind):
    """The code line's contract (MaskKind.code): with only ``np`` defined it sets ``mask``
    (or the variable it is given) to the builder's mask."""
    values = _values(kind)
    expected = masks.build(kind.name, N, **values)
    for var in ("mask", "m"):
        ns: dict = {"np": np}
        exec(masks.code(kind.name, N, var, comment=False, **values), ns)  # noqa: S102
        assert (var not in ns) if expected is None else (ns[var] == expected).all()


# --------------------------------------------------------------------------- presets, exercises


def test_presets_run_under_every_kind_without_parameters():
    p = presets.get(presets.names()[0])
    for k in KINDS:
        if k.params:
            with pytest.raises(ValueError, match="mask must be one of"):
                p.run(mask=k.name)
            continue
        r = p.run(mask=k.name)
        expected = masks.build(k.name, p.n_tokens)
        assert (r.mask is None) if expected is None else (r.mask == expected).all()


def test_the_exercises_draw_every_kind_with_an_exercise():
    drawn = {e.data["mask_kind"] for seed in range(40) for e in exercises.generate(seed)
             if e.kind == "mask"}  # fmt: skip
    assert drawn == {k.name for k in KINDS if k.exercise is not None}


# --------------------------------------------------------------------------- the app


@pytest.mark.parametrize("kind", KINDS[1:], ids=lambda k: k.name)
def test_every_kind_round_trips_through_the_link(kind):
    query = {"mask": kind.name, **{key: str(v) for key, v in _values(kind).items()}}
    at = run_app(query)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert dict(at.query_params) == query
    assert at.radio(key="mask").value == kind.name
    for key, v in _values(kind).items():
        assert at.number_input(key=key).value == v
    v = view_of(at)
    assert v.settings.mask_kind == kind.name and v.settings.mask_params == tuple(
        _values(kind).items()
    )
    np.testing.assert_array_equal(v.result.mask, masks.build(kind.name, N, **_values(kind)))
    assert view_of(run_app(dict(at.query_params))).settings == v.settings


@pytest.mark.parametrize("kind", KINDS[1:], ids=lambda k: k.name)
def test_compare_b_mask_of_every_kind(kind):
    b_values = {f"b_{key}": str(v) for key, v in _values(kind).items()}
    at = run_compare({"N": str(N), "b_mask": kind.name, **b_values})
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    mask = masks.build(kind.name, N, **_values(kind))
    b = z_of(figures_of(at)["cmp_b"])
    assert np.isnan(b[~mask]).all() and not np.isnan(b[mask]).any()  # B's masked cells


@pytest.mark.parametrize("kind", KINDS[1:], ids=lambda k: k.name)
def test_the_apps_code_box_recomputes_every_kind(kind):
    query = {"N": str(N), "mask": kind.name, **{k: str(v) for k, v in _values(kind).items()}}
    at = open_code_box(run_app(query))
    assert_clean(at)
    ns: dict = {}
    exec(at.get("code")[-1].proto.code_text, ns)  # noqa: S102 - the code the page shows
    r = view_of(at).result
    np.testing.assert_allclose(ns["A"], r.weights[0], atol=1e-12)
    np.testing.assert_array_equal(ns["mask"], r.mask)


def test_settings_fields_stay_as_written():
    # the generic field holds every kind's parameters: no field per parameter
    names = {f.name for f in dataclasses.fields(Settings)}
    assert "mask_params" in names and not names & set(masks.PARAMS)


@pytest.mark.parametrize(("key", "kp"), PARAMS, ids=[k for k, _ in PARAMS])
def test_a_parameter_above_n_uses_n_with_the_kinds_notice(key, kp):
    kind, p = kp
    at = run_app({"N": "4", "mask": kind, key: "9"})
    assert_clean(at)
    assert [w.value for w in at.warning] == [p.over_n.format(n=4, value=9)]
    np.testing.assert_array_equal(view_of(at).result.mask, masks.build(kind, 4, **{key: 4}))


def test_the_exported_settings_name_every_parameter_by_its_url_key():
    s = _settings("none")
    d = s.as_dict()
    assert "mask_params" not in d and list(d)[list(d).index("mask_kind") + 1] == next(
        iter(masks.PARAMS)
    )
    assert {key: d[key] for key in masks.PARAMS} == {k: p.default for k, (_, p) in PARAMS}
    for k in KINDS:
        assert all(
            _settings(k.name, **_values(k)).as_dict()[key] == v for key, v in _values(k).items()
        )


# --------------------------------------------------------------------------- window and prefix


@pytest.mark.parametrize(
    ("kind", "value", "may_attend"),
    [("window", 3, lambda i, j: i - 3 < j <= i), ("prefix", 3, lambda i, j: j < 3 or j <= i)],
)
def test_window_and_prefix_links_round_trip_with_their_patterns(kind, value, may_attend):
    query = {"mask": kind, kind: str(value)}
    at = run_app(query)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert dict(at.query_params) == query
    v = view_of(at)
    expected = np.array([[may_attend(i, j) for j in range(N)] for i in range(N)])
    np.testing.assert_array_equal(v.result.mask, expected)
    assert (v.result.weights[:, ~expected] == 0).all()
    np.testing.assert_allclose(v.result.weights.sum(axis=-1), 1.0)
    assert view_of(run_app(dict(at.query_params))).settings == v.settings


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"mask": "window", "window": "0"}, "`window=0`, which is not valid (window must be "
         "an integer from 1 to 512); using `window=2`"),
        ({"mask": "prefix", "prefix": "99"}, "a prefix of 99 is more than N; using prefix = 6"),
        ({"mask": "window", "window": "99"}, "a window of 99 is more than N; using window = 6"),
        ({"mask": "prefix", "prefix": "-1"}, "`prefix=-1`, which is not valid"),
    ],
)  # fmt: skip
def test_invalid_window_and_prefix_give_a_warning_not_a_traceback(query, said):
    at = run_app(query)
    assert_clean(at)
    text = " ".join(w.value for w in at.warning)
    assert said in text, text
    s = view_of(at).settings
    kind, key = query["mask"], query["mask"]
    used = min(int(s.value(key)), N)
    np.testing.assert_array_equal(view_of(at).result.mask, masks.build(kind, N, **{key: used}))


def test_compare_b_mask_window_is_the_engines_window():
    q = {"seed": "5", "b_mask": "window", "b_window": "2"}  # N=6, D=8, heads=2: the defaults
    at = run_compare(q)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert dict(at.query_params) == q
    x = ui.compute(_settings(seed=5))[0]
    p = engine.AttentionParams.random(8, seed=6, init="xavier")
    wb = engine.multi_head_attention(
        x, p, num_heads=2, mask=engine.sliding_window_mask(6, 2)
    ).weights[0]
    b = z_of(figures_of(at)["cmp_b"])
    np.testing.assert_allclose(np.nan_to_num(b), wb, rtol=1e-6, atol=1e-30)  # float32 figure
    assert np.isnan(b[~engine.sliding_window_mask(6, 2)]).all()
    assert at.selectbox(key="b_mask").value == "window"
    assert at.number_input(key="b_window").value == 2


#: The kinds the Masking page draws in a column of their own when the sidebar chooses them
#: (it always shows none, causal and padding).
OTHER_KINDS = [k for k in KINDS if k.name not in ("none", "causal", "padding")]


@pytest.mark.parametrize("kind", OTHER_KINDS, ids=lambda k: k.name)
def test_the_masking_page_shows_the_sidebars_other_kind(kind):
    values = _values(kind, 5)
    query = {"N": "5", "mask": kind.name, **{key: str(v) for key, v in values.items()}}
    at = open_code_box(run_app(query, "pages/masking.py"))
    assert_clean(at)
    said = ", ".join(f"{key} = {v}" for key, v in values.items())
    title = f"{kind.name} ({said})" if said else kind.name
    assert title in [m.value.removeprefix("## ") for m in at.markdown]
    explain = kind.explain  # what the mask hides, under its column
    assert any(c.value == explain[0].upper() + explain[1:] + "." for c in at.caption)
    assert any(f"*{explain}*" in m.value for m in at.markdown), "the intro names every kind"
    assert f"mk_w_{kind.name}" in figures_of(at), "the column's charts are keyed by its kind"
    ns: dict = {}
    exec(at.get("code")[-1].proto.code_text, ns)  # noqa: S102 - the code the page shows
    expected = masks.build(kind.name, 5, **values)
    np.testing.assert_array_equal(ns[kind.name], expected)  # the page's line for this mask
    np.testing.assert_array_equal(ns["mask"], expected)  # the view's mask line
    r = view_of(at).result
    np.testing.assert_allclose(ns["A"], r.weights[0], atol=1e-12)
    np.testing.assert_allclose(ns["Y"], r.output, atol=1e-9)
    at = open_exports(at)
    assert_clean(at)
    text = " ".join(str(c.value) for c in at.get("code"))
    assert f"{kind.name} weights" in text or f"{kind.name}_weights" in text, "no export"


def test_the_docs_name_every_kind():
    """docs/app.md's Masking paragraph names the kinds by their ``?mask=`` value, and
    docs/engine.md's table of masks each kind's builder."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    doc = (docs / "app.md").read_text()
    missing = [k.name for k in KINDS if k.name != "none" and f"`{k.name}`" not in doc]
    assert not missing, f"docs/app.md does not name the mask kinds {missing}"
    engine_doc = (docs / "engine.md").read_text()
    builders = [k.builder.__name__ for k in KINDS if k.builder is not None]
    missing = [b for b in builders if f"| `{b}(n" not in engine_doc]
    assert not missing, f"docs/engine.md's table of masks does not list {missing}"
