"""Page helpers: titles, literal user text, notes, charts and the shapes line."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnviz import i18n, viz
from attnviz.i18n import _, ngettext
from attnviz.teaching.token_text import visible
from attnviz.ui import links, streamlit_private
from attnviz.ui.board import Overlay, board
from attnviz.ui.present import link_box, presenting
from attnviz.ui.state import View, current, end_page, page_guard
from attnviz.ui.text import md_text, md_token

__all__ = [
    "PICKER_WIDTH",
    "SMALL_PICKER_WIDTH",
    "chart_row",
    "head_picker",
    "follow_token",
    "index_slider",
    "weights_scale",
    "intro",
    "md_text",
    "model_missing",
    "model_prompt",
    "plot",
    "pooled_note",
    "row",
    "setting_buttons",
    "shape_text",
    "shapes",
    "start",
    "token_select",
]


def intro(title: str, text: str) -> None:
    """Page title and its short plain-language explanation."""
    if not presenting():
        st.title(title)
        st.markdown(text, unsafe_allow_html=True)  # the app's words (text.pointing)
        return
    # the presenter view keeps the screen for the steps: the title and the class link
    c1, c2 = st.columns([3, 1.4], vertical_alignment="top")
    c1.title(title)
    with c2:
        link_box()


def start(title: str, text: str) -> View:
    """The first line of a page that draws the sidebar's view: the guard, the title and its
    explanation; returns the :class:`~attnviz.ui.state.View` of this run, or ends the page
    (the sidebar has shown why) if there is none (:func:`~attnviz.ui.state.end_page`: a
    click queued behind this run still runs)."""
    page_guard()
    intro(title, text)
    view = current()
    if view is None:
        end_page()
    return view


def pooled_note(n: int, hint: str | None = None, exports: bool = True) -> bool:
    """Say so when the N×N heatmaps of this page are drawn in blocks (N above
    ``viz.style.MAX_FULL_HEATMAP_N``); returns whether they are. ``hint``: what shows the
    full matrix (translated text; default "pick a query token to see its full row")."""
    b = viz.style.pool_factor(n)
    if b == 1:
        return False
    nb = math.ceil(n / b)
    hint = _("pick a query token to see its full row") if hint is None else hint
    st.info(
        _(
            "N={n} is drawn as {nb}×{nb} blocks of {b}×{b} tokens (matrices with one row per "
            "token: {nb} blocks of {b} tokens): each cell is the mean of its block's unmasked "
            "values, a block with every cell masked is grey (above "
            "N = {max_n}, one cell per token would be smaller than a "
            "pixel). {hint}; hover or tap a block for its first token."
        ).format(
            n=n, nb=nb, b=b, max_n=viz.style.MAX_FULL_HEATMAP_N, hint=hint[:1].upper() + hint[1:]
        )
        + (" " + _("The CSV and NPZ exports are full size.") if exports else ""),
        icon=":material/grid_view:",
    )
    return True


def plot(
    fig: go.Figure,
    key: str | None = None,
    link: dict | None = None,
    reveal: str | None = None,
    overlay: Overlay | None = None,
) -> None:
    """Draw one plotly figure the same way on every page: a board of one chart
    (:mod:`attnviz.ui.board`: redrawn in place on reruns, PNG downloads at projector
    resolution (1920 px wide) and SVG in its toolbar, optional hover ``link``; a new
    ``reveal`` token scrolls it into view once; ``overlay``: what the board's overlay
    provider may draw on it, a live class's revealed answer)."""
    key = key or f"chart_{hashlib.sha1(str(fig.layout.title.text).encode()).hexdigest()[:8]}"
    overlays = {key: overlay} if overlay is not None else None
    board(f"board_{key}", [(key, fig, link)], reveal=reveal, overlays=overlays)


def chart_row(
    key: str,
    charts: dict[str, go.Figure],
    *,
    caption: str | None = None,
    columns: list[float] | None = None,
    links: dict[str, dict] | None = None,
    overlays: dict[str, Overlay] | None = None,
) -> None:
    """A row of charts side by side (chart key -> figure) in one board, redrawn in place,
    with an optional caption under it; ``links``: chart key -> hover link spec;
    ``overlays``: chart key -> :class:`~attnviz.ui.board.Overlay` (:func:`plot`'s)."""
    links = links or {}
    charts_ = [(k, fig, links.get(k)) for k, fig in charts.items()]
    board(key, charts_, columns=columns, overlays=overlays)
    if caption:
        st.caption(caption)


_FULL_RERUN = "page_full_rerun"  # a setting_buttons click: the whole app reruns


def _set_controls(values: dict[str, Any]) -> None:
    """on_click of a setting button: the sidebar controls take ``values`` (bound to the
    link, so the URL follows) before the widgets are drawn again."""
    for k, v in values.items():
        st.session_state[k] = v
    st.session_state[_FULL_RERUN] = True


def setting_buttons(key: str, options: dict[str, dict[str, Any]], where: Any = st) -> None:
    """Buttons on the page that set sidebar controls (label -> {control key: value}): a
    step that needs a setting (a mask) offers it where it is shown, also on a slide or a
    phone whose sidebar is closed. A click reruns the whole app, also from a fragment
    (the controls' view is computed outside it)."""
    if st.session_state.pop(_FULL_RERUN, False):
        st.rerun(scope="app")
    buttons = row(key, where)  # one block (columns: one block each and one around them)
    for i, (label, values) in enumerate(options.items()):
        buttons.button(label, key=f"{key}_{i}", on_click=_set_controls, args=(values,))


def shape_text(a: np.ndarray) -> str:
    """ "6×4": an isolate in a right-to-left language, where "2×6×6" showed as "6×6×2"."""
    return i18n.isolated("×".join(str(s) for s in np.shape(a)))


def shapes(items: dict[str, np.ndarray], note: str = "") -> None:
    """One line with the shape of every matrix on the page."""
    parts = [f"**{k}** {shape_text(v)}" for k, v in items.items()]
    st.caption(_("Shapes: ") + " · ".join(parts) + (f" — {note}" if note else ""))


def model_missing(page: str, err: Exception, install_command: str) -> None:
    """What a real-model page shows when its weights are not installed: the error and the
    command that installs them (no traceback, no PyTorch needed)."""
    st.error(_("The {page} cannot load the model: {err}").format(page=page, err=err))
    st.markdown(_("Install the pretrained weights (no PyTorch needed), then reload the page:"))
    st.code(install_command, language="bash")


def multiline(key: str, default: str = "") -> bool:
    """Whether the text of the box ``key`` has a line break: its value in the session, else
    the link's (``?key=``, before the box is drawn), else ``default``. When the box changes
    kind (one line, several), its text is carried over: the new widget would otherwise
    start from the link's or the default text, losing what was typed."""
    text = st.session_state.get(key)
    if text is None:
        text = st.query_params.get(key, default)
    multi = "\n" in str(text)
    kind_key = f"{key}_multiline"  # not a widget: which box drew the text last run
    if st.session_state.get(kind_key, multi) != multi and key in st.session_state:
        # the new box is a new widget, which Streamlit seeds from the link's value (the
        # text before this change) over the session's: the link gets this text
        streamlit_private.seed_url_value(key, str(text))
        st.session_state[key] = str(text)
    st.session_state[kind_key] = multi
    return multi


def model_prompt(
    page: str,
    install_command: str,
    load: Callable[[], object],
    run: Callable[[str], Any],
    **text_input: Any,
) -> tuple[str, Any, Any] | None:
    """The text box of a real-model page, its model and the model's run on the text, with
    the tokens as a caption: ``(text, model, run)``. ``None`` when the page cannot go on,
    having said why: the weights are not installed (:func:`model_missing`) or the model
    refuses the text (empty, too long: a warning). ``text_input``: ``st.text_input``'s
    arguments (label, value, max_chars, key, help); the text is bound to the link. A text
    with a line break gets a box of several lines (``st.text_area``, the same key and
    link): a one-line box would hide the newlines ("Add the top token" can add one)."""
    box = (
        st.text_area if multiline(text_input["key"], text_input.get("value", "")) else st.text_input
    )
    text = box(**text_input, bind="query-params")
    try:
        model = load()
    except ImportError as err:  # ModelNotInstalledError, or tokenizers/safetensors missing
        model_missing(page, err, install_command)
        return None
    try:
        result = run(text)
    except ValueError as err:
        st.warning(str(err))
        return None
    tokens = result.tokens
    st.caption(
        ngettext("**{n} token:** ", "**{n} tokens:** ", len(tokens)).format(n=len(tokens))
        + i18n.isolated(
            " · ".join(md_token(t) for t in tokens[:80]) + (" …" if len(tokens) > 80 else "")
        )
    )
    return text, model, result


#: A picker's width (px) where it stands alone: about the third of a laptop's main column
#: it had in columns, and narrower than a phone's.
PICKER_WIDTH = 300
#: A picker's width (px) beside text in a :func:`row`: the fifth of a laptop's main column
#: it had in columns.
SMALL_PICKER_WIDTH = 180


def row(key: str, where: Any = st) -> Any:
    """A horizontal row of elements, keyed ``row_<key>``: pickers of their own width, then
    text that takes the rest, under them when less than 16rem is left (a phone:
    :func:`attnviz.ui.streamlit_private.accessibility_css`). One block, where
    ``st.columns`` makes one per column and one around them, each rendered again on every
    page switch (issue 46). Drawn in ``where`` (the page, a column)."""
    return where.container(key=f"row_{key}", horizontal=True, gap="medium")


def head_picker(
    num_heads: int, where: Any = st, label: str | None = None, width: int | str = "stretch"
) -> int:
    """The page's head selector (widget key ``head``, kept in the link), drawn in ``where``
    (a column, a row, or the page); returns the chosen head, 0 … num_heads − 1. ``label``:
    translated text (default "head"); ``width``: Streamlit's (px, or "stretch")."""
    label = _("head") if label is None else label
    return where.selectbox(
        label, list(range(num_heads)), key="head", bind="query-params", width=width
    )


def weights_fixed() -> bool:
    """Whether the weights are coloured on the fixed 0…1 scale (the sidebar's weights' colour
    range, ``?wrange=``), not each chart by its own largest weight."""
    return st.session_state.get("wrange", "fixed") != "matrix"


def weights_scale() -> str:
    """How the weights are coloured, for a caption: the sidebar's weights' colour range
    (``?wrange=``, :data:`attnviz.viz.style.WEIGHT_RANGES`; the board applies it)."""
    if not weights_fixed():
        return _(
            "each chart from 0 (dark purple) to its own largest weight (yellow), which its "
            "colour bar's title says (the sidebar's weights' colour range)"
        )
    return _("a fixed scale from 0 (dark purple) to 1 (yellow)")


def index_slider(
    label: str, key: str, top: int, *, old_key: str | None = None, where: Any = st
) -> int:
    """A layer or head slider kept in the link (``?<key>=``), drawn in ``where``: counted
    from 0, as every page, the engine, the code box and ``?head=`` count; returns
    0 … top − 1. Before it is drawn: a value another model of the page left out of range
    goes back to 0, a link's bad value is dropped with a warning, and a link with
    ``old_key`` (the key under which this slider counted from 1) opens the same layer or
    head as before, with a note (:func:`attnviz.ui.links.index_link_notices`)."""
    for kind, note in links.index_link_notices(key, top, old_key):
        if kind == "warning":
            st.warning(note, icon=":material/warning:")
        else:
            st.info(note, icon=":material/info:")
    try:
        ok = 0 <= int(st.session_state.get(key, 0)) < top
    except (TypeError, ValueError):
        ok = False
    if not ok:
        st.session_state[key] = 0
    if top == 1:
        where.caption(_("{label}: 0 (the model has one)").format(label=label))
        return 0
    return int(where.slider(label, 0, top - 1, 0, key=key, bind="query-params"))


def follow_token(
    before: tuple[str, ...] | None, index: int, tokens: tuple[str, ...], default: int
) -> tuple[int, str | None]:
    """Where a token picker's choice goes when the text changes: the token chosen at
    ``index`` of ``before`` (the tokens it was chosen among), found again in ``tokens`` (its
    occurrence nearest to where it was), else ``default``; and the token that is no longer
    there (None when it was found, or nothing had been chosen yet)."""
    if before is None or tuple(before) == tuple(tokens):
        return (index if 0 <= index < len(tokens) else default), None
    if not 0 <= index < len(before):
        return default, None
    chosen = before[index]
    where = [i for i, t in enumerate(tokens) if t == chosen]
    if not where:
        return default, chosen
    return min(where, key=lambda i: (abs(i - index), i)), None


def token_select(label: str, key: str, tokens: list[str], default: int, where: Any = st) -> int:
    """A picker of one of ``tokens`` ("10: it"), drawn in ``where``, that follows the text:
    after the text changes it keeps the chosen token where the new text has it, else goes
    to ``default`` and says that the chosen token is gone (a choice of the old text is
    never shown under the new one's options)."""
    seen = f"{key}_tokens"  # the tokens the choice was made among
    tokens_now = tuple(tokens)
    try:
        index = int(st.session_state.get(key, default))
    except (TypeError, ValueError):
        index = default
    before = st.session_state.get(seen)
    new, gone = follow_token(before, index, tokens_now, default)
    if key not in st.session_state or new != index:
        st.session_state[key] = new
    st.session_state[seen] = tokens_now
    tok = where.selectbox(
        label,
        range(len(tokens)),
        format_func=lambda i: f"{i}: {visible(tokens[i])}",
        key=key,
    )
    if gone is not None:
        where.caption(
            _("{token} is not in the new text: showing {i}: {new}.").format(
                token=md_text(gone), i=new, new=md_text(tokens[new])
            )
        )
    return int(tok)
