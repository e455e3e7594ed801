"""Fixtures of the real-browser tests: one Streamlit server per test session (a module that
needs its own settings overrides ``app_server``), Debian's headless chromium per module.
Outside CI a missing chromium skips these tests; in CI (env CI set) it fails them, so the
browser suite can never silently vanish.
"""

from __future__ import annotations

import layout_audit
import pytest
from e2e_app import (
    CHROMIUM_ARGS,
    ROOT,
    BrowserSession,
    chromium_path,
    start_app_server,
    stop_app_server,
    unavailable,
)

from attnviz import classroom


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """One app server for every browser test module that does not start its own (a module
    that needs other settings overrides this fixture): each test opens its own browser
    sessions (tabs) on it, as students do on one server. Started once, not once per module
    (~4 s each of ~30 modules). Its class store is a folder of the session's (a class a
    test starts stays out of the user's own), and it offers the pseudo-language
    (``?lang=xx``: the layout audit's walk in it)."""
    if not (ROOT / "app.py").exists():
        pytest.fail("app.py is missing", False)
    env = {classroom.DATA_DIR_ENV: str(tmp_path_factory.mktemp("classes")), "ATTNVIZ_PSEUDO": "1"}
    server = start_app_server(extra_env=env)
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    # A traceback in the server log means an uncaught error in some session.
    assert "Traceback (most recent call last)" not in out, out


# --------------------------------------------------------------------------- browser


@pytest.fixture(scope="module")
def browser():
    """Chromium for one test module. Not session-scoped: a running sync_playwright keeps an
    asyncio loop in the main thread, and other tests (bench smoke tests) start their own."""
    path = chromium_path()
    if path is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install -r requirements-dev.txt)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def session(browser, app_server):
    s = BrowserSession(browser, app_server)
    yield s
    s.close()


@pytest.fixture
def new_session(browser, app_server):
    """Factory for extra sessions (other viewports, a second user)."""
    made = []

    def make(viewport=(1280, 800)) -> BrowserSession:
        s = BrowserSession(browser, app_server, viewport)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


@pytest.fixture(scope="module")
def walk(browser, app_server, request):
    """The layout audit's walk for one test module (tests/e2e/layout_audit.py)."""
    yield from layout_audit.module_walk(browser, app_server, request)


def pytest_terminal_summary(terminalreporter):
    """The layout audit's tables (tests/e2e/layout_audit.py), after the run's results."""
    for text in terminalreporter.config.stash.get(layout_audit.REPORTS, []):
        terminalreporter.write_sep("-", "layout audit (issue 47)")
        terminalreporter.write_line(text)
