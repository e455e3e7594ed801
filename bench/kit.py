"""What every benchmark shares: the app on loopback, a headless Chromium, a server's CPU and
metrics, percentiles, fresh processes, JSON and tables. A script in ``bench/`` imports it as
``import kit`` (``python bench/x.py`` puts ``bench/`` first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
PYTHON = sys.executable
for _p in (REPO / "tests" / "e2e", REPO):  # attnviz, and the browser tests' harness
    if str(_p) not in sys.path:
        sys.path.insert(1, str(_p))

# the browser's, a free port's and a drawn board's one home
from e2e_app import BOARDS_DRAWN_JS, CHROMIUM_ARGS, chromium_path, free_port  # noqa: E402, F401

CHROMIUM = chromium_path() or "/usr/bin/chromium"
#: The bare comparison apps: one page (three plain heatmaps per head) and two pages.
BARE_APP, PLAIN_APP = "bench/plain_charts.py", "bench/plain_pages.py"


def stop(proc: subprocess.Popen | None, grace: float = 10.0, group: bool = False) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds (``group``: to its process group)."""
    if proc and proc.poll() is None:
        send = functools.partial(os.killpg, proc.pid) if group else proc.send_signal
        send(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            proc.wait(5)


def kill(proc: subprocess.Popen | None) -> None:
    """SIGKILL (a crash: no goodbye to its connections) and wait."""
    if proc and proc.poll() is None:
        proc.kill()
        proc.wait(10)


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of the process ``pid`` and its children (``/proc``)."""
    total = 0.0
    for p in [pid, *(int(x) for x in os.popen(f"pgrep -P {pid}").read().split())]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mb(proc: Any) -> float:
    """Resident MB of a ``psutil.Process`` and its children (NaN for none)."""
    if proc is None:
        return float("nan")
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20


def wait_http(url: str, proc: subprocess.Popen, timeout: float, what: str) -> None:
    """Until ``url`` answers 200; an error when ``proc`` exits or the time is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not answer on {url} within {timeout} s")


class Service:
    """A subclass's ``start()`` and ``stop()`` as a context manager (a start that fails is
    stopped: nothing left behind)."""

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Server(Service):
    """``streamlit run APP`` on loopback, headless, on a free port, from the repository
    (its ``.streamlit/config.toml``; on ``PYTHONPATH``, for ``bench/plain_pages.py``)."""

    def __init__(
        self,
        app: str | Path = "app.py",
        *,
        options: dict[str, Any] | None = None,
        log: str | Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.app, self.env = str(app), dict(env or {})
        self.port = free_port()
        self.options = {
            "server.headless": "true",
            "server.address": "127.0.0.1",
            "server.port": str(self.port),
            "browser.gatherUsageStats": "false",
            "server.fileWatcherType": "none",
            "server.runOnSave": "false",
            **{
                k: str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in (options or {}).items()
            },
        }
        self.log_path = Path(log) if log else None
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0, wait: bool = True) -> Server:
        """Start the server; unless not ``wait``, wait until it answers (:meth:`wait`)."""
        args = [PYTHON, "-m", "streamlit", "run", self.app]
        args += [f"--{k}={v}" for k, v in self.options.items()]
        env = {**os.environ, **self.env}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        out = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        return self.wait(timeout) if wait else self

    def wait(self, timeout: float = 60.0) -> Server:
        """Until it answers (one that does not is stopped on leaving ``with``)."""
        wait_http(f"{self.url}/_stcore/health", self.proc, timeout, f"streamlit {self.app}")
        return self

    def stop(self) -> None:
        stop(self.proc)


@contextlib.contextmanager
def servers(*apps: str | Path, **kw: Any) -> Iterator[list[Server]]:
    """Several apps at once (the app and its comparison app), all stopped on the way out."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(Server(app, **kw)) for app in apps]


@contextlib.contextmanager
def warm(app: str | Path = "app.py", **kw: Any) -> Iterator[Server]:
    """The app, visited once over the websocket before it is measured (imports done)."""
    from stclient import Session

    with Server(app, **kw) as srv:
        with Session(srv.url) as s:
            s.rerun()
        yield srv


def server_like_pages() -> None:
    """``AppTest`` runs in navigation mode, as a server's: AppTest's new PagesManager per run
    would treat the pages/ folder as a legacy multipage app until ``st.navigation`` runs."""
    from streamlit.runtime.pages_manager import PagesManager

    init = PagesManager.__init__

    def server_like(self, *a, **k):
        PagesManager.uses_pages_directory = False  # what st.navigation leaves in a server
        init(self, *a, **k)

    PagesManager.__init__ = server_like


@contextlib.contextmanager
def browser(**launch: Any) -> Iterator[Any]:
    """Debian's Chromium, headless, through playwright (sync API), with the tests' flags."""
    from playwright.sync_api import sync_playwright

    with (
        sync_playwright() as pw,
        pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, **launch) as b,
    ):
        yield b


def tab(b: Any, viewport: tuple[int, int], *init_js: str, **options: Any) -> tuple[Any, Any]:
    """A fresh context of ``b`` (scripts run before the page's own; ``options``: playwright's
    ``new_context``'s) with one page; the context closes on leaving ``with ctx:``."""
    ctx = b.new_context(viewport={"width": viewport[0], "height": viewport[1]}, **options)
    for js in init_js:
        ctx.add_init_script(js)
    return ctx, ctx.new_page()


def size(text: str) -> tuple[int, int]:
    """``"1600x900"`` -> (1600, 900)."""
    w, h = text.lower().split("x")
    return int(w), int(h)


def parser(doc: str, json_help: str = "write the figures to this file") -> argparse.ArgumentParser:
    """An argument parser described by the first paragraph of ``doc``, with ``--json``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help=json_help)
    return ap


def percentile(xs: list[float], q: float) -> float:
    """The ``q``-th percentile, interpolated between ranks (NaN for no value)."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def spread(xs: list[float], scale: float = 1.0, digits: int = 3) -> dict[str, float | int]:
    """n, p50, p95, max of ``xs`` times ``scale`` (None for no value: JSON)."""
    out: dict[str, float | int] = {"n": len(xs)}
    for name, q in (("p50", 50), ("p95", 95), ("max", 100)):
        v = percentile(xs, q) * scale
        out[name] = round(v, digits) if v == v else None
    return out


def timed_ms(fn: Callable[[], object], repeat: int) -> float:
    """The median ms of ``repeat`` calls of ``fn()`` (3 decimals)."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return round(statistics.median(out) * 1000, 3)


def run_app(at: Any, what: str, clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds of one ``at.run()`` by ``clock``; a run that raised stops the bench."""
    t = clock()
    at.run()
    dt = clock() - t
    if at.exception:
        raise SystemExit(f"{what} failed: {[e.value for e in at.exception]}")
    return dt


def median(rows: list[dict], key: str) -> float:
    """The median of ``row[key]`` over the rows that have it (NaN for none)."""
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else float("nan")


def show(data: dict, prefix: str = "") -> None:
    """Print ``data`` a figure a line (nested keys joined by dots, a :func:`spread` on one)."""
    for k, v in data.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and set(v) == {"n", "p50", "p95", "max"}:
            print(f"{name:44} {v['p50']} / {v['p95']} / {v['max']} (n={v['n']})")
        elif isinstance(v, dict) and v:
            show(v, name + ".")
        else:
            print(f"{name:44} {v}")


def line(label: str, row: dict, width: int = 28) -> None:
    """Print ``label`` and the numbers of ``row`` (``key value``) on one line."""
    nums = [
        (k, v) for k, v in row.items() if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    text = "  ".join(f"{k} {v:.0f}" if abs(v) >= 10 else f"{k} {v:.3g}" for k, v in nums)
    print(f"{label:{width}s} {text}", flush=True)


def write_json(path: str | Path | None, data: Any, say: bool = True, **kw: Any) -> None:
    """Write ``data`` to ``path`` (indented) when a path is given."""
    if path:
        Path(path).write_text(json.dumps(data, indent=1, **kw))
        if say:
            print(f"wrote {path}")
