"""The board's Python side: its served files, the payload, the selection callback."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path

import numpy as np
import plotly
import pytest
from plotly.offline import get_plotlyjs_version
from streamlit.testing.v1 import AppTest

from attnviz import viz
from attnviz.ui.board import assets as board_assets

board = importlib.import_module("attnviz.ui.board")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_vendor_folder_holds_the_installed_plotly_js_and_the_board_no_cdn(tmp_path):
    d = tmp_path / "vendor"
    js = board_assets.ensure_vendor(d)
    installed = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    assert _sha(js) == _sha(installed)
    assert js.name == f"plotly-{get_plotlyjs_version()}.min.js"
    # the board loads the local copy, nothing from the network
    for name in (*board.FILES, board.CSS):
        text = (board.STATIC / name).read_text()
        assert "http://" not in text and "https://" not in text, name
    assert "vendor/" in board.PLOTLY["src"] and "?v=" in board.PLOTLY["src"]
    # a second call reuses the file
    mtime = js.stat().st_mtime_ns
    assert board_assets.ensure_vendor(d) == js and js.stat().st_mtime_ns == mtime


def test_a_stale_or_foreign_vendor_file_is_replaced(tmp_path):
    d = tmp_path / "vendor"
    js = board_assets.ensure_vendor(d)
    js.unlink()
    js.write_text("alert('not plotly')")
    again = board_assets.ensure_vendor(d)
    assert again == js and _sha(again) == _sha(board_assets.plotly_js())
    assert [p.name for p in d.iterdir()] == [js.name]  # no temporary file left behind


def test_the_component_is_declared_by_the_installed_project():
    """Streamlit finds the board's files through the installed distribution's
    pyproject.toml (components v2): not installed, no board."""
    from streamlit.components.v2 import manifest_scanner

    # the real scan (tests/conftest.py gives AppTest the session's first scan)
    scan = manifest_scanner.scan_component_manifests
    found = {
        (m.name, c.name): c.resolve_asset_root(root)
        for m, root in getattr(scan, "__wrapped__", scan)()
        for c in m.components
    }
    assert found.get(("attnviz", "board")) == board.STATIC, found
    assert board.NAME == "attnviz.board"


def test_an_unwritable_folder_or_a_wrong_plotly_give_a_clear_message(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o555)
    try:
        if os.access(ro, os.W_OK):  # root writes anywhere: make the folder a file instead
            os.chmod(ro, 0o755)
            ro.rmdir()
            ro.write_text("")
        with pytest.raises(board_assets.BoardAssetError, match="python -m attnviz.ui.board"):
            board_assets.ensure_vendor(ro / "vendor")
    finally:
        if ro.is_dir():
            os.chmod(ro, 0o755)
    monkeypatch.setattr(board_assets, "get_plotlyjs_version", lambda: "0.0.1")
    with pytest.raises(board_assets.BoardAssetError, match=r"expected plotly.js v0.0.1"):
        board_assets.plotly_js()


def test_payload_keeps_typed_arrays_and_labels():
    fig = viz.heatmaps.attention_figure(
        np.full((3, 3), 1 / 3), what="weights", labels=["a", "b", "c"]
    )
    [entry] = board.payload([("w", fig, board.link_attn(0, "rows", weights=True))])
    z = entry["figure"]["data"][0]["z"]
    assert isinstance(z, dict) and "bdata" in z and z["dtype"] == "f4"
    # the title once: the chart's accessible name ("Chart: " and the title) is made by the
    # board in the shown language (draw.js chartLabel), not sent a second time
    assert entry["title"] == "Weights A = softmax(S)" and "label" not in entry
    assert entry["link"] == {
        "kind": "attn",
        "orient": "rows",
        "head": 0,
        "weights": True,
        "select": True,
    }
    assert board.link_tokens(1, "columns", "key")["axis"] == "x"


def _selection_app():
    import streamlit as st

    from attnviz.ui.board import _move_selection

    st.session_state.setdefault("q", 0)
    st.session_state.setdefault("h", 0)
    if "sel" in st.session_state:
        _move_selection("b", "q", "h", 5, 2)
    st.write(f"q={st.session_state.q} h={st.session_state.h}")


def test_a_click_selection_moves_into_the_pickers_within_range():
    at = AppTest.from_function(_selection_app)
    at.run()
    at.session_state["b"] = {"query": 3, "head": 1, "key": 0}
    at.session_state["sel"] = True
    at.run()
    assert at.markdown[0].value == "q=3 h=1"
    at.session_state["b"] = {"query": 9, "head": 7}  # out of range (a stale click): ignored
    at.run()
    assert at.markdown[0].value == "q=3 h=1"
    at.session_state["b"] = "junk"
    at.run()
    assert at.markdown[0].value == "q=3 h=1"
    # the component's state as components v2 keeps it: {"selection": the click's value}
    at.session_state["b"] = {"selection": {"query": 2, "head": 0, "chart": "weights"}}
    at.run()
    assert at.markdown[0].value == "q=2 h=0"


def test_revision_names_what_a_board_draws():
    """The board skips a render whose revision it has drawn: the revision must change with
    any figure, link, column width, group or text scale, and only then."""
    w = np.array([[0.2, 0.8], [0.5, 0.5]])
    fig = viz.heatmaps.attention_figure(w, what="weights", labels=["a", "b"], layout="rows")
    fig2 = viz.heatmaps.attention_figure(w[::-1], what="weights", labels=["a", "b"], layout="rows")
    base = board.payload([("w", fig, board.link_attn(0))])
    rev = board.revision(base, [1], "page", 1.0)
    assert rev == board.revision(board.payload([("w", fig, board.link_attn(0))]), [1], "page", 1.0)
    others = [
        board.revision(board.payload([("w", fig2, board.link_attn(0))]), [1], "page", 1.0),
        board.revision(board.payload([("w", fig, board.link_attn(1))]), [1], "page", 1.0),
        board.revision(board.payload([("v", fig, board.link_attn(0))]), [1], "page", 1.0),
        board.revision(base, [2], "page", 1.0),
        board.revision(base, [1], "other", 1.0),
        board.revision(base, [1], "page", 1.5),
    ]
    assert len({rev, *others}) == len(others) + 1


def test_chart_modules_are_files_of_the_board_folder():
    assert board.chart_modules("") == [
        m for m in board.CHART_MODULES if (board.STATIC / m).is_file()
    ]
    assert board.chart_modules("example_module.js")[-1] == "example_module.js"
    assert "nope.js" not in board.chart_modules("nope.js")  # absent: not loaded
    for bad in ("../x.js", "https://cdn.example/x.js", "x.mjs", "X.js"):
        with pytest.raises(ValueError, match="expected a board module file name"):
            board.chart_modules(bad)


def test_each_chart_names_its_role_for_the_click_value():
    w = np.array([[0.2, 0.8], [0.5, 0.5]])
    s_fig = viz.heatmaps.attention_figure(w, what="scores", labels=["a", "b"])
    w_fig = viz.heatmaps.attention_figure(w, what="weights", labels=["a", "b"])
    entries = board.payload(
        [
            ("s", s_fig, board.link_attn(0)),
            ("w", w_fig, board.link_attn(0, weights=True)),
            ("w2", w_fig, board.link_attn(0)),  # weights told by its builder (layout.meta)
            ("m", s_fig, board.link_attn(0, role="masked scores")),
            # the title is not read: scores titled with "weights" stay scores
            (
                "s2",
                viz.heatmaps.attention_figure(w, what="scores", title="weights?"),
                board.link_attn(0),
            ),
            ("d", viz.compare.difference_figure(w, w.T, what="weights"), board.link_attn(None)),
            ("b", s_fig, board.link_bars(0)),
            ("x", s_fig, None),
        ]
    )
    roles = {e["key"]: e["role"] for e in entries}
    assert roles == {
        "s": "scores",
        "w": "weights",
        "w2": "weights",
        "m": "masked scores",
        "s2": "scores",
        "d": "weights",
        "b": "bars",
        "x": "x",
    }
    assert entries[0]["title"] == board._title(s_fig) and entries[0]["title"]


def test_a_heatmaps_axes_travel_in_parts_not_as_text_to_split():
    """The board reads an axis's noun, its shorter forms and its two-line forms from the
    figure's layout.meta (viz.style.AxisTitle), the same for every builder of the matrix."""
    w = np.array([[0.2, 0.8], [0.5, 0.5]])
    for layout, (x_noun, y_noun) in {"rows": ("key", "query"), "columns": ("query", "key")}.items():
        fig = viz.heatmaps.attention_figure(w, what="weights", layout=layout)
        [entry] = board.payload([("w", fig, board.link_attn(0, layout, weights=True))])
        axes = entry["figure"]["layout"]["meta"]["axes"]
        assert (axes["xaxis"]["noun"], axes["yaxis"]["noun"]) == (x_noun, y_noun)
        forms = {k: [f"{a['head']} — {r}" if r else a["head"] for r in a["rests"]]
                 for k, a in axes.items()}  # fmt: skip
        assert fig.layout.xaxis.title.text == forms["xaxis"][0]
        assert fig.layout.yaxis.title.text in forms["yaxis"]
        diff = viz.compare.difference_figure(w, w.T, what="weights", layout=layout)
        assert diff.layout.meta["axes"] == fig.layout.meta["axes"]
    rests = viz.heatmaps.QUERY_ROWS.meta()["rests"]
    assert rests == ["rows = tokens (PyTorch)", "rows = tokens", ""]
    assert viz.heatmaps.QUERY_ROWS.forms() == [
        "query i (row) — rows = tokens (PyTorch)",
        "query i (row) — rows = tokens",
        "query i (row)",
    ]


def test_every_titled_axis_of_every_figure_says_what_it_counts():
    """The board's tables and keyboard announcements take an axis's noun from
    layout.meta.axes (table.js nounOf), never from its title: every builder sends one for
    each titled axis (tests/figure_catalogue.py: every builder of attnviz.viz)."""
    from tests.figure_catalogue import catalogue

    missing = []
    for name, fig in catalogue().items():
        layout = fig.to_plotly_json()["layout"]
        meta = layout.get("meta") if isinstance(layout.get("meta"), dict) else {}
        axes = meta.get("axes", {})
        for key, axis in layout.items():
            if not (key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict)):
                continue
            title = axis.get("title")
            text = title.get("text") if isinstance(title, dict) else title
            if text and not (axes.get(key) or {}).get("noun"):
                missing.append(f"{name} {key} {text!r}")
    assert not missing, missing


def test_a_boards_data_goes_as_compact_utf8_json_bytes():
    """``encode``: what a board sends, read back by ``decode``; a Chinese or Arabic title
    is its UTF-8 (3 and 2 bytes a letter), not Streamlit's 6-byte ``\\uXXXX`` escapes, and
    no spaces after the separators."""
    from attnviz.ui.board import decode, encode

    data = {"figures": [{"title": "注意力权重", "label": "أوزان الانتباه", "z": [0.5, 1]}]}
    raw = encode(data)
    assert isinstance(raw, bytes) and decode(raw) == data
    assert b"\\u" not in raw and b", " not in raw and b": " not in raw
    assert "注意力权重".encode() in raw and "أوزان الانتباه".encode() in raw

    assert len(raw) < len(json.dumps(data).encode())
