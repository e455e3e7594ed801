"""What the live-class browser tests share: an app server with its own SQLite class store
(not the user's ~/.local/share), the gestures of a class (press a button by its widget
key, read the link's parameters, start a class) and :class:`Phone`, a student's phone on
the class's light page (``/join``: no Streamlit there, so none of BrowserSession's run
counting).

A test module imports the fixtures it uses (``from class_helpers import app_server,
data_dir``): pytest finds fixtures by the names a module holds."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from e2e_app import RUN_TIMEOUT_MS, BrowserSession, start_app_server, stop_app_server

from attnviz import classroom


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("classes")


@pytest.fixture(scope="module")
def app_server(data_dir):
    """The app with its own SQLite class store (not the user's ~/.local/share)."""
    server = start_app_server(extra_env={classroom.DATA_DIR_ENV: str(data_dir)})
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    assert "Traceback (most recent call last)" not in out, out


#: How long a CPU burner runs at most (it is killed when its test ends).
BURN_S = 600


@contextlib.contextmanager
def cpu_burners(count: int = 2, seconds: float = BURN_S) -> Iterator[None]:
    """A busy server: ``count`` CPU-bound processes (``while True: pass``, ending by
    themselves after ``seconds``), killed on leaving the block."""
    code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def params(session) -> dict[str, str]:
    """The page link's query parameters (first value of each)."""
    return {k: v[0] for k, v in parse_qs(urlparse(session.page.url).query).items()}


def press(session: BrowserSession, key: str) -> None:
    """Click the button of widget ``key`` (not its help icon) and wait for the rerun."""
    button = session.page.locator(f".st-key-{key} button").first  # the help icon nests
    session.rerun_after(button.click)


PHONE = (390, 844)


class Phone:
    """A student's phone on the class's light page: its own browser context (390x844, a
    touch screen), every request it makes (``requests``: (method, url)), bytes received
    (``received``), JavaScript errors (``errors``)."""

    def __init__(self, browser, server, viewport=PHONE) -> None:
        self.server = server
        self.context = browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]},
            device_scale_factor=1,
            is_mobile=True,
            has_touch=True,
        )
        self.page = self.context.new_page()
        self.page.set_default_timeout(RUN_TIMEOUT_MS)
        self.requests: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append((r.method, r.url)))
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def open(self, url: str) -> None:
        """Open ``url`` (whole, or a path on the server) and wait for the class's state."""
        if url.startswith("/"):
            url = self.server.url + url
        self.page.goto(url)
        self.page.wait_for_function("() => document.readyState === 'complete'")

    def card(self, i: int):
        return self.page.locator(f"#q{i}")

    def answer(self, i: int, text: str) -> None:
        """Type ``text`` into question ``i``'s answer box (or pick it) and press Check."""
        card = self.card(i)
        if card.locator('input[type="radio"]').count():
            card.get_by_label(text, exact=True).check()
        else:
            card.get_by_label("Your answer").fill(text)
        card.get_by_role("button", name="Check").click()

    def verdict(self, i: int, starts: str, timeout: float = RUN_TIMEOUT_MS) -> str:
        """Wait for question ``i``'s verdict to begin with ``starts``; its text."""
        box = self.card(i).locator(".verdict")
        self.page.wait_for_function(
            "([el, s]) => el.innerText.trim().startsWith(s)",
            arg=[box.element_handle(), starts],
            timeout=timeout,
        )
        return box.inner_text()

    def student(self) -> str:
        return params(self)["student"]

    def close(self) -> None:
        self.context.close()


def start_class(teacher: BrowserSession, seed: int) -> tuple[str, str]:
    """The teacher opens the exercises of ``seed`` and presses Start a class: (code, key)."""
    teacher.open(f"/exercises?seed={seed}")
    press(teacher, "class_start")
    teacher.page.wait_for_function(
        "new URLSearchParams(location.search).get('teacher') !== null", timeout=20_000
    )
    link = params(teacher)
    return link["class"], link["teacher"]
