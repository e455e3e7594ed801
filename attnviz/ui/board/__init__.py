"""The plotly board: charts redrawn in place (``Plotly.react``) and linked across the page.

``st.plotly_chart`` hashes the whole figure into its element id, so every changed chart is
a new element that the browser mounts and draws from scratch (~300 ms a page). A board is
one Streamlit component (components v2, ``attnviz.board``) with a stable ``key``: it renders
in the app's own document (no iframe), its plot divs stay across reruns and each rerun only
sends the new figures, which plotly.js redraws in place.

The front end is the folder ``attnviz/ui/board/js/`` (ES modules, no build step; ``board.js`` is
the entry, its top comment the map), served by Streamlit from the installed project
(``[tool.streamlit.component]`` in ``pyproject.toml``). plotly.js is a bundle of
plotly.js's core with the bar and heatmap traces, vendored in ``attnviz/ui/board/js/vendor/`` (the
version the installed plotly package expects, checked; :mod:`attnviz.ui.board.assets`), served
at a content-versioned URL and
loaded once per browser tab, shared by every board of every page. Nothing from a CDN.

The figures travel as plotly JSON (plotly's own encoder, numpy arrays as base64 typed
arrays, ``bdata``).

Linking (in the browser, no rerun): each chart may carry a ``link`` spec
(:func:`link_attn`, :func:`link_tokens`, :func:`link_bars`). Hovering cell (i, j) of an
attention matrix highlights row i of the query-side matrices (Q, the output), row j of the
key-side ones (K, V), cell (i, j) of the other attention matrices and draws row i of the
weights in the bar chart; every board of the page hears it. A click on an attention cell
returns ``{"query": i, "key": j, "head": h, "chart": role, "chart_key": key, "index":
position in its board, "title": title}`` as the board's value (read it with ``.get``);
``select_into`` moves it into the query (and head) widgets' state before they are drawn, in
an ``on_change`` callback.

Session-state keys read by every board: ``board_text_scale`` (float, default 1): bigger
chart text, e.g. for a presenter mode; ``board_present`` (bool): the charts are on a slide
(the presenter view): square matrices get square cells and fill the screen below them, no
download buttons and no mode bar; ``board_look``: a lesson's look (:data:`LOOK_KEY`).

Fitting (in the browser, ``attnviz/ui/board/js/fit.js``): a board narrower than 640 px (a phone)
stacks its charts one per row at full width; titles wrap rather than being cut; a legend
goes under a narrow chart; cell values are dropped where they do not fit; on a touch
screen and in a stacked board plotly's mode bar is off (the downloads are the buttons under
each chart) and a drag scrolls the page.

Beside this file: ``assets`` (the vendored plotly.js bundle, its check and its
content-versioned URL), ``overlays`` (the one overlay hook: ``Overlay``,
``overlay_provider``, ``attach``), ``links`` (what hovering and clicking a chart links
to: ``link_attn``, ``link_tokens``, ``link_bars``), ``__main__`` (``python -m
attnviz.ui.board`` puts the bundle in place), ``shell`` (the pages' HTML that ``serve.py``
serves: Streamlit's, asking for plotly.js as it loads), ``js/`` (the ES modules;
``board.js``'s top comment is their map).
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from attnviz import i18n
from attnviz.ui import streamlit_private
from attnviz.ui.board.assets import STATIC, board_plotly, content_digest, script_version
from attnviz.ui.board.links import link_attn as link_attn  # the board's API: ui.board.link_*
from attnviz.ui.board.links import link_bars as link_bars
from attnviz.ui.board.links import link_tokens as link_tokens
from attnviz.ui.board.overlays import Overlay, Painter, attach, overlay_provider
from attnviz.viz.look import chart_role, outlined
from attnviz.viz.style import WEIGHT_RANGES, weight_range

__all__ = ["STATIC", "Overlay", "Painter", "board_plotly", "overlay_provider"]

# fmt: off
FILES = (
    "board.js", "draw.js", "fit.js", "rtl.js", "values.js", "link.js", "headswitch.js",
    "downloads.js", "plotly_loader.js", "stepkeys.js", "wide.js", "navlinks.js", "figure.js",
)
# fmt: on
CSS = "board.css"
# Per-chart modules (``attach(chartElement, figure, api)``, see board.js) loaded when present
# in js/: data tables and keyboard navigation of the cells, a clicked cell worked out.
CHART_MODULES = ("table.js", "keys.js", "tools.js", "cell.js")
TEXT_SCALE_KEY = "board_text_scale"
PRESENT_KEY = "board_present"  # True in the presenter view: slides (ui.present.setup)
#: px more kept under a slide's charts, for what the page draws under them (a lesson's
#: question: ui.tour.bar); 0 or missing: the strip of buttons alone
BELOW_KEY = "board_below"
# A lesson stop's look ({chart, cell, row}) outlined where named (ui.lesson_look; payload)
LOOK_KEY = "board_look"
WEIGHT_RANGE_KEY = "wrange"  # the sidebar's weights' colour range (ui.controls)
NAME = "attnviz.board"  # <project name>.<component name> of pyproject.toml
# Streamlit's markup the board's JavaScript needs (a widget's element, the head picker's
# value), sent as data: no board module names it (attnviz.ui.streamlit_private)
DOM = streamlit_private.BOARD_DOM


def _plotly_src() -> dict:
    """Where the board finds plotly.js (relative to its modules) and the version it must be."""
    js = board_plotly()
    return {
        "src": f"vendor/{js.name}?v={content_digest(js)}",
        "name": js.name,
        "version": script_version(js),
    }


PLOTLY = _plotly_src()


def chart_modules(extra: str | None = None) -> list[str]:
    """The per-chart modules present in attnviz/ui/board/js/: :data:`CHART_MODULES`, then those
    named in ``extra`` (default ``$ATTNVIZ_BOARD_MODULES``, comma-separated file names, e.g.
    ``example_module.js`` for the browser tests)."""
    if extra is None:
        extra = os.environ.get("ATTNVIZ_BOARD_MODULES", "")
    names = [*CHART_MODULES, *(n.strip() for n in extra.split(",") if n.strip())]
    for n in names:
        if not re.fullmatch(r"[a-z0-9_]+\.js", n):
            raise ValueError(f"expected a board module file name like 'table.js', got {n!r}")
    return [n for n in dict.fromkeys(names) if (STATIC / n).is_file()]


MODULES = chart_modules()


@functools.cache
def _register() -> Callable[..., Any]:
    """The component, registered on first use (Streamlit finds its files when its runtime
    starts: there is none at import, e.g. in a test)."""
    # One stylesheet in the document (board.css: the board's rules under .attnviz-board, its
    # modules' under their attnviz-* classes; no module makes a <style> of its own) rather
    # than a shadow root: plotly.js puts its own styles (mode bar, hover labels) in the
    # document's head, which a shadow root would not see.
    try:
        return st.components.v2.component(NAME, js="board.js", css=CSS, isolate_styles=False)
    except Exception as exc:  # the project is not installed: Streamlit cannot find its files
        raise RuntimeError(
            f"the chart board's files (attnviz/ui/board/js/) are served from the installed "
            f"project; expected the component {NAME!r} declared by an installed attnviz, "
            f"got: {exc}. Run `pip install -e .` in the project folder."
        ) from exc


def encode(data: dict) -> bytes:
    """A board's data as it goes to the browser: compact UTF-8 JSON, as bytes (components
    v2 forwards bytes as they are; ``board.js`` parses them). Streamlit's own encoding of a
    dict (``json.dumps`` with its defaults) writes ", " and ": " and every non-ASCII letter
    as a 6-byte ``\\uXXXX``: a slider move sent 24 % more in Arabic than in English, 14 %
    more in Chinese (issue 46), and it dumped the data a second time, sorted, for the
    element's identity (bytes are hashed as they are)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def decode(payload: bytes | str | None) -> dict:
    """The data :func:`encode` made (a board element's ``proto.bytes``; its ``proto.json``
    read too), for the tests and benchmarks that read what a run sent."""
    return json.loads(payload or "{}")


def _mount(key: str, data: dict, on_change: Callable[[], None] | None = None) -> Any:
    """Mount (or update) the board ``key`` with ``data``; returns its selection or None."""
    result = _register()(
        key=key,
        data=encode(data),
        default={"selection": None},
        on_selection_change=on_change or (lambda: None),
    )
    return result.get("selection") if isinstance(result, Mapping) else None


# --------------------------------------------------------------------------- drawing


def _title(fig: go.Figure) -> str:
    t = re.sub(r"<[^>]*>", " ", (fig.layout.title.text or "").replace("<br>", " · "))
    return " ".join(html.unescape(t).split()) or "chart"


def _role(key: str, fig: go.Figure, link: dict | None) -> str:
    """What a chart shows, for the click value: ``link["role"]`` when the link names it,
    else for an attention matrix "weights" (``weights=True`` or small multiples) or the
    role its builder put in ``layout.meta["role"]`` (default "scores"); "bars"; or the
    chart's key. Named by whoever builds the chart, never read from its title."""
    if link and link.get("role"):
        return str(link["role"])
    if link and link.get("kind") == "attn":
        if link.get("weights") or link.get("heads") is not None:
            return "weights"
        meta = fig.layout.meta
        return str(meta.get("role") or "scores") if isinstance(meta, dict) else "scores"
    if link and link.get("kind") == "bars":
        return "bars"
    return key


def figure_json(fig: go.Figure) -> dict:
    """The figure as plotly JSON (numpy arrays as base64 typed arrays, ``bdata``)."""
    return _figure_and_digest(fig)[0]


def _figure_and_digest(fig: go.Figure) -> tuple[dict, str]:
    """:func:`figure_json` and a digest of it, taken from plotly's own JSON text (compact,
    its keys in the builder's order, the same for the same figure): not dumped again, sorted,
    to be digested (issue 46: a few ms of every rerun)."""
    text = pio.to_json(fig, validate=False, engine="json")
    digest = hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
    return json.loads(text), digest


def payload(charts: Sequence[tuple[str, go.Figure, dict | None]]) -> list[dict]:
    """The board's figures; each with ``rev``, a digest of its figure, so that the board
    redraws only the charts that changed (X does not change with the head)."""
    out = []
    mode = st.session_state.get(WEIGHT_RANGE_KEY, "fixed")
    mode = mode if mode in WEIGHT_RANGES else "fixed"
    look = st.session_state.get(LOOK_KEY)
    for key, fig, link in charts:
        if mode != "fixed":  # the sidebar's weights' colour range (?wrange=matrix)
            fig = weight_range(go.Figure(fig.to_plotly_json(), _validate=False), mode)  # a copy
        spec, rev = _figure_and_digest(fig)
        title = _title(fig)  # once: plotly's property access and the regex, per figure
        if look and chart_role(key, spec) == look.get("chart"):  # a lesson stop's look
            spec = outlined(spec, look.get("cell"), look.get("row"))
            rev = _digest_of([rev, look])
        out.append(
            {
                "key": key,
                "figure": spec,
                "link": link,
                "title": title,
                "role": _role(key, fig, link),
                "rev": rev,
            }
        )
    return out


def _digest_of(obj: Any) -> str:
    h = hashlib.blake2b(digest_size=12)
    h.update(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def revision(figs: list[dict], *parts: Any) -> str:
    """A digest of everything a board draws: Streamlit re-sends a component's arguments
    (e.g. after a frame-height change), and the board skips a render whose revision it has
    already drawn. Made of the figures' own digests (:func:`payload`) and the shown
    language (the board's own words: tables, announcements)."""
    brief = [{k: v for k, v in f.items() if k != "figure"} for f in figs]  # "rev" stands in
    return _digest_of([brief, parts, i18n.current()])


def _move_selection(
    board_key: str, query_key: str | None, head_key: str | None, n: int, heads: int
) -> None:
    v = st.session_state.get(board_key)
    if isinstance(v, Mapping) and "selection" in v:  # the component's state
        v = v["selection"]
    if not isinstance(v, Mapping):
        return
    q, h = v.get("query"), v.get("head")
    if query_key and isinstance(q, (int, float)) and 0 <= int(q) < n:
        st.session_state[query_key] = int(q)
    if head_key and isinstance(h, (int, float)) and 0 <= int(h) < heads:
        st.session_state[head_key] = int(h)


# Head switch in the browser. A board drawn with ``per_head`` (a function head -> its
# charts) registers itself; :func:`prefetch_heads`, called at the end of the page part,
# builds the charts of every other head of those boards and sends them in one hidden
# element, after the visible charts (which are therefore not delayed). When the page's head
# picker then changes, each board draws the new head's charts at once, in the browser, and
# the rerun that follows brings the same revision, which the board skips.
# - Only while the user flips through the heads: from the run a head change causes until
#   the view changes. An N move, the core gesture, never pays for them (measured: +30 ms
#   at N=6 and +230 ms of server time at N=16 with 4 heads when they were always sent).
# - Only while they stay small: at most ALT_MAX_HEADS heads and ALT_MAX_CELLS attention
#   cells over the other heads (2 heads up to N = 77, 4 heads up to N = 44, 8 heads up to
#   N = 29), and ALT_MAX_BYTES of JSON. Otherwise a head change reruns the page part.
ALT_MAX_HEADS = 16
ALT_MAX_CELLS = 6000
ALT_MAX_BYTES = 256 * 1024
_REGISTRY_KEY = "board_per_head"
_HEAD_SEEN_KEY = "board_head_seen"
_FLIPPING_KEY = "board_flipping"

Charts = Sequence[tuple[str, go.Figure, dict | None]]


def board(
    key: str,
    charts: Charts,
    *,
    columns: Sequence[float] | None = None,
    group: str = "page",
    select_into: tuple[str | None, str | None] | None = None,
    n: int = 0,
    heads: int = 1,
    per_head: Callable[[int], Charts] | None = None,
    head: int = 0,
    reveal: str | None = None,
    fit_screen: int = 0,
    overlays: Mapping[str, Overlay] | None = None,
) -> Any:
    """Draw ``charts`` (``(chart key, figure, link spec or None)``) side by side in one
    board that keeps its plot divs across reruns.

    ``columns``: relative widths (default: equal, one per chart). ``select_into=(query
    widget key, head widget key)``: a click on a linked attention cell sets those widgets
    (query in 0..n-1, head in 0..heads-1) before they are drawn on the rerun it causes.
    ``per_head``: ``charts`` are ``per_head(head)`` (see :func:`head_board`), and
    :func:`prefetch_heads` may send the other heads' charts so that a head change draws at
    once. ``reveal``: a token new to this board (e.g. a counter) scrolls it into view once,
    on the run that sends it (a button far below it changed what it shows: the model
    pages' "Open layer 19, head 7"); not part of the revision. ``fit_screen`` (px, 0:
    off): the board's matrices fill the screen's height less that many px (shared among
    its rows of charts; a control above them, such as a slider, stays on the screen with
    them), square cells as on a slide (``fit.js`` ``presenterFill``). ``overlays``: chart
    key -> :class:`Overlay`, what the overlay provider may draw on that chart (a revealed
    answer). Returns the last selection (or None).
    """
    on_change = None
    if select_into is not None:
        on_change = functools.partial(_move_selection, key, *select_into, n, heads)
    if overlays:  # the overlay hook (board/overlays.py): drawn on the charts it names
        charts, per_head = attach(overlays, charts, per_head, head)
    figs = payload(charts)
    cols = list(columns or [1] * len(charts))
    scale = float(st.session_state.get(TEXT_SCALE_KEY, 1.0))
    present = bool(st.session_state.get(PRESENT_KEY, False))
    # a board fitted to the screen is another drawing (boards drawn per head never are:
    # head_alternatives' revisions leave it out)
    rev = revision(figs, cols, group, scale, present, *([fit_screen] if fit_screen else []))
    if per_head is not None:
        registry = st.session_state.setdefault(_REGISTRY_KEY, {})
        registry[key] = (per_head, int(head), rev, cols, group, scale, present)
    data = {
        "figures": figs,
        "columns": cols,
        "group": group,
        "text_scale": scale,
        "present": present,
        "below": int(st.session_state.get(BELOW_KEY, 0)) if present else 0,
        "fit_screen": int(fit_screen),
        "rev": rev,
        "name": key,
        "watch": "head" if per_head is not None else None,
        "plotly": PLOTLY,
        "modules": MODULES,
        "dom": DOM,
    }
    if reveal:
        data["reveal"] = str(reveal)
    return _mount(key, data, on_change)


def head_board(key: str, build: Callable[[int], Charts], head: int, **kwargs: Any) -> Any:
    """A :func:`board` of one head's charts, ``build(head)``, whose other heads
    :func:`prefetch_heads` may send (``kwargs``: :func:`board`'s; its ``overlays`` are
    drawn for the head each chart shows, the prefetched ones too)."""
    return board(key, build(head), per_head=build, head=head, **kwargs)


def head_alternatives(num_heads: int, head: int, n: int) -> dict[str, dict]:
    """The other heads' charts of every board registered with ``per_head`` since the last
    call (and forgets them): ``{board key: {"current": head, "current_rev": its revision,
    "values": {str(h): {"figures": [...], "rev": revision}}}}``; empty when too large."""
    registry = st.session_state.pop(_REGISTRY_KEY, {})
    if num_heads < 2 or num_heads > ALT_MAX_HEADS or (num_heads - 1) * n * n > ALT_MAX_CELLS:
        return {}
    out = {}
    for key, (build, current, rev, cols, group, scale, present) in registry.items():
        values = {}
        for h in range(num_heads):
            if h != current:
                figs = payload(build(h))
                rev_h = revision(figs, cols, group, scale, present)
                values[str(h)] = {"figures": figs, "rev": rev_h}
        out[key] = {"current": current, "current_rev": rev, "values": values}
    if len(json.dumps(out, separators=(",", ":"))) > ALT_MAX_BYTES:
        return {}
    return out


def flipping(head: int, view_key: str) -> bool:
    """True from the run a head change caused until the view (``view_key``) changes."""
    seen = st.session_state.get(_HEAD_SEEN_KEY)
    st.session_state[_HEAD_SEEN_KEY] = head
    if seen is not None and seen != head:
        st.session_state[_FLIPPING_KEY] = view_key
    return st.session_state.get(_FLIPPING_KEY) == view_key


#: The hidden boards' keys, from the one list of their names that the page's CSS hides
#: (:data:`streamlit_private.HIDDEN_BOARDS`): the preload (one per run, after the page's CSS:
#: app.py), the other heads' charts (one per page run), the presenter view's arrow keys.
PRELOAD_KEY, PREFETCH_KEY, STEP_KEYS_KEY = streamlit_private.HIDDEN_BOARDS


def preload_plotly(locale: dict | None = None) -> None:
    """A hidden board, every run's element after the page's CSS (``app.py``): starts
    loading plotly.js (its download and compile overlap the rest of the first run) and
    gives the page the shown language (``locale``: :func:`attnviz.ui.lang.board_locale`).
    Draws nothing."""
    # hidden by its key (streamlit_private.HIDDEN_BOARDS, in the page's CSS): no box around
    # it and no style element of its own, two elements less a run (issue 46)
    data = {"preload": {**PLOTLY, "modules": MODULES}, "dom": DOM, "locale": locale}
    _mount(PRELOAD_KEY, data)


def prefetch_heads(num_heads: int, head: int, n: int, view_key: str) -> None:
    """At the end of a page part drawn with ``per_head`` boards: send the other heads'
    charts in a hidden board (see :func:`head_alternatives`) while the user flips through
    the heads of this view (``view_key``, e.g. the settings' repr), else an empty one."""
    if flipping(head, view_key):
        boards = head_alternatives(num_heads, head, n)
    else:
        st.session_state.pop(_REGISTRY_KEY, None)
        boards = {}
    data = {  # hidden by its key (streamlit_private.HIDDEN_BOARDS): draws nothing, no space
        "figures": [],
        "columns": [1],
        "group": "",
        "text_scale": 1.0,
        "rev": revision([], sorted((k, b["current_rev"]) for k, b in boards.items())),
        "prefetch": {"boards": boards},
        "plotly": PLOTLY,
        "dom": DOM,
        "modules": [],
    }
    _mount(PREFETCH_KEY, data)


def step_keys(next_key: str, prev_key: str) -> None:
    """A hidden board under the presenter view's step bar: the arrow keys (Right, Left)
    press the buttons of widget keys ``next_key`` / ``prev_key``, unless the focus is in a
    control that uses the arrow keys itself (``attnviz/ui/board/js/stepkeys.js``)."""
    # hidden by its key (streamlit_private.HIDDEN_BOARDS): draws nothing, takes no space
    _mount(STEP_KEYS_KEY, {"step_keys": {"next": next_key, "prev": prev_key}, "dom": DOM})
