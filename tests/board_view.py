"""Read the charts of the attnviz board (``attnviz.ui.board``) in an AppTest run.

Each board is a Streamlit component; its JSON arguments hold the figures as plotly JSON
(``figures`` = [{key, figure, link, label}]), so the checks of figure content read the same
dicts ``st.plotly_chart`` used to carry.
"""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def board_entries(at: AppTest) -> dict[str, dict]:
    """Chart key -> the board's entry for it: ``figure`` (plotly JSON), ``link``, ``label``
    and ``board`` (the component's key)."""
    out: dict[str, dict] = {}
    for el in at.get("component_instance"):
        args = json.loads(el.proto.json_args or "{}")
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
    for el in at.get("component_instance"):
        args = json.loads(el.proto.json_args or "{}")
        if "name" in args:
            out[args["name"]] = args
    return out


def prefetched(at: AppTest) -> dict[str, dict]:
    """The other heads' charts sent by the page's hidden prefetch board, per board name
    (empty when nothing was prefetched)."""
    found = [
        json.loads(el.proto.json_args or "{}").get("prefetch")
        for el in at.get("component_instance")
    ]
    found = [p for p in found if p is not None]
    assert len(found) <= 1, "more than one prefetch board"
    return found[0]["boards"] if found else {}
