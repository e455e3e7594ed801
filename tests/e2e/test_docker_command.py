"""The Docker image's start command, run outside Docker (no engine here), loaded in a browser."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from e2e_app import BrowserSession, start_app_server, stop_app_server

from tests.test_serving import start_command

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app_server():
    """Overrides conftest's server: the Dockerfile's ENTRYPOINT/CMD as written (0.0.0.0),
    with this environment's streamlit and a free port."""
    command = start_command()
    assert command[0] == "streamlit"
    streamlit = Path(sys.executable).with_name("streamlit")
    server = start_app_server(command=[str(streamlit), *command[1:]])
    yield server
    stop_app_server(server)
    server.log_path.unlink(missing_ok=True)


def test_first_page_loads_in_a_browser(browser, app_server):
    session = BrowserSession(browser, app_server)
    try:
        session.open("/")
        session.assert_healthy("the Docker start command's first page")
        assert session.plotly_count() > 0
        # The image's .streamlit/config.toml applies: viewers get no developer menu.
        session.page.get_by_test_id("stMainMenu").click()
        menu = session.page.get_by_test_id("stMainMenuPopover").inner_text()
        assert "Clear cache" not in menu and "Rerun" not in menu
    finally:
        session.close()
