"""The board's catalog over HTTP (attnviz.classroom.web.catalog): one URL per language and version,
cached a year when asked for by that version, the board's messages as i18n.js reads them;
an unknown language is a 404 that names it, not a traceback."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from attnviz import i18n
from attnviz.classroom import web
from attnviz.classroom.web import catalog


@pytest.fixture(autouse=True, scope="module")
def not_served_after():
    """routes() marks the route served for the process: undone for the tests that follow
    (AppTest runs have no serve.py, and read the messages inline)."""
    before = catalog._served
    yield
    catalog._served = before


@pytest.fixture(scope="module")
def client(not_served_after):
    with TestClient(Starlette(routes=catalog.routes())) as c:
        yield c


@pytest.mark.parametrize("code", ["es", "zh_CN", "ar"])
def test_a_languages_catalog_is_its_board_messages_cached_a_year_by_its_version(client, code):
    url = catalog.url(code)
    assert url.startswith(f"{catalog.PATH}/{code}.json?v=")
    r = client.get(url)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    assert "immutable" in r.headers["cache-control"]
    assert r.json() == i18n.js_messages(code) and r.json()  # translated, plural forms too
    assert any(isinstance(v, list) for v in r.json().values())
    # UTF-8, not \\u escapes: Chinese and Arabic as short as they can be
    assert "\\u" not in r.content.decode() and len(r.content) < len(json.dumps(r.json()))


def test_without_its_version_it_is_checked_again_and_a_known_one_is_not_sent_twice(client):
    r = client.get(f"{catalog.PATH}/es.json")
    assert r.status_code == 200 and r.headers["cache-control"] == "no-cache"
    again = client.get(f"{catalog.PATH}/es.json", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and not again.content
    other = catalog.url("zh_CN").split("v=")[1]
    assert other != catalog.url("es").split("v=")[1]  # each language its own version


@pytest.mark.parametrize("code", ["fr", "de", "x" * 300])
def test_a_language_attnviz_has_no_catalog_for_is_a_404_that_names_it(client, code):
    r = client.get(f"{catalog.PATH}/{code}.json")
    assert r.status_code == 404
    assert r.json() == {"error": "not_found", "catalog": code[:20]}
    assert client.get(f"{catalog.PATH}/..%2F..%2Fpyproject.toml.json").status_code == 404


def test_the_server_serves_it_beside_the_student_page():
    paths = [r.path for r in web.routes()]
    assert f"{catalog.PATH}/{{code}}.json" in paths and "/join" in paths
    assert catalog.served()
