"""What the live-class browser tests share: an app server with its own SQLite class store
(not the user's ~/.local/share), and the gestures of a class (press a button by its widget
key, answer an exercise, read the link's parameters).

A test module imports the fixtures it uses (``from class_helpers import app_server,
data_dir``): pytest finds fixtures by the names a module holds."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from e2e_app import BrowserSession, start_app_server, stop_app_server

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


def answer(session: BrowserSession, i: int, text: str) -> None:
    """Type ``text`` into exercise ``i``'s answer box and press its Check."""
    session.page.locator(f".st-key-ex{i} input").fill(text)
    press(session, f"ex{i}_check")


def start_class(teacher: BrowserSession, seed: int) -> tuple[str, str]:
    """The teacher opens the exercises of ``seed`` and presses Start a class: (code, key)."""
    teacher.open(f"/exercises?seed={seed}")
    press(teacher, "class_start")
    teacher.page.wait_for_function(
        "new URLSearchParams(location.search).get('teacher') !== null", timeout=20_000
    )
    link = params(teacher)
    return link["class"], link["teacher"]
