"""Fixtures of the real-browser tests: one Streamlit server per test session (a module that
needs its own settings overrides ``app_server``), one Debian headless chromium for the
modules that run one after another (each module's contexts closed at its end).
Outside CI a missing chromium skips these tests; in CI (env CI set) it fails them, so the
browser suite can never silently vanish.
"""

from __future__ import annotations

from pathlib import Path

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


#: The running playwright driver and Chromium ("pw", "browser"), shared by the browser test
#: modules that run one after another (see :func:`browser`).
_CHROMIUM: dict = {}
HERE = Path(__file__).resolve().parent


def _chromium():
    if _CHROMIUM and not _CHROMIUM["browser"].is_connected():  # it crashed: a new one
        _CHROMIUM.pop("browser")
        _CHROMIUM.pop("pw").stop()
    if not _CHROMIUM:
        from playwright.sync_api import sync_playwright

        pw = sync_playwright().start()
        try:
            launched = pw.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
            )
        except BaseException:
            pw.stop()
            raise
        _CHROMIUM.update(pw=pw, browser=launched)
    return _CHROMIUM["browser"]


def _close_chromium() -> None:
    if _CHROMIUM:
        pw, launched = _CHROMIUM.pop("pw"), _CHROMIUM.pop("browser")
        try:
            launched.close()
        finally:
            pw.stop()


@pytest.fixture(scope="module")
def browser():
    """Chromium for one test module: one Chromium (and playwright driver) serves the browser
    test modules that run one after another (~1.7 CPU-s a launch, ~40 modules), and each
    module gets it as a new browser would be: at its end every context it opened (tabs,
    cookies, storage, HTTP cache) is closed, the shared one (``shared_context``) too. Not
    kept for the whole session: a running sync_playwright keeps an asyncio loop in the main
    thread, and other tests (bench smoke tests) start their own; it is closed before any
    test outside tests/e2e runs (``pytest_runtest_teardown`` below)."""
    path = chromium_path()
    if path is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("playwright is not installed (pip install -r requirements-dev.txt)")
    launched = _chromium()
    yield launched
    for context in list(launched.contexts):
        context.close()
    if hasattr(launched, "_attnviz_shared_context"):
        del launched._attnviz_shared_context


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a browser test's teardown: Chromium closed when the next test is not a browser
    test (or there is none)."""
    try:
        return (yield)
    finally:
        if nextitem is None or not Path(nextitem.path).resolve().is_relative_to(HERE):
            _close_chromium()


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
