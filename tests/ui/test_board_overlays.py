"""The board's overlay hook (attnviz.ui.board.overlays): the one provider, asked once per
page and view, paints only the charts named, a head_board's charts with their own head;
the app registers the class overlay."""

from __future__ import annotations

import importlib

import numpy as np

from attnviz import viz
from attnviz.ui import predict  # attnviz.ui registers the class overlay
from attnviz.ui.board import overlays

board = importlib.import_module("attnviz.ui.board")  # the package (attnviz.ui.board: a function)


def _charts():
    fig = viz.heatmaps.attention_figure(np.full((3, 3), 1 / 3), what="weights")
    return [("w", fig, None), ("s", fig, None)]


def _marking(calls):
    """A provider that records its calls and paints a figure as (figure, its overlay)."""

    def provider(page, view):
        calls.append((page, view))
        if view == "nothing":
            return None
        return lambda fig, o: (fig, o)

    return provider


def test_the_overlay_provider_paints_only_the_charts_it_is_told(monkeypatch):
    monkeypatch.setattr(overlays, "_PROVIDER", [])
    charts = _charts()
    asked = {"w": overlays.Overlay("playground", "v", head=2)}
    assert overlays.painters(asked) == {}  # no provider: nothing drawn
    calls = []
    overlays.overlay_provider(_marking(calls))
    painted = overlays.overlaid(charts, overlays.painters(asked))
    assert [k for k, _, _ in painted] == ["w", "s"]
    assert painted[0][1] == (charts[0][1], asked["w"])
    assert painted[1][1] is charts[1][1]  # the chart without an overlay is untouched
    assert overlays.painters({"w": overlays.Overlay("playground", "nothing")}) == {}


def test_one_provider_call_per_view_and_the_built_head_wins(monkeypatch):
    monkeypatch.setattr(overlays, "_PROVIDER", [])
    calls = []
    overlays.overlay_provider(_marking(calls))
    # two charts of one view (a pair, e.g. the scaling page's): one call; a list as a view
    view = ("settings", [3, 1, 2])
    o = {
        "w": overlays.Overlay("scaling", view, chart=0),
        "s": overlays.Overlay("scaling", view, chart=1),
    }
    paint = overlays.painters(o)
    assert calls == [("scaling", view)] and set(paint) == {"w", "s"}
    painted = overlays.overlaid(_charts(), paint, head=5)  # a head_board's build of head 5
    assert painted[1][1][1] == overlays.Overlay("scaling", view, head=5, chart=1)
    # the provider is one: a second replaces the first
    overlays.overlay_provider(lambda page, view: None)
    assert overlays.painters(o) == {} and len(calls) == 1


def test_the_app_registers_the_class_overlay():
    assert overlays._PROVIDER[0] is predict.class_overlay and len(overlays._PROVIDER) == 1


def test_a_head_boards_build_paints_each_head_with_its_own(monkeypatch):
    monkeypatch.setattr(overlays, "_PROVIDER", [])
    calls = []
    overlays.overlay_provider(_marking(calls))
    asked = {"w": overlays.Overlay("playground", "v", head=0)}
    charts, build = overlays.attach(asked, _charts(), lambda h: _charts(), head=1)
    assert charts[0][1][1].head == 1 and build(3)[0][1][1].head == 3
    assert len(calls) == 1  # asked once for the board, not per head
    plain = _charts()
    assert overlays.attach({}, plain, None, 0) == (plain, None)
    assert board.Overlay is overlays.Overlay  # the board's names are the hook's
