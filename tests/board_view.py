"""Read the charts of the attnviz board (``attnviz.ui.board``) in an AppTest run.

Each board is a Streamlit component (components v2, ``attnviz.board``); its JSON data
holds the figures as plotly JSON (``figures`` = [{key, figure, link, title}]), so the
checks of figure content read the same dicts ``st.plotly_chart`` used to carry.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from attnviz.ui.board import decode

BOARD = "attnviz.board"


def board_data(el) -> dict:
    """The data of one board element (``ui.board.encode``: UTF-8 JSON bytes)."""
    return decode(el.proto.bytes or el.proto.json)


def _board_data(at: AppTest) -> list[dict]:
    """The JSON data of every board element of the run, in page order."""
    return [board_data(el) for el in at.get("bidi_component") if el.proto.component_name == BOARD]


def board_entries(at: AppTest) -> dict[str, dict]:
    """Chart key -> the board's entry for it: ``figure`` (plotly JSON), ``link``, ``title``
    and ``board`` (the component's key)."""
    out: dict[str, dict] = {}
    for args in _board_data(at):
        for f in args.get("figures", []):
            if f["key"] in out:
                raise AssertionError(f"chart key {f['key']!r} is drawn twice")
            out[f["key"]] = {**f, "board": args.get("name")}
    return out


def figures_of(at: AppTest) -> dict[str, dict]:
    """Chart key -> plotly figure JSON (data, layout) of every chart on the page."""
    return {k: e["figure"] for k, e in board_entries(at).items()}


def board_args(at: AppTest) -> dict[str, dict]:
    """Board name (its key) -> the component's JSON arguments (figures, rev, watch ...)."""
    out: dict[str, dict] = {}
    for args in _board_data(at):
        if "name" in args:
            out[args["name"]] = args
    return out


def prefetched(at: AppTest) -> dict[str, dict]:
    """The other heads' charts sent by the page's hidden prefetch board, per board name
    (empty when nothing was prefetched)."""
    found = [args.get("prefetch") for args in _board_data(at)]
    found = [p for p in found if p is not None]
    assert len(found) <= 1, "more than one prefetch board"
    return found[0]["boards"] if found else {}
