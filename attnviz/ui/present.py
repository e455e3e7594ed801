"""Presenter view: ``?present=1`` on any page, for a projector (1280x720 to 1920x1080).

- :func:`presenting` reads the URL (``app.py`` derives the sidebar's initial state from
  it, before the page is built; no Streamlit element is drawn there).
- :func:`setup` (called by ``app.py`` once per run, after the navigation): warns about an
  invalid ``present`` value, and in the presenter view injects the larger type (text and
  controls' values), sets the board's chart text scale and marks the boards as slides
  (``board_present``: square matrices with square cells filling the screen below them, no
  download buttons, no mode bar; :mod:`attnviz.ui.board`).
- :func:`link_box`: the "Copy link for the class" popover beside the page title (the link
  without ``present``/``step``, and as a QR code made on the server by ``segno``); it opens
  over the slide, which does not move.
- :func:`steps` gives a page its steps: in the presenter view one step per screen, with
  Previous / Next buttons (keys ``present_prev`` / ``present_next``, keyboard PageUp /
  PageDown as presentation remotes send them, and the arrow keys Left / Right when the
  focus is not in a control that uses them) and the step in the URL (``step=2``, from 1);
  in the normal view every step is shown; :func:`hidden_box`: where a slide keeps the
  controls its step does not use.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import segno
import streamlit as st

from attnviz.i18n import _
from attnviz.ui import address, streamlit_private
from attnviz.ui.board import PRESENT_KEY, TEXT_SCALE_KEY, step_keys

#: URL parameters of the presenter view; not part of the link given to the class.
PRESENT_PARAM = "present"
STEP_PARAM = "step"
#: Never in a link for the class: a live class's teacher key and a student's own id.
PRIVATE_PARAMS = ("teacher", "student")
ON = {"1", "true", "yes", "on"}
OFF = {"", "0", "false", "no", "off"}
#: Chart text in the presenter view (``board_text_scale``).
CHART_TEXT_SCALE = 1.45
#: Keyboard shortcuts of Next / Previous: what presentation remotes send.
NEXT_KEY = "PageDown"
PREV_KEY = "PageUp"
#: Set by a lesson's tour on each run (:func:`attnviz.ui.tour.bar`): this page is a stop
#: whose link names its step. That stop is that one step: PageDown / PageUp go to the
#: lesson's next / previous stop, not through the page's other steps (which Previous / Next
#: and the arrow keys still show).
PINNED_KEY = "present_step_pinned"


def _raw(name: str) -> str | None:
    value = st.query_params.get(name)
    return None if value is None else str(value).strip().lower()


def presenting() -> bool:
    """Whether the URL asks for the presenter view (``?present=1``; also true/yes/on)."""
    return _raw(PRESENT_PARAM) in ON


def sidebar_state() -> str:
    """``initial_sidebar_state`` for ``st.set_page_config``: collapsed when presenting,
    else "auto": open on a wide window, collapsed on a phone or a tablet (Streamlit: at
    most 768 px wide), where it would open over the page."""
    return "collapsed" if presenting() else "auto"


def class_link(params: dict[str, str], base: str) -> str:
    """The link for the class: ``base`` with ``params`` minus the presenter's own and the
    private ones (a teacher key, a student id)."""
    dropped = (PRESENT_PARAM, STEP_PARAM, *PRIVATE_PARAMS)
    kept = {k: v for k, v in params.items() if k not in dropped}
    return base + ("?" + urlencode(kept) if kept else "")


@functools.lru_cache(maxsize=64)
def qr_svg(text: str) -> str:
    """A QR code of ``text`` as an SVG document, made here (no external service); the
    last links' codes are kept (a presenter view draws the same link on every rerun)."""
    buf = io.BytesIO()
    segno.make(text, error="m").save(buf, kind="svg", scale=6, border=2, xmldecl=False)
    return buf.getvalue().decode()


def setup() -> None:
    """Once per run, after the navigation: the warning, the type, the chart text, the link."""
    raw = _raw(PRESENT_PARAM)
    if raw is not None and raw not in ON | OFF:
        st.warning(
            _(
                "`?{param}=` must be 1 (presenter view) or 0 (normal view); the value "
                "in the link was not understood, so the normal view is shown."
            ).format(param=PRESENT_PARAM),
            icon=":material/warning:",
        )
    on = presenting()
    st.session_state[TEXT_SCALE_KEY] = CHART_TEXT_SCALE if on else 1.0
    st.session_state[PRESENT_KEY] = on
    if not on:
        return
    streamlit_private.present_css()  # body type 1.5x (24 px), the charts' buttons too


def link_box() -> None:
    """The "Copy link for the class" popover: this view's link without ``present``/``step``
    (a code box: copy button) and its QR code. Drawn beside the page title
    (:func:`attnviz.ui.page.intro`) in the presenter view; it opens over the slide (an
    expander there pushed the slide down)."""
    where = address.link()
    link = class_link(st.query_params.to_dict(), where.url)
    with st.popover(":material/qr_code: " + _("Copy link for the class"), width="stretch"):
        address.warn(where)
        st.markdown(_("This view, without the presenter layout:"))
        st.code(link, language=None, wrap_lines=True)
        st.image(qr_svg(link), caption=_("scan to open"), width=220)


@dataclass(frozen=True)
class Steps:
    """A page's steps. ``show(i)``: whether step ``i`` (from 0) is drawn in this run;
    ``presenting``: one step per screen; ``index``: the step on screen (presenter view)."""

    titles: tuple[str, ...]
    presenting: bool
    index: int

    def show(self, i: int) -> bool:
        return not self.presenting or i == self.index

    @property
    def rest(self) -> bool:
        """Whether the parts of the page outside its steps are drawn (normal view only)."""
        return not self.presenting


def hidden_box() -> Any:
    """A container on a slide that draws nothing and takes no space: the controls a step
    does not use go there, so that their values and their link parameters stay."""
    box = st.container(key="slide_hidden_controls")
    with box:
        streamlit_private.hide_box("slide_hidden_controls")
    return box


def go(delta: int, count: int) -> None:
    """on_click of Previous / Next: the new step goes into the URL."""
    current = step_from_url(count)[0]
    st.query_params[STEP_PARAM] = str(min(max(current + delta, 0), count - 1) + 1)


def step_from_url(count: int) -> tuple[int, str | None]:
    """(step index from 0, warning or None) from ``?step=`` (counted from 1)."""
    raw = st.query_params.get(STEP_PARAM)
    if raw is None:
        return 0, None
    try:
        value = int(str(raw).strip())
    except ValueError:
        return 0, _("`?{param}=` must be a whole number from 1 to {count}; showing step 1.").format(
            param=STEP_PARAM, count=count
        )
    if not 1 <= value <= count:
        clamped = min(max(value, 1), count)
        return clamped - 1, _(
            "`?{param}=` must be from 1 to {count} on this page; showing step {step}."
        ).format(param=STEP_PARAM, count=count, step=clamped)
    return value - 1, None


def steps(titles: list[str]) -> Steps:
    """The steps of a page. In the presenter view: the navigation bar (Previous, "step i
    of n: title", Next) and only the current step is shown; otherwise every step."""
    count = len(titles)
    if not presenting() or count == 0:
        return Steps(tuple(titles), False, 0)
    index = nav_bar(titles, remote=not st.session_state.get(PINNED_KEY, False))
    return Steps(tuple(titles), True, index)


def model_steps(n_heads: int, one_head: str, third: str) -> Steps:
    """The steps of a model page: all its ``n_heads`` heads (every layer's), one head
    (titled ``one_head``) and the page's own ``third`` view."""
    return steps([_("All {n} heads").format(n=n_heads), one_head, third])


def nav_bar(
    titles: list[str],
    *,
    word: str | None = None,
    next_label: str | None = None,
    prefix: str = "present",
    remote: bool = True,
) -> int:
    """The presenter view's bar: **Previous**, "Step i of n: title", **Next** (PageUp /
    PageDown, the arrow keys outside the controls), the slide in the URL (``step=``); the
    slide's index (from 0). ``prefix``: the buttons' keys (``<prefix>_prev``/``_next``);
    ``word`` ("Step") and ``next_label`` ("Next"): translated texts; ``remote=False``:
    PageUp / PageDown are not the buttons' (a lesson's stop pinned to one step: they are
    its Back and Next, :data:`PINNED_KEY`)."""
    word = _("Step") if word is None else word
    next_label = _("Next") if next_label is None else next_label
    count = len(titles)
    index, problem = step_from_url(count)
    if problem:
        st.warning(problem, icon=":material/warning:")
    # one row, each button as wide as its label in every language (columns of fixed shares
    # cut "Siguiente pregunta" short on the projector), the title between them
    bar = st.container(horizontal=True, vertical_alignment="center", key=f"{prefix}_bar")
    bar.button(
        _("Previous"),
        key=f"{prefix}_prev",
        icon=":material/arrow_back:",
        on_click=go,
        args=(-1, count),
        disabled=index == 0,
        shortcut=PREV_KEY if remote else None,
    )
    bar.markdown(
        _("**{word} {i} of {n}**: {title}").format(
            word=word, i=index + 1, n=count, title=titles[index]
        ),
        width="stretch",
    )
    bar.button(
        next_label,
        key=f"{prefix}_next",
        icon=":material/arrow_forward:",
        icon_position="right",
        on_click=go,
        args=(1, count),
        disabled=index == count - 1,
        shortcut=NEXT_KEY if remote else None,
        type="primary",
    )
    step_keys(f"{prefix}_next", f"{prefix}_prev")  # and the arrow keys, outside the controls
    return index
