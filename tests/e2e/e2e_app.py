"""The attnviz server and a browser session for the e2e tests (used by conftest.py's fixtures).

The server is started the way Streamlit's own e2e tests start theirs (headless, usage stats
off, file watcher off, a free port), on loopback. A session waits for a rerun to finish by
watching `stApp`'s `data-test-script-state` attribute and counting runs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"  # git-ignored (artifacts/)
#: Screenshots to look at are taken only when asked (``ATTNVIZ_SHOTS=1``): a full-length one
#: costs about a fifth of a page visit's CPU (bench: 5.7 against 4.6 CPU-s a playground
#: visit, with against without), and no test reads them. A test that checks its picture
#: (the docs' pictures) takes it always (``screenshot(..., always=True)``).
SHOTS = bool(os.environ.get("ATTNVIZ_SHOTS"))
#: Features Chromium turns off for the tests and benchmarks. Chromium reads one
#: --disable-features switch, the last one given, and playwright passes its own list first,
#: so this list repeats playwright's (tests/e2e/test_chromium_flags.py checks it against the
#: installed playwright) and adds the omnibox's two popups: Chromium 156 renders each as a
#: page of its own (chrome://omnibox-popup.top-chrome) in every new window, that is in
#: every browser context a test opens, and that renderer cost about a fifth of the CPU of a
#: page visit (bench: 37.9 against 29.8 CPU-seconds for six visits).
DISABLED_FEATURES = (
    # playwright's own list (its chromiumSwitches.ts)
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin", "OptimizationHints", "NetworkTimeServiceQuerying",
    "AimEnabled", "PreconnectToSearch", "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
    # ours: no omnibox popup pages in a headless browser
    "WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
)  # fmt: skip
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=" + ",".join(DISABLED_FEATURES),
]
VIEWPORTS = {"1280x800": (1280, 800), "1920x1080": (1920, 1080)}
RUN_TIMEOUT_MS = 60_000


def chromium_path() -> str | None:
    for candidate in (os.environ.get("ATTNVIZ_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: the browser tests must run, not skip)", False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- server


@dataclass
class AppServer:
    url: str
    proc: subprocess.Popen
    log_path: Path

    def output(self) -> str:
        """Everything the server printed so far (read through a separate file handle)."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                return r.status == 200 and r.read() == b"ok"
        except OSError:
            return False


def start_app_server(
    extra_args: list[str] | None = None,
    command: list[str] | None = None,
    cwd: Path = ROOT,
    timeout: float = 90,
    extra_env: dict[str, str] | None = None,
) -> AppServer:
    """Start `streamlit run serve.py` (app.py's pages and the class's /join page) in `cwd`
    on a free port; `command` replaces the default
    command (the port flag is appended to it, so it overrides any earlier --server.port);
    `extra_env` is added to the environment (STREAMLIT_* variables of the caller are dropped)."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "serve.py",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--logger.enableRich",
        "false",
        *(extra_args or []),
    ]
    if command is not None:
        argv = [*command, f"--server.port={port}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env.update(NO_COLOR="1", TERM="dumb", COLUMNS="160")
    env.update(extra_env or {})
    # A file, not a pipe: a full pipe would block the server.
    fd, name = tempfile.mkstemp(prefix="attnviz-e2e-", suffix=".log")
    with os.fdopen(fd, "w") as log:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = AppServer(f"http://127.0.0.1:{port}", proc, Path(name))
    deadline = time.monotonic() + timeout
    while not server.healthy():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_app_server(server)
            pytest.fail(f"streamlit did not come up on {server.url}:\n{server.output()}", False)
        time.sleep(0.25)
    return server


def stop_app_server(server: AppServer) -> None:
    if server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()


ALL_PLOTS_JS = """
window.__allPlots = () => [document, ...Array.from(document.querySelectorAll('iframe'))
  .map(f => { try { return f.contentDocument; } catch (e) { return null; } })
  .filter(d => d && d.body)]
  .flatMap(d => Array.from(d.querySelectorAll('.js-plotly-plot')));
"""

# Every components-v2 element of the page is an attnviz board (attnviz.ui.board): each has
# mounted its `.attnviz-board` and drawn its last data.
#: Two frames and a task: React has committed what the last messages brought and run its
#: effects (a components-v2 element's JavaScript among them); at most 250 ms (a page that
#: draws no frames, hidden, does not hold the test). (A fixed 200 ms wait before: 18 s of
#: 257 in four of the browser test files.)
FRAMES_JS = """() => new Promise(done => {
  const most = setTimeout(done, 250);
  requestAnimationFrame(() => requestAnimationFrame(() =>
    setTimeout(() => { clearTimeout(most); done(); }, 0)));
})"""

BOARDS_DRAWN_JS = """() => Array.from(document.querySelectorAll('.stBidiComponent'))
  .every(c => { const b = c.querySelector('.attnviz-board');
                return b !== null && b.dataset.state === 'drawn'; })"""


def new_context(browser, viewport=(1280, 800), touch: bool = False):
    """A browser context (a profile of its own) with the tests' page scripts:
    ``__allPlots()`` lists the plotly divs of the page (the boards draw in it, no iframe)
    and of any same-origin iframe; boards out of view catch up on their deferred redraw
    at once (board.js waits 1 s; the tests wait for every board; a test may set it back).
    ``touch``: a touch screen (a phone or a tablet: no hover, coarse pointer)."""
    context = browser.new_context(
        viewport={"width": viewport[0], "height": viewport[1]},
        device_scale_factor=1,
        has_touch=touch,
        is_mobile=touch,
    )
    return with_page_scripts(context)


def with_page_scripts(context):
    """``context`` with the tests' page scripts (added once)."""
    if not getattr(context, "_attnviz_scripts", False):
        context.add_init_script(ALL_PLOTS_JS)
        context.add_init_script("window.__attnvizCatchUpMs = 30;")
        context._attnviz_scripts = True
    return context


def shared_context(browser):
    """The browser's one shared context, made on first use (it closes with the browser).
    A tab in it costs less than a tab in a new context: the front end's files come from
    the HTTP cache and plotly.js from the board's IndexedDB copy (bench: 206 against 240
    CPU-s for test_board_e2e, test_hostile and test_interaction, 26 tabs)."""
    context = getattr(browser, "_attnviz_shared_context", None)
    if context is None:
        context = browser._attnviz_shared_context = new_context(browser)
    return context


class BrowserSession:
    """A browser context + page with page-error capture and rerun-aware helpers.

    Finished script runs are counted from the server's own messages: every `script_finished`
    ForwardMsg on the page's websocket (decoded with Streamlit's protobuf classes), except a
    run cut short for a rerun (`FINISHED_EARLY_FOR_RERUN`: the page guard's one rerun on a
    server's first deep link, see `attnviz.ui.state.page_guard`): the page is not finished
    then, and a test that read it at that moment saw a page half drawn. The DOM's
    `data-test-script-state` alone can miss a short run: when the browser is slow, React
    batches "running" and "notRunning" into one render and the attribute never changes.
    """

    def __init__(
        self,
        browser,
        server: AppServer,
        viewport=(1280, 800),
        context=None,
        fresh=False,
        touch=False,
    ):
        """A new tab. By default in the browser's shared context (``shared_context``: one
        profile for the module's tabs, as a student's browser keeps its cache between
        tabs); ``fresh``: in a context of its own (its own cookies, storage and HTTP
        cache: a first visit, a second person), and so with ``touch``, a touch screen's;
        that context closes with the session. ``context``: in that context (another
        session's)."""
        self.server = server
        self.base_url = server.url
        self.owns_context = context is None and (fresh or touch)
        if context is None:
            owned = self.owns_context
            context = new_context(browser, viewport, touch) if owned else shared_context(browser)
        self.context = with_page_scripts(context)
        self.page = self.context.new_page()
        self.page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
        self.page.set_default_timeout(RUN_TIMEOUT_MS)
        self.errors: list[str] = []
        self.finished_runs = 0
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("websocket", self._watch_websocket)

    def _watch_websocket(self, ws) -> None:
        if "/_stcore/stream" in ws.url:
            ws.on("framereceived", self._on_frame)

    def _on_frame(self, payload) -> None:
        if not isinstance(payload, bytes | bytearray):
            return
        try:
            msg = ForwardMsg.FromString(bytes(payload))
        except Exception:  # not a ForwardMsg: ignore
            return
        if (
            msg.WhichOneof("type") == "script_finished"
            and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
        ):
            self.finished_runs += 1

    def close(self) -> None:
        if self.owns_context:
            self.context.close()
        else:
            self.page.close()

    # -- navigation and waiting ------------------------------------------------------

    def open(self, path: str = "/") -> None:
        before = self.runs()
        response = self.page.goto(self.base_url + path)
        assert response is not None and response.status == 200
        self.wait_for_run(after=before)

    def go(self, path: str) -> None:
        """Go to ``path`` (a page and its query string) in this tab, as the browser's back and
        forward buttons do: Streamlit's front end reads the new URL on ``popstate`` and asks
        the server for that page, with the page's JavaScript, plotly.js and the board
        already loaded. A walk over the pages costs about a third of the CPU of opening each
        page afresh (bench: 1.3 against 4.5 CPU-s a page). The first page of a tab is
        ``open``ed."""
        before = self.runs()
        self.page.evaluate(
            "(p) => { history.pushState(null, '', p);"
            " window.dispatchEvent(new PopStateEvent('popstate')); }",
            path,
        )
        self.wait_for_run(after=before)

    def visit(self, path: str) -> None:
        """``open`` the tab's first page, ``go`` to every later one: a walk in one tab."""
        (self.go if self.runs() else self.open)(path)

    def runs(self) -> int:
        return self.finished_runs

    _READY_JS = """() => {
      const app = document.querySelector('[data-testid="stApp"]');
      const state = app ? app.getAttribute('data-test-script-state') : null;
      const info = {
        connection: app ? app.getAttribute('data-test-connection-state') : null, state,
        skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
        stale: document.querySelectorAll('[data-stale="true"]').length,
      };
      info.ready = info.connection === 'CONNECTED'
        && !['running', 'initial', null].includes(state)
        && info.skeletons === 0 && info.stale === 0;
      return info;
    }"""

    def wait_for_run(self, after: int | None = None) -> None:
        """Wait until more than `after` runs have finished (if given), then until the page
        shows the result: connected, not running, no skeleton or stale element left."""
        deadline = time.monotonic() + RUN_TIMEOUT_MS / 1000
        while after is not None and self.finished_runs <= after:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no script run finished within {RUN_TIMEOUT_MS} ms "
                    f"(runs {self.finished_runs}, waiting for more than {after}); "
                    f"page: {self.page.evaluate(self._READY_JS)}"
                )
            self.page.wait_for_timeout(50)  # lets playwright deliver websocket events
        try:
            self.page.wait_for_function(
                f"({self._READY_JS})().ready", timeout=RUN_TIMEOUT_MS, polling=100
            )
        except Exception as exc:
            state = self.page.evaluate(self._READY_JS)
            raise AssertionError(f"the page did not settle after a run: {state}") from exc
        # Let React hand each board what the last messages brought (a board marks itself
        # "drawing" as it receives new data, board.js), then wait for every board to have
        # drawn it.
        self.page.evaluate(FRAMES_JS)
        try:
            self.page.wait_for_function(BOARDS_DRAWN_JS, timeout=RUN_TIMEOUT_MS, polling=100)
        except Exception as exc:
            raise AssertionError("a chart board did not finish drawing") from exc

    def rerun_after(self, action) -> None:
        """Do `action()` (a click, a key press ...) and wait for the rerun it triggers."""
        before = self.runs()
        action()
        self.wait_for_run(after=before)
        # Some actions trigger more than one rerun (replacing an uploaded file first removes
        # the old one; the app may call st.rerun): wait until no new run ends for a moment.
        while True:
            seen = self.runs()
            self.page.wait_for_timeout(400)
            if self.runs() == seen:
                break
            self.wait_for_run(after=seen)

    # -- reading the page --------------------------------------------------------------

    def exceptions(self) -> list[str]:
        return self.page.locator('[data-testid="stException"]').all_inner_texts()

    def plotly_count(self) -> int:
        return self.page.evaluate("() => window.__allPlots().length")

    def assert_healthy(self, where: str) -> None:
        exc = self.exceptions()
        if exc:  # the browser shows a redacted message: the server log has the traceback
            log = self.server.output()[-4000:]
            raise AssertionError(f"{where}: st.exception shown: {exc}\nserver log:\n{log}")
        assert not self.errors, f"{where}: JavaScript page errors: {self.errors}"

    def screenshot(self, name: str, full: bool = True, always: bool = False) -> Path | None:
        """Save what the window shows (`name.png`) and the whole page (`name_full.png`), when
        screenshots are asked for (``ATTNVIZ_SHOTS``) or ``always``; else None.

        Streamlit scrolls inside its main container, so a "full page" screenshot needs a
        window as tall as the content: the viewport is stretched, then restored."""
        if not (SHOTS or always):
            return None
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), animations="disabled")
        size = self.page.viewport_size
        height = self.page.evaluate(
            """() => {
              const main = document.querySelector('[data-testid="stMain"]')
                || document.querySelector('[data-testid="stAppViewContainer"]');
              return main ? main.scrollHeight : document.body.scrollHeight;
            }"""
        )
        if full and height > size["height"]:
            self.page.set_viewport_size({"width": size["width"], "height": min(height, 12000)})
            self.page.wait_for_timeout(400)  # plotly relayout on resize
            self.page.screenshot(path=str(SCREENSHOTS / f"{name}_full.png"), animations="disabled")
            self.page.set_viewport_size(size)
            self.page.wait_for_timeout(200)
        return path
