"""attnviz.ui.board.links: what a board's chart links to, as board.js reads it."""

from __future__ import annotations

from attnviz.ui.board import link_attn, link_bars, links


def test_attn_link_holds_only_what_was_given():
    plain = links.link_attn(2, "columns")
    assert plain == {
        "kind": "attn",
        "orient": "columns",
        "head": 2,
        "weights": False,
        "select": True,
    }
    full = links.link_attn(None, weights=True, select=False, heads=(0, 3), role="wq")
    assert full["heads"] == [0, 3] and full["role"] == "wq"
    assert full["weights"] is True and full["select"] is False and "arithmetic" not in full


def test_tokens_follow_the_axis_of_their_layout():
    assert links.link_tokens(1)["axis"] == "y"
    assert links.link_tokens(1, "columns", follow="key") == {
        "kind": "tokens",
        "axis": "x",
        "follow": "key",
        "head": 1,
    }


def test_bars_and_the_boards_names_are_the_same_functions():
    assert links.link_bars(0) == {"kind": "bars", "head": 0}
    assert link_attn is links.link_attn and link_bars is links.link_bars
