"""The installed app in a real browser: the wheel in a fresh venv, ``attnviz`` started
outside the checkout, every page of the navigation there and the playground drawn."""

from __future__ import annotations

import pytest
from e2e_app import BrowserSession, start_app_server, stop_app_server
from e2e_helpers import click_page, nav_titles

from attnviz.ui import pages as ui_pages
from tests.package_build import build_wheel, fresh_venv

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def installed_server(tmp_path_factory):
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))
    bin_dir = fresh_venv(tmp_path_factory.mktemp("fresh") / "venv", wheel)
    outside = tmp_path_factory.mktemp("elsewhere")  # no app.py, no pages/ here
    server = start_app_server(
        command=[str(bin_dir / "attnviz"), "--server.address", "127.0.0.1"], cwd=outside
    )
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    assert "Traceback (most recent call last)" not in out, out


def test_the_installed_app_shows_every_page_and_draws_the_playground(browser, installed_server):
    session = BrowserSession(browser, installed_server)
    try:
        session.open("/")
        session.assert_healthy("installed app, playground")
        titles = nav_titles(session)
        assert titles == [p.title for p in ui_pages.PAGES], titles
        assert session.plotly_count() >= 3  # X, the weights and more: the board drew
        assert session.page.get_by_role("heading", name="Playground").count() == 1
        session.screenshot("installed_playground", full=False)
        click_page(session, "Multi-head")  # a page file found beside the installed app.py
        session.assert_healthy("installed app, multi-head")
        assert session.plotly_count() >= 1
    finally:
        session.close()
