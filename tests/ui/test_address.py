"""attnviz.ui.address: the room's link from what Streamlit knows (a script run by AppTest):
the teacher's typed address (session state) and $ATTNVIZ_PUBLIC_URL reach the pure rules of
attnviz.classroom.roomlink, and a link phones cannot open gets its warning on the page."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from attnviz.classroom import roomlink


def _script():
    import streamlit as st

    from attnviz.ui import address

    given = st.query_params.get("given")
    if given:
        st.session_state[address.GIVEN_KEY] = given
    room = address.link(page="exercises")
    st.text(f"{room.source} {room.url}")
    address.warn(room)


def _run(monkeypatch, given: str | None = None, env: str | None = None) -> AppTest:
    monkeypatch.delenv(roomlink.PUBLIC_URL_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(roomlink.PUBLIC_URL_ENV, env)
    at = AppTest.from_function(_script, default_timeout=60)
    if given is not None:
        at.query_params["given"] = given
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_typed_address_wins_and_names_the_page(monkeypatch):
    at = _run(monkeypatch, given="http://10.1.2.3:8501", env="http://192.168.0.9:8501")
    assert at.text[0].value == "given http://10.1.2.3:8501/exercises"
    assert not at.warning


def test_the_environment_variable_is_used_when_nothing_is_typed(monkeypatch):
    at = _run(monkeypatch, env="http://192.168.0.9:8501")
    assert at.text[0].value == "env http://192.168.0.9:8501/exercises"


def test_an_invalid_address_is_skipped_and_said(monkeypatch):
    at = _run(monkeypatch, given="not a url", env="http://192.168.0.9:8501")
    assert at.text[0].value.startswith("env ")
    assert at.warning and "the address you typed" in at.warning[0].value
