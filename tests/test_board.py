"""The board's Python side: the served folder, the payload, the selection callback."""

from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path

import numpy as np
import plotly
from streamlit.testing.v1 import AppTest

from attnviz import figures

board = importlib.import_module("attnviz.ui.board")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_served_folder_holds_the_installed_plotly_js_and_the_board(tmp_path):
    d = board.served_dir(tmp_path)
    installed = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    assert _sha(d / "plotly.min.js") == _sha(installed)
    for name in board.FILES:
        assert (d / name).read_bytes() == (board.STATIC / name).read_bytes()
    # the page loads the local copy, nothing from the network
    page = (d / "index.html").read_text()
    assert '<script src="plotly.min.js"></script>' in page
    for name in board.FILES:
        text = (d / name).read_text()
        assert "http://" not in text and "https://" not in text, name
    # a second call reuses the folder
    assert board.served_dir(tmp_path) == d


def test_a_folder_writable_by_others_is_never_served(tmp_path):
    d = board.served_dir(tmp_path)
    (d / "board.js").write_text("alert('not ours')")
    os.chmod(d, 0o777)
    d2 = board.served_dir(tmp_path)
    assert d2 != d
    assert (d2 / "board.js").read_bytes() == (board.STATIC / "board.js").read_bytes()


def test_payload_keeps_typed_arrays_and_labels():
    fig = figures.attention_figure(np.full((3, 3), 1 / 3), what="weights", labels=["a", "b", "c"])
    [entry] = board.payload([("w", fig, board.link_attn(0, "rows", weights=True))])
    z = entry["figure"]["data"][0]["z"]
    assert isinstance(z, dict) and "bdata" in z and z["dtype"] == "f4"
    assert entry["label"] == "Chart: Weights A = softmax(S)"
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


def test_unwritable_folders_fall_back_then_give_a_clear_message(tmp_path, monkeypatch):
    real_build = board._build
    tried = []

    def build(base, js):
        tried.append(base)
        if base != tmp_path / "home" / ".cache" / "attnviz":
            raise PermissionError(13, "Permission denied", str(base))
        return real_build(base, js)

    monkeypatch.setattr(board, "_build", build)
    monkeypatch.delenv("ATTNVIZ_BOARD_DIR", raising=False)
    monkeypatch.setattr(board.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    monkeypatch.setattr(board.Path, "home", staticmethod(lambda: tmp_path / "home"))
    d = board.served_dir()  # the temp dir fails, ~/.cache/attnviz works
    assert tried == [tmp_path / "tmp", tmp_path / "home" / ".cache" / "attnviz"]
    assert (d / "plotly.min.js").is_file()
    monkeypatch.setenv("ATTNVIZ_BOARD_DIR", str(tmp_path / "nope"))
    try:
        board.served_dir()
    except RuntimeError as exc:
        assert "ATTNVIZ_BOARD_DIR" in str(exc) and "Permission denied" in str(exc)
    else:
        raise AssertionError("no error when no folder is writable")


def test_revision_names_what_a_board_draws():
    """The board skips a render whose revision it has drawn: the revision must change with
    any figure, link, column width, group or text scale, and only then."""
    w = np.array([[0.2, 0.8], [0.5, 0.5]])
    fig = figures.attention_figure(w, what="weights", labels=["a", "b"], layout="rows")
    fig2 = figures.attention_figure(w[::-1], what="weights", labels=["a", "b"], layout="rows")
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
