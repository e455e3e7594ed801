"""What hovering and clicking a board's chart links to (the ``link`` of a chart in
:func:`attnviz.ui.board.board`): an attention matrix, a per-token matrix, a query's bars.
Plain dicts, read by the board's JavaScript (``board.js``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["link_attn", "link_bars", "link_tokens"]


def link_attn(
    head: int | None,
    layout: str = "rows",
    *,
    weights: bool = False,
    select: bool = True,
    heads: Sequence[int] | None = None,
    role: str | None = None,
    arithmetic: dict | None = None,
) -> dict:
    """An attention matrix (scores or weights) of head ``head``: hovering links (i, j),
    a click selects query i (and the head). ``weights=True``: its rows feed the bars.
    ``heads``: a figure with one heatmap per head (small multiples), trace t showing head
    ``heads[t]``. ``role``: what the chart shows, in the click value's ``chart`` (default:
    "weights" or "scores", see :func:`payload`). ``arithmetic``: what the browser needs to
    work out a clicked cell (``attnviz.ui.cell.cell_data``; board module ``cell.js``)."""
    spec = {"kind": "attn", "orient": layout, "head": head, "weights": weights, "select": select}
    if heads is not None:
        spec["heads"] = [int(h) for h in heads]
    if role is not None:
        spec["role"] = role
    if arithmetic is not None:
        spec["arithmetic"] = arithmetic
    return spec


def link_tokens(head: int | None, layout: str = "rows", follow: str = "query") -> dict:
    """A per-token matrix (X, Q, K, V, an output): its token ``follow`` ("query" or
    "key") of a hovered attention cell is highlighted; hovering it highlights that token."""
    return {
        "kind": "tokens",
        "axis": "y" if layout == "rows" else "x",
        "follow": follow,
        "head": head,
    }


def link_bars(head: int | None) -> dict:
    """The weights bar chart of one query: follows the hovered row of the weights."""
    return {"kind": "bars", "head": head}
