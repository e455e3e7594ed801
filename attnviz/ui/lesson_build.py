"""The sidebar's "Build a lesson" (docs/lessons.md): the view on screen added as a lesson's
stop (its page and the settings in its link, :func:`view_link`), the stops so far as a TOML
file to download and edit: a lesson written with no TOML by hand. Played by
:mod:`attnviz.ui.tour`."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from attnviz.classroom import lessons
from attnviz.i18n import _, ngettext
from attnviz.ui import lesson_links
from attnviz.ui.tour import TOUR_PARAMS

BUILT_KEY, STOP_TITLE_KEY = "tour_built", "tour_stop_title"
#: The expander's state (open or closed, kept across pages): its content is sent only while
#: it is open, not on every page switch of everyone who never builds a lesson (issue 46).
BOX_KEY = "tour_builder_box"
#: Never in a built stop's link: the tour's own parameters, the presenter view, the language.
NOT_IN_A_STOP = (*TOUR_PARAMS, "present", "lang", "class", "teacher", "student")


def view_link(page: str) -> str:
    """This view's link for a lesson's stop: the page and the settings in its URL (a value
    left at its default is not in the URL, and the stop opens it at the default too)."""
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in NOT_IN_A_STOP}
    path = "" if page == lesson_links.slugs()[0] else page
    return f"/{path}" + (f"?{urlencode(params)}" if params else "")


def _add_stop(page: str, default_title: str) -> None:
    """on_click of "Add this view as a stop"."""
    title = (st.session_state.get(STOP_TITLE_KEY) or "").strip() or default_title
    st.session_state.setdefault(BUILT_KEY, []).append({"title": title, "link": view_link(page)})
    st.session_state[STOP_TITLE_KEY] = ""


def builder(page: str, page_title: str) -> None:
    """The sidebar's "Build a lesson": this view added as a stop, the lesson so far as a
    TOML file to download and edit (docs/lessons.md), no TOML written by hand."""
    built = st.session_state.get(BUILT_KEY, [])
    box = st.sidebar.expander(
        _("Build a lesson"), expanded=bool(built), key=BOX_KEY, on_change="rerun"
    )
    if box.open is False:  # opening it reruns the page, which then draws what is in it
        return
    with box:
        st.text_input(_("The stop's title"), key=STOP_TITLE_KEY, placeholder=page_title)
        st.button(
            _("Add this view as a stop"), key="tour_add", on_click=_add_stop,
            args=(page, page_title), icon=":material/add_location:",
        )  # fmt: skip
        if not built:
            st.caption(_("Each stop keeps this page and its settings."))
            return
        st.caption(
            ngettext("{n} stop so far:", "{n} stops so far:", len(built)).format(n=len(built))
            + " "
            + " · ".join(s["title"] for s in built)
        )
        text = lessons.to_toml(_("My lesson"), built)
        st.download_button(
            _("Download the lesson (TOML)"), text, file_name="my_lesson.toml",
            mime="application/toml", key="tour_download", icon=":material/download:",
        )  # fmt: skip
        st.button(
            _("Start over"), key="tour_clear", on_click=st.session_state.pop, args=(BUILT_KEY,)
        )
