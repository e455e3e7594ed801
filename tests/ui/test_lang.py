"""The session's language (attnviz.ui.lang) through AppTest: the link's ?lang=, an unknown one
said in the sidebar, kept in the session, the board told."""

from __future__ import annotations

from board_view import BOARD, board_data
from test_app import assert_clean, run_app

from attnviz import i18n


def _locale(at) -> dict:
    first = next(el for el in at.get("bidi_component") if el.proto.component_name == BOARD)
    return board_data(first)["locale"]


def test_an_unknown_language_is_said_until_a_link_brings_a_known_one():
    at = run_app({"lang": "fr"})
    assert_clean(at)
    assert any("“fr”" in w.value for w in at.sidebar.warning)
    assert _locale(at)["lang"] == "en"
    at.query_params["lang"] = "es"
    at.run()
    assert not any("“fr”" in w.value or "«fr»" in w.value for w in at.sidebar.warning)
    locale = _locale(at)
    assert locale["lang"] == "es" and locale["separators"] == ",." and locale["messages"]


def test_arabic_runs_right_to_left_and_the_picker_names_it_in_itself():
    at = run_app({"lang": "ar"})
    assert_clean(at)
    assert _locale(at)["dir"] == "rtl"
    assert at.selectbox(key="attnviz_lang_pick").value == "ar"


def test_served_by_serve_py_the_board_gets_its_catalogs_url_not_the_catalog(monkeypatch):
    """With ``serve.py``'s route (attnviz.classroom.web.catalog) the preload board carries the
    catalog's URL, the same in every run (fetched once per tab); a language switch gives
    another URL; English has nothing to fetch; without the route, the messages inline."""
    from attnviz.classroom.web import catalog

    monkeypatch.setattr(catalog, "_served", True)
    at = run_app({"lang": "zh_CN"})
    assert_clean(at)
    locale = _locale(at)
    assert locale["catalog"] == catalog.url("zh_CN") and "messages" not in locale
    assert locale["lang"] == i18n.html_lang("zh_CN")
    at.run()
    assert _locale(at) == locale
    at.query_params["lang"] = "ar"
    at.run()
    assert _locale(at)["catalog"] == catalog.url("ar") and _locale(at)["dir"] == "rtl"
    at.query_params["lang"] = "en"
    at.run()
    assert _locale(at)["messages"] == {} and "catalog" not in _locale(at)
    monkeypatch.setattr(catalog, "_served", False)
    at.query_params["lang"] = "es"
    at.run()
    assert _locale(at)["messages"] == i18n.js_messages("es") and "catalog" not in _locale(at)
