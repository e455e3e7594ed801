"""A lecture hall: Debian's haproxy with the project's deploy/haproxy.cfg in front of three
``streamlit run app.py`` replicas (bench/hall.py points the config at loopback ports).

Six browser sessions, each on its own link (N, D, heads, mask), spread over the replicas and
are held there by HAProxy's SERVERID cookie (a dynamic cookie: its value is derived from the
replica's address, and bench/hall.py derives the same to know which replica a value names).
The replica holding the first session is killed (SIGKILL, a crash): the sessions it held
reconnect through HAProxy to a live replica and come back from their URL with the same view
and no exception; the other sessions are untouched (same replica, no rerun, same view).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from e2e_app import BrowserSession, start_app_server, stop_app_server, unavailable
from e2e_helpers import radio_value, scores_shape, selectbox_input, slider_value

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from hall import COOKIE, REPLICAS, SECRET_ENV, HAProxy, haproxy_exe  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.replicas]

# Six links, six views: (N, D, heads, mask).
VIEWS = [
    (5, 8, 2, "causal"),
    (7, 16, 4, "none"),
    (9, 12, 3, "causal"),
    (4, 8, 1, "none"),
    (11, 16, 2, "causal"),
    (6, 24, 6, "none"),
]


def link(view) -> str:
    n, d, heads, mask = view
    return f"/?N={n}&D={d}&heads={heads}&mask={mask}"


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    if not haproxy_exe():
        unavailable("haproxy is not installed (apt-get install haproxy)")
    secret = os.urandom(16).hex()
    replicas = []
    proxy = None
    try:
        for _ in range(REPLICAS):
            replicas.append(start_app_server(extra_env={SECRET_ENV: secret}))
        proxy = HAProxy([int(r.url.rsplit(":", 1)[1]) for r in replicas]).start()
        # each replica's SERVERID value, as haproxy derives it (dynamic cookies)
        yield proxy, dict(zip(proxy.cookies(), replicas, strict=True))
    finally:
        if proxy:
            proxy.stop()
        for r in replicas:
            stop_app_server(r)
    for r in replicas:
        out = r.output()
        r.log_path.unlink(missing_ok=True)
        assert "Traceback (most recent call last)" not in out, out


class ProxySession(BrowserSession):
    """A browser session whose base URL is HAProxy's, in a context of its own: HAProxy
    holds a browser to its replica by a cookie, and each session is another person's."""

    def __init__(self, browser, proxy, replica_server):
        super().__init__(browser, replica_server, fresh=True)
        self.base_url = proxy.url

    def cookie(self) -> str | None:
        found = [c["value"] for c in self.context.cookies() if c["name"] == COOKIE]
        return found[0] if found else None

    def view(self) -> tuple[int, int, int, str]:
        heads = int(selectbox_input(self, "heads").input_value())
        assert scores_shape(self)[0] == slider_value(self, "N")
        return slider_value(self, "N"), slider_value(self, "D"), heads, radio_value(self, "mask")


COMMIT = {"wait_until": "commit"}


def together(sessions: list[ProxySession], start) -> None:
    """start(session, i) a page load in every session, then wait for each page's run."""
    before = [s.runs() for s in sessions]
    for i, s in enumerate(sessions):
        response = start(s, i)
        assert response is not None and response.status == 200
    for s, runs in zip(sessions, before, strict=True):
        s.wait_for_run(after=runs)


def active_sessions(server) -> float | None:
    """The replica's open sessions (websockets), from its /_stcore/metrics (None: no answer)."""
    url = f"{server.url}/_stcore/metrics"
    with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("active_sessions "):
                return float(line.split()[-1])
    return None


def wait_until(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_sessions_stick_to_their_replica_and_survive_its_death(browser, hall):
    proxy, by_cookie = hall
    any_replica = next(iter(by_cookie.values()))
    sessions = [ProxySession(browser, proxy, any_replica) for _ in VIEWS]
    try:
        # All six load at once (the replicas share the machine's cores).
        together(sessions, lambda s, i: s.page.goto(s.base_url + link(VIEWS[i]), **COMMIT))
        for s, view in zip(sessions, VIEWS, strict=True):
            s.assert_healthy(link(view))
            assert s.view() == view
        cookies = [s.cookie() for s in sessions]
        assert all(c in by_cookie for c in cookies), cookies
        spread = Counter(cookies)
        assert len(spread) >= 2, f"six sessions on one replica: {spread}"

        # Held by the cookie: each replica carries exactly the sessions (websockets) whose
        # cookie names it, and HAProxy answers a later request that carries the cookie
        # without setting a new one (it would if it sent it elsewhere; a request without
        # the cookie gets one).
        for s in sessions:
            for _ in range(3):
                r = s.context.request.get(proxy.url + "/_stcore/health")
                set_cookies = [
                    h["value"] for h in r.headers_array if h["name"].lower() == "set-cookie"
                ]
                assert r.ok and not any(c.startswith(f"{COOKIE}=") for c in set_cookies)
        with urllib.request.urlopen(proxy.url + "/_stcore/health", timeout=5) as r:
            assert any(c.startswith(f"{COOKIE}=") for c in r.headers.get_all("Set-Cookie"))
        assert [s.cookie() for s in sessions] == cookies
        for cookie, server in by_cookie.items():
            wait_until(
                lambda server=server, cookie=cookie: active_sessions(server) == spread[cookie],
                15,
                f"{cookie} to carry {spread[cookie]} sessions",
            )

        # Kill the replica holding the first session.
        victim = cookies[0]
        moved = [s for s, c in zip(sessions, cookies, strict=True) if c == victim]
        kept = [s for s, c in zip(sessions, cookies, strict=True) if c != victim]
        runs_before = {id(s): s.runs() for s in sessions}
        by_cookie[victim].proc.send_signal(signal.SIGKILL)
        by_cookie[victim].proc.wait(10)

        for s in moved:
            # Streamlit's front end reconnects on its own (health ping, then a new
            # websocket); HAProxy sends it to a live replica and sets a new cookie.
            wait_until(lambda s=s: s.cookie() not in (None, victim), 60, "a new cookie")
            s.page.wait_for_function(
                "() => document.querySelector('[data-testid=\"stApp\"]')"
                ".getAttribute('data-test-connection-state') === 'CONNECTED'"
            )
            i = sessions.index(s)
            # The next change runs on the new replica, from the URL's and the page's values.
            seed = s.page.locator(".st-key-seed input")
            new_seed = str(int(seed.input_value()) + 1)
            s.rerun_after(lambda seed=seed, v=new_seed: (seed.fill(v), seed.press("Enter")))
            s.assert_healthy("the first change after its replica died")
            assert s.view() == VIEWS[i]
            assert s.cookie() in by_cookie and s.cookie() != victim
            # And a reload of its link (the URL now also holds the seed) shows the same view.
            assert f"seed={new_seed}" in s.page.url
            s.rerun_after(s.page.reload)
            s.assert_healthy("a reload after its replica died")
            s.screenshot(f"replicas_moved_session_{i}", full=False)
            assert s.view() == VIEWS[i]
            assert s.page.locator(".st-key-seed input").input_value() == new_seed
        for s in kept:
            i = sessions.index(s)
            assert s.cookie() == cookies[i]
            assert s.runs() == runs_before[id(s)], "a session on a live replica was rerun"
            assert s.view() == VIEWS[i]
            s.assert_healthy("a session on a live replica")
        # The moved sessions now live on the surviving replicas.
        for s in moved:
            assert by_cookie[s.cookie()].proc.poll() is None
    finally:
        for s in sessions:
            s.close()


def test_the_board_plotly_js_is_cached_a_year_behind_haproxy(hall):
    """deploy/haproxy.cfg gives the board's content-versioned plotly.js URL a one-year
    immutable max-age (Streamlit itself sends only "public"); other files are untouched."""
    import importlib

    proxy, _ = hall
    src = importlib.import_module("attnviz.ui.board").PLOTLY["src"]
    base = proxy.url + "/_stcore/bidi-components/attnviz.board/"
    with urllib.request.urlopen(base + src, timeout=30) as r:
        assert r.status == 200
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    with urllib.request.urlopen(base + "board.js", timeout=30) as r:
        assert r.headers["Cache-Control"] == "public"


def _get(url: str, gzip_ok: bool):
    """(headers, body as received) of a GET; headers are read case-insensitively."""
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200
        return r.headers, r.read()


def test_haproxy_compresses_streamlits_front_end_and_passes_the_board_plotly_js(hall):
    """Streamlit sends its own front end (/static/, the page) uncompressed: deploy/haproxy.cfg
    gzips it for browsers that accept it. The board's plotly.js, which Streamlit already
    gzips, passes through once-compressed (decodes to the vendored file)."""
    import gzip
    import importlib
    import re

    proxy, replicas = hall
    page = _get(proxy.url + "/", gzip_ok=False)[1].decode()
    bundle = re.search(r'src="\.?/?(static/js/index\.[^"]+\.js)"', page)
    assert bundle, page[:500]
    url = "/" + bundle.group(1)
    replica = next(iter(replicas.values()))
    plain_h, plain = _get(replica.url + url, gzip_ok=True)  # the replica itself
    assert "Content-Encoding" not in plain_h  # Streamlit does not compress it
    h, body = _get(proxy.url + url, gzip_ok=True)
    assert h.get("Content-Encoding") == "gzip", dict(h)
    assert gzip.decompress(body) == plain and len(body) < len(plain) / 2
    h, body = _get(proxy.url + url, gzip_ok=False)  # a client without gzip: as it was
    assert "Content-Encoding" not in h and body == plain
    board = importlib.import_module("attnviz.ui.board")
    base = proxy.url + "/_stcore/bidi-components/attnviz.board/"
    h, body = _get(base + board.PLOTLY["src"], gzip_ok=True)
    assert h.get("Content-Encoding") == "gzip"
    assert gzip.decompress(body) == board.board_plotly().read_bytes()
