"""The board's one overlay hook: what a page's chart shows (:class:`Overlay`), and the
one provider that may draw on it (:func:`overlay_provider`). ``board(..., overlays={chart
key: Overlay(...)})`` and ``head_board`` apply it; :mod:`attnviz.ui` registers the class
overlay (:func:`attnviz.ui.predict.class_overlay`: a live class's revealed answer outlined
on the teacher's projector), so that no page imports the classroom's chart side."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import plotly.graph_objects as go

Charts = Sequence[tuple[str, go.Figure, dict | None]]


@dataclass(frozen=True)
class Overlay:
    """What a page's chart is, for an overlay drawn on it (a live class's revealed answer,
    outlined on the teacher's projector): the page's slug in :data:`attnviz.ui.pages.PAGES`,
    the ``view`` (what makes the chart: the settings, a step), the ``head`` it shows, its
    ``layout`` and ``n`` tokens, which ``chart`` of a page's pair it is (0 or 1), and the
    span of a row outline along the other axis (default: the N keys)."""

    page: str
    view: Any
    head: int = 0
    layout: str = "rows"
    n: int = 0
    chart: int = 0
    span: tuple[float, float] | None = None


#: Draws an overlay on a figure: ``paint(figure, overlay) -> figure``.
Painter = Callable[[go.Figure, Overlay], go.Figure]
#: The one overlay provider: ``provider(page, view)`` returns the painter of that page's view
#: (None: nothing to draw). :func:`overlay_provider` sets it (``attnviz.ui`` registers the
#: class overlay, :func:`attnviz.ui.predict.class_overlay`).
_PROVIDER: list[Callable[[str, Any], Painter | None]] = []


def overlay_provider(provider: Callable[[str, Any], Painter | None]) -> None:
    """Set the overlay provider (replacing the one before): the only way an overlay reaches
    a chart, so that a page names its chart (:class:`Overlay`) and never the classroom."""
    _PROVIDER[:] = [provider]


def painters(overlays: Mapping[str, Overlay] | None) -> dict[str, tuple[Overlay, Painter]]:
    """The provider's painter of each chart key of ``overlays`` that has something to draw
    (one provider call per page and view)."""
    if not overlays or not _PROVIDER:
        return {}
    found: dict[tuple[str, str], Painter | None] = {}
    out = {}
    for key, o in overlays.items():
        which = (o.page, repr(o.view))
        if which not in found:
            found[which] = _PROVIDER[0](o.page, o.view)
        if found[which] is not None:
            out[key] = (o, found[which])
    return out


def overlaid(
    charts: Charts, paint: Mapping[str, tuple[Overlay, Painter]], head: int | None = None
) -> Charts:
    """``charts`` with each figure of ``paint`` (:func:`painters`) painted; ``head``: the
    head those charts show (a :func:`head_board`'s build), in place of the overlay's."""
    if not paint:
        return charts
    out = []
    for key, fig, link in charts:
        if key in paint:
            o, draw = paint[key]
            fig = draw(fig, o if head is None else replace(o, head=head))
        out.append((key, fig, link))
    return out


def attach(
    overlays: Mapping[str, Overlay],
    charts: Charts,
    build: Callable[[int], Charts] | None,
    head: int,
) -> tuple[Charts, Callable[[int], Charts] | None]:
    """A board's ``charts`` and ``build`` (a :func:`~attnviz.ui.board.head_board`'s: head ->
    its charts, or None) with ``overlays`` drawn; a build's charts, the prefetched heads'
    too, each with the head it shows (``head``: the one on screen)."""
    paint = painters(overlays)
    if not paint:
        return charts, build
    if build is None:
        return overlaid(charts, paint), None
    return overlaid(charts, paint, head=head), lambda h: overlaid(build(h), paint, head=h)
