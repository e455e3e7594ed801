"""Classroom load: N students' sessions against one ``streamlit run app.py`` server.

Starts the app on a free loopback port (headless, usage stats off, the repository's
``.streamlit/config.toml``), then opens ``--sessions`` concurrent sessions that speak
Streamlit's websocket protocol (``bench/stclient.py``: ``BackMsg.rerun_script`` with widget
states, read ``ForwardMsg`` until ``script_finished``). Each session loads the playground,
then changes a control (N, seed, mask, scale, heads ...) every ``--interval`` seconds for
``--duration`` seconds; the run is bounded in time and in count and stops by itself.

Reported: p50/p95/max time from a control change to the finished rerun, errors (exceptions
or ``st.error`` shown by the app, failed runs, timeouts, dropped connections), server RSS
and CPU sampled every second, and RSS after the sessions disconnect (is memory returned?).

    python bench/classroom.py                          # 30 sessions, 2 minutes, app.py
    python bench/classroom.py --sessions 5 --duration 20 --app bench/bare_app.py
    python bench/classroom.py --json classroom.json    # also write all figures as JSON
    python bench/classroom.py --preload real_model,decoder   # with both real models loaded

Targets (issue 5): p95 < 1.5 s, zero errors, RSS < 1 GB, memory returned after close.
A rerun that takes longer than the interval delays that student's next change (no overlap),
so a slow server shows up as fewer changes and as "late" changes, not as a queue.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import kit
import psutil
import websocket  # websocket-client
from kit import Server, percentile
from stclient import Session

DEFAULT_CONTROLS = ("N", "seed", "mask", "scale", "heads")


@dataclass
class Change:
    session: int
    t: float  # seconds since the start of the load
    key: str
    value: Any
    seconds: float
    bytes: int
    ok: bool
    late: bool


@dataclass
class Report:
    sessions: int = 0
    changes: list[Change] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    samples: list[dict[str, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    active: int = 0
    reconnects: int = 0
    cpu_seconds: float = float("nan")
    metrics: dict[str, float] = field(default_factory=dict)

    def error(self, msg: str) -> None:
        with self.lock:
            self.errors[msg[:200]] += 1


def choose_change(
    sess: Session, controls: tuple[str, ...], rng: random.Random, max_n: int
) -> tuple[str, Any]:
    """Pick a control that the page shows and a new value for it, as a student would."""
    keys = [k for k in controls if k in sess.widgets and not sess.widgets[k].proto.disabled]
    if not keys:
        raise RuntimeError(f"none of the controls {controls} on the page: {sorted(sess.widgets)}")
    key = rng.choice(keys)
    w = sess.widgets[key]
    p = w.proto
    if w.kind == "slider":
        hi = min(p.max, max_n) if key == "N" else p.max
        steps = max(int(round((hi - p.min) / (p.step or 1))), 0)
        return key, p.min + (p.step or 1) * rng.randint(0, steps)
    if w.kind in ("selectbox", "radio"):
        opts = w.options
        return key, rng.choice(opts)
    if w.kind == "number_input":
        lo = p.min if p.has_min else 0
        hi = min(p.max if p.has_max else 10_000, lo + 10_000)
        return key, rng.randint(int(lo), int(hi))
    if w.kind == "checkbox":
        return key, rng.random() < 0.5
    raise RuntimeError(f"don't know how to change a {w.kind} ({key})")


RECONNECT_WINDOW = 30.0  # seconds a session keeps trying to reconnect


def rerun(sess: Session, changes: dict[str, Any], args: argparse.Namespace, rep: Report):
    """``sess.rerun(changes)``; with ``--reconnect``, a dropped connection is opened again
    (through the proxy: another replica) and the change sent again, as the browser does.
    The time reported is from the first attempt to the finished rerun."""
    t0 = time.perf_counter()
    try:
        return sess.rerun(changes)
    except (OSError, websocket.WebSocketException) as exc:
        if not args.reconnect:
            raise
        first = exc
    with rep.lock:
        rep.reconnects += 1
    deadline = time.monotonic() + RECONNECT_WINDOW
    while True:
        sess.close()
        try:
            sess.connect()
            r = sess.rerun(changes)
            r.seconds = time.perf_counter() - t0
            return r
        except (OSError, websocket.WebSocketException):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no reconnect within {RECONNECT_WINDOW} s: {first}") from None
            time.sleep(0.5)


def student(
    i: int, url: str, args: argparse.Namespace, rep: Report, t_start: float, start_at: float
) -> None:
    rng = random.Random(args.seed * 1000 + i)
    time.sleep(max(0.0, start_at - time.monotonic()))
    deadline = t_start + args.duration
    sess = Session(url, page=args.page, query=args.query, timeout=args.timeout)
    try:
        sess.connect()
        with rep.lock:
            rep.active += 1
        r = sess.rerun()
        with rep.lock:
            rep.loads.append(r.seconds)
        for e in r.errors:
            rep.error(f"load: {e}")
        # desynchronise the students: first change somewhere within one interval
        next_t = time.monotonic() + rng.uniform(0, args.interval)
        late = False
        for _ in range(args.max_changes):
            if next_t >= deadline:
                break
            time.sleep(max(0.0, next_t - time.monotonic()))
            key, value = choose_change(sess, args.controls, rng, args.max_n)
            r = rerun(sess, {key: value}, args, rep)
            for e in r.errors:
                rep.error(f"{key}={value}: {e}")
            with rep.lock:
                t = round(time.monotonic() - t_start, 3)
                rep.changes.append(Change(i, t, key, value, r.seconds, r.bytes, r.ok, late))
            next_t += args.interval
            # a rerun that overran the interval delays the next change (no overlap)
            late = next_t < time.monotonic()
            if late:
                next_t = time.monotonic()
    except Exception as exc:  # noqa: BLE001 - every failure is a reported error
        rep.error(f"session failed: {type(exc).__name__}: {exc}")
    finally:
        sess.close()
        with rep.lock:
            rep.active -= 1


def monitor(
    proc: psutil.Process | None, rep: Report, stop: threading.Event, t0: float, every: float
) -> None:
    if proc is None:
        return
    proc.cpu_percent(None)
    while not stop.wait(every):
        try:
            procs = [proc, *proc.children(recursive=True)]
            rss = sum(p.memory_info().rss for p in procs)
            cpu = proc.cpu_percent(None)
        except psutil.Error:
            return
        with rep.lock:
            done = len(rep.changes)
            active = rep.active
        rep.samples.append(
            {
                "t": round(time.monotonic() - t0, 1),
                "rss_mb": round(rss / 2**20, 1),
                "cpu_pct": round(cpu, 1),
                "active": active,
                "changes": done,
                "load1": round(os.getloadavg()[0], 1),
            }
        )


def server_metrics(url: str) -> dict[str, float]:
    """A few figures from Streamlit's /_stcore/metrics (openmetrics text)."""
    out: dict[str, float] = {}
    try:
        with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=10) as r:
            text = r.read().decode()
    except OSError:
        return out
    for line in text.splitlines():
        if line.startswith("active_sessions "):
            out["active_sessions"] = float(line.split()[-1])
        elif line.startswith("cache_memory_bytes{"):
            kind = "session_state" if "st_session_state" in line else "cache_data"
            key = f"{kind}_mb"
            out[key] = round(out.get(key, 0.0) + float(line.split()[-1]) / 2**20, 2)
    return out


def rss_mb(proc: psutil.Process | None) -> float:
    if proc is None:
        return float("nan")
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20


def run_wave(url: str, args: argparse.Namespace, proc: psutil.Process | None) -> Report:
    rep = Report(sessions=args.sessions)
    stop = threading.Event()
    t0 = time.monotonic()
    mon = threading.Thread(target=monitor, args=(proc, rep, stop, t0, args.sample), daemon=True)
    mon.start()
    cpu0 = sum(proc.cpu_times()[:2]) if proc else float("nan")
    threads = [
        threading.Thread(
            target=student,
            args=(i, url, args, rep, t0, t0 + args.ramp * i / max(args.sessions, 1)),
            daemon=True,
        )
        for i in range(args.sessions)
    ]
    for t in threads:
        t.start()
    # the server's own view while every student is connected
    time.sleep(min(args.ramp + 2.0, args.duration / 2))
    rep.metrics = server_metrics(url)
    hard_stop = t0 + args.duration + args.timeout + 30
    for t in threads:
        t.join(max(0.0, hard_stop - time.monotonic()))
    if any(t.is_alive() for t in threads):
        rep.error("sessions still running at the hard time limit (abandoned)")
    stop.set()
    mon.join(5)
    rep.cpu_seconds = (sum(proc.cpu_times()[:2]) if proc else float("nan")) - cpu0
    return rep


def summarize(rep: Report) -> dict[str, Any]:
    lat = [c.seconds for c in rep.changes if c.ok]
    samples = rep.samples
    return {
        "sessions": rep.sessions,
        "changes": len(rep.changes),
        "late_changes": sum(c.late for c in rep.changes),
        "load_p50_s": round(percentile(rep.loads, 50), 3),
        "load_max_s": round(max(rep.loads, default=float("nan")), 3),
        "rerun_p50_s": round(percentile(lat, 50), 3),
        "rerun_p95_s": round(percentile(lat, 95), 3),
        "rerun_p99_s": round(percentile(lat, 99), 3),
        "rerun_max_s": round(max(lat, default=float("nan")), 3),
        "rerun_mean_kb": round(statistics.fmean([c.bytes for c in rep.changes]) / 1024, 1)
        if rep.changes
        else float("nan"),
        "errors": sum(rep.errors.values()),
        "reconnects": rep.reconnects,
        "error_kinds": dict(rep.errors.most_common(10)),
        "rss_peak_mb": max((s["rss_mb"] for s in samples), default=float("nan")),
        "cpu_mean_pct": round(statistics.fmean([s["cpu_pct"] for s in samples]), 1)
        if samples
        else float("nan"),
        "cpu_peak_pct": max((s["cpu_pct"] for s in samples), default=float("nan")),
        "server_cpu_s": round(rep.cpu_seconds, 1),
        "server_cpu_ms_per_rerun": round(1000 * rep.cpu_seconds / max(len(rep.changes), 1), 1),
        "machine_load_mean": round(statistics.fmean([s["load1"] for s in samples]), 1)
        if samples
        else float("nan"),
    }


def print_timeline(samples: list[dict[str, float]], every: float) -> None:
    print(f"{'t/s':>6} {'active':>6} {'changes':>8} {'RSS/MB':>8} {'CPU/%':>6} {'load':>5}")
    last = -every
    for s in samples:
        if s["t"] - last >= every - 1e-9:
            print(
                f"{s['t']:6.0f} {s['active']:6d} {s['changes']:8d} "
                f"{s['rss_mb']:8.1f} {s['cpu_pct']:6.0f} {s['load1']:5.1f}"
            )
            last = s["t"]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default="app.py", help="script to serve (relative to the repo)")
    ap.add_argument("--url", help="use a running server instead (no RSS/CPU figures)")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--duration", type=float, default=120.0, help="seconds of changes")
    ap.add_argument("--interval", type=float, default=2.0, help="seconds between changes")
    ap.add_argument("--ramp", type=float, default=10.0, help="seconds over which students join")
    ap.add_argument("--max-changes", type=int, default=1000, help="per session, a hard bound")
    ap.add_argument("--controls", default=",".join(DEFAULT_CONTROLS))
    ap.add_argument("--max-n", type=int, default=64, help="largest N a student picks")
    ap.add_argument("--page", default="", help="page url path (default: the home page)")
    ap.add_argument("--query", default="", help="initial query string, e.g. N=16&heads=4")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for a rerun")
    ap.add_argument(
        "--settle",
        type=float,
        default=130.0,
        help="seconds to wait after the sessions close (> server.disconnectedSessionTTL)",
    )
    ap.add_argument("--waves", type=int, default=1, help="run the class this many times")
    ap.add_argument("--sample", type=float, default=1.0, help="RSS/CPU sampling period")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--server-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra streamlit config, e.g. server.disconnectedSessionTTL=30",
    )
    ap.add_argument(
        "--preload",
        default="",
        help="pages to visit once before the class, e.g. real_model,decoder (both real models "
        "then sit in the server's memory during the run)",
    )
    ap.add_argument("--json", help="write the summary and the samples to this file")
    ap.add_argument("--log", help="server log file")
    ap.add_argument(
        "--reconnect",
        action="store_true",
        help="a session whose connection drops reconnects and repeats its change, as the "
        "browser does (behind a proxy with replicas); counted as reconnects, not errors",
    )
    return ap


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    args.controls = tuple(c.strip() for c in args.controls.split(",") if c.strip())
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    server = None
    proc = None
    if args.url:
        url = args.url.rstrip("/")
    else:
        opts = dict(o.split("=", 1) for o in args.server_option)
        server = Server(args.app, options=opts, log=args.log).start()
        url = server.url
        proc = psutil.Process(server.proc.pid)
    out: dict[str, Any] = {"args": {k: v for k, v in vars(args).items()}, "waves": []}
    try:
        # One warm-up visit: imports, caches, and st.navigation registered (a first visit
        # to a sub-page of a fresh server would otherwise run in pages/-directory mode).
        with Session(url, timeout=args.timeout) as s:
            warm = s.rerun()
        for page in filter(None, (p.strip() for p in args.preload.split(","))):
            with Session(url, page=page, timeout=300) as s:
                pre = s.rerun()
            if pre.errors:
                raise RuntimeError(f"preloading {page}: {pre.errors}")
            print(f"preloaded {page} in {pre.seconds:.1f} s; RSS {rss_mb(proc):.0f} MB")
        rss0 = rss_mb(proc)
        print(
            f"server {url} ({args.app}); warm-up load {warm.seconds:.2f} s, "
            f"{warm.bytes / 1024:.0f} KB, errors {warm.errors or 'none'}; RSS {rss0:.0f} MB"
        )
        print(
            f"{args.sessions} sessions, a change every {args.interval} s for {args.duration} s, "
            f"controls {','.join(args.controls)}, N <= {args.max_n}"
        )
        for wave in range(args.waves):
            rep = run_wave(url, args, proc)
            summ = summarize(rep)
            summ.update({f"during_{k}": v for k, v in rep.metrics.items()})
            rss_closed = rss_mb(proc)
            time.sleep(args.settle)
            rss_settled = rss_mb(proc)
            # Streamlit keeps closed sessions for server.disconnectedSessionTTL (120 s) and
            # drops expired ones lazily, when the session store is next written: one new
            # visit after the settle time does that, as the next student would.
            with Session(url, timeout=args.timeout) as s:
                s.rerun()
            time.sleep(1.0)
            rss_probe = rss_mb(proc)
            summ.update({f"after_{k}": v for k, v in server_metrics(url).items()})
            summ.update(
                rss_before_mb=round(rss0, 1),
                rss_at_close_mb=round(rss_closed, 1),
                rss_after_settle_mb=round(rss_settled, 1),
                rss_after_next_visit_mb=round(rss_probe, 1),
                retained_per_session_mb=round((rss_probe - rss0) / max(args.sessions, 1), 2),
            )
            print(f"\n--- wave {wave + 1}/{args.waves}: timeline (every 10 s)")
            print_timeline(rep.samples, 10.0)
            print(f"--- wave {wave + 1}/{args.waves}: summary")
            for k, v in summ.items():
                print(f"  {k:26s} {v}")
            out["waves"].append(
                {
                    "summary": summ,
                    "samples": rep.samples,
                    "changes": [asdict(c) for c in rep.changes],
                }
            )
    finally:
        if server:
            server.stop()
    kit.write_json(args.json, out, default=str)
    s = out["waves"][-1]["summary"] if out["waves"] else {}
    ok = s.get("errors", 1) == 0 and s.get("rerun_p95_s", 99) < 1.5
    print("targets (p95 < 1.5 s, zero errors):", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
