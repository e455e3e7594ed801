"""The shown language of a session (:mod:`attnviz.i18n`): chosen once per run, first thing.

``?lang=es`` in the link wins (it is kept across pages, in the presenter's and the class's
links, since the app writes it back into the URL); else the language last picked in this
session; else the browser's (``st.context.locale``); else English. The sidebar's picker
names each language in itself and writes ``?lang=`` when one is picked. A ``?lang=`` that
attnviz has no catalog for is said, not silently dropped.
"""

from __future__ import annotations

import streamlit as st

from attnviz import i18n
from attnviz.classroom.web import catalog
from attnviz.i18n import _
from attnviz.ui import streamlit_private

PARAM = "lang"
PICK_KEY = "attnviz_lang_pick"  #: the sidebar's picker (session state)
CHOSEN_KEY = "attnviz_lang"  #: the language picked or linked in this session
UNKNOWN_KEY = "attnviz_lang_unknown"  #: a linked ?lang= with no catalog, said in the sidebar


def _session_language() -> str | None:
    """The language this session's last full run set (its picker's value), for the runs
    that do not call :func:`setup`: a fragment's rerun, a widget's callback."""
    code = streamlit_private.session_value(PICK_KEY)
    return code if isinstance(code, str) else None


i18n.set_fallback(_session_language)


def setup() -> str:
    """Set the language of this run; returns its code. Call before anything is drawn."""
    wanted = st.query_params.get(PARAM)
    chosen = st.session_state.get(CHOSEN_KEY)
    browser = getattr(st.context, "locale", None)
    code = i18n.pick(wanted or chosen, browser)
    i18n.set_language(code)
    if wanted is not None:
        if i18n.pick(wanted) == i18n.SOURCE and not wanted.lower().startswith("en"):
            st.session_state[UNKNOWN_KEY] = wanted
        else:  # a later link with a language attnviz has: no stale warning
            st.session_state.pop(UNKNOWN_KEY, None)
        st.session_state[CHOSEN_KEY] = code
    elif chosen and chosen != i18n.pick(None, browser):
        st.query_params[PARAM] = chosen  # kept across a page switch
    if st.session_state.get(PICK_KEY) != code:
        st.session_state[PICK_KEY] = code
    return code


def _picked() -> None:
    code = st.session_state[PICK_KEY]
    st.session_state[CHOSEN_KEY] = code
    st.session_state.pop(UNKNOWN_KEY, None)
    st.query_params[PARAM] = code


def picker() -> None:
    """The sidebar's language picker (each language named in itself)."""
    codes = i18n.available()
    st.sidebar.selectbox(
        _("Language"),
        codes,
        format_func=i18n.name,
        key=PICK_KEY,
        on_change=_picked,
    )
    unknown = st.session_state.get(UNKNOWN_KEY)
    if unknown:
        st.sidebar.warning(
            _("attnviz has no translation for “{lang}”; it is shown in English.").format(
                lang=unknown
            )
        )


def board_locale() -> dict:
    """What the board's JavaScript needs of the shown language (``i18n.js``): the
    ``<html lang dir>``, plotly's separators, the plural categories in catalog order and
    the board's own messages: as ``catalog``, the URL the board fetches them from once per
    tab (``serve.py`` serves it: :mod:`attnviz.classroom.web.catalog`), else inline as ``messages``
    (English has none; a bare ``streamlit run app.py`` has no such route). This goes with
    every rerun (the preload board's data), so the URL keeps a slider move as light in
    every language as in English (issue 46)."""
    code = i18n.current()
    out = {
        "lang": i18n.html_lang(code),
        "dir": i18n.direction(code),
        "separators": i18n.plotly_separators(code),
        "plural": i18n.plural_tags(code),
    }
    messages = i18n.js_messages(code)
    if messages and catalog.served():
        return {**out, "catalog": catalog.url(code)}
    return {**out, "messages": messages}
