"""A lecture hall through HAProxy: bench/classroom.py's students against three replicas.

Starts ``--replicas`` replicas (default 3, as deploy/compose.yaml; ``streamlit run app.py`` on
free loopback ports, one shared ``STREAMLIT_SERVER_COOKIE_SECRET``) and Debian's haproxy with
``deploy/haproxy.cfg`` pointed at them (bench/hall.py), then runs two classes through the proxy:

1. ``--sessions`` students (default 60) changing a control every ``--interval`` s;
2. the same again, with one replica killed (SIGKILL) halfway: its students' connections
   drop, they reconnect through HAProxy (another replica) and repeat their change, as
   Streamlit's front end does.

Reported per class: errors (target 0), reconnects, p50/p95/max time from a change to the
finished rerun (a change interrupted by the kill counts from its first attempt), sessions
per replica (``/_stcore/metrics``), the CPU seconds of each replica and the machine load.

    python bench/replicas.py                          # 60 students, 60 s per class
    python bench/replicas.py --sessions 30 --duration 30 --json replicas.json
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from typing import Any

import classroom
import kit
import psutil
from hall import REPLICAS, Hall
from kit import percentile
from stclient import Session


def replica_sessions(hall: Hall) -> list[float | None]:
    out = []
    for r in hall.replicas:
        alive = r.proc is not None and r.proc.poll() is None
        out.append(classroom.server_metrics(r.url).get("active_sessions") if alive else None)
    return out


def cpu_seconds(hall: Hall) -> list[float | None]:
    out = []
    for r in hall.replicas:
        try:
            t = psutil.Process(r.proc.pid).cpu_times()
            out.append(round(t.user + t.system, 1))
        except (psutil.Error, AttributeError):
            out.append(None)
    return out


def run_class(hall: Hall, args: argparse.Namespace, kill_at: float | None) -> dict[str, Any]:
    names = ("sessions", "duration", "interval", "ramp", "timeout", "seed")
    cargs = classroom.parse_args([f"--{k}={getattr(args, k)}" for k in names] + ["--reconnect"])
    spread: dict[str, Any] = {}
    killed: dict[str, Any] = {}

    def observe() -> None:
        time.sleep(min(args.ramp + 3.0, args.duration / 2 - 1))
        spread["sessions_per_replica"] = replica_sessions(hall)
        spread["load_avg_mid"] = [round(x, 2) for x in os.getloadavg()]
        if kill_at is not None:
            time.sleep(max(0.0, t0 + kill_at - time.monotonic()))
            killed["replica"] = hall.names[args.kill]
            killed["had_sessions"] = replica_sessions(hall)[args.kill]
            hall.kill(args.kill)
            killed["at_s"] = round(time.monotonic() - t0, 1)

    cpu0 = cpu_seconds(hall)
    t0 = time.monotonic()
    watcher = threading.Thread(target=observe, daemon=True)
    watcher.start()
    rep = classroom.run_wave(hall.url, cargs, None)
    watcher.join(5)
    summary = {  # without the single-server figures (RSS, CPU of one process)
        k: v for k, v in classroom.summarize(rep).items() if not (isinstance(v, float) and v != v)
    }
    cpu1 = cpu_seconds(hall)
    summary["replica_cpu_s"] = [
        None if a is None or b is None else round(b - a, 1) for a, b in zip(cpu0, cpu1, strict=True)
    ]
    summary.update(spread)
    if killed:
        summary["killed"] = killed
        # the same figures for the changes after the kill: 60 students on two replicas
        after = [c.seconds for c in rep.changes if c.ok and c.t >= killed["at_s"]]
        summary["after_kill_changes"] = len(after)
        summary["after_kill_p50_s"] = round(percentile(after, 50), 3)
        summary["after_kill_p95_s"] = round(percentile(after, 95), 3)
    summary["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=60)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of changes")
    ap.add_argument("--interval", type=float, default=2.0)
    ap.add_argument("--ramp", type=float, default=10.0)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--replicas", type=int, default=REPLICAS, help="replicas behind haproxy")
    ap.add_argument("--kill", type=int, default=0, help="index of the replica to kill")
    ap.add_argument("--no-kill", action="store_true", help="only the first class")
    ap.add_argument("--json", help="write the summaries to this file")
    args = ap.parse_args(argv)

    out: dict[str, Any] = {"args": vars(args), "load_avg_before": os.getloadavg()}
    with Hall(n=args.replicas) as hall:
        with Session(hall.url, timeout=args.timeout) as s:  # warm-up through the proxy
            s.rerun()
        for r in hall.replicas:  # and each replica once (imports, caches)
            with Session(r.url, timeout=args.timeout) as s:
                s.rerun()
        print(f"hall {hall.url}: {len(hall.replicas)} replicas {hall.names} behind haproxy")
        classes = [("all replicas", None)]
        if not args.no_kill:
            classes.append((f"replica {hall.names[args.kill]} killed halfway", args.duration / 2))
        for name, kill_at in classes:
            print(f"\n--- {args.sessions} students, {name}")
            summary = run_class(hall, args, kill_at)
            for k, v in summary.items():
                if k != "error_kinds" or v:
                    print(f"  {k:26s} {v}")
            out[name] = summary
            time.sleep(3)
    kit.write_json(args.json, out, default=str)
    ok = all(out[n]["errors"] == 0 for n, _ in classes)
    print("zero errors:", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
