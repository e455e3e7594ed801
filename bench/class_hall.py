"""A live class under load. By default a lecture hall (issue 31): simulated phones on the
class's light page, each an aiohttp client doing what
``attnviz/classroom/web/static/student.js`` does. ``--part tally`` (issue 19): an answer
stored until the teacher's page shows it (headless Chromium). Figures: docs/benchmarks.md,
"Live class" and "A lecture hall of 300 on one container". ``--part predict``: what a view
question costs (``--phones`` answering at once, the tally, the projector's pure parts);
with ``--pages`` the other pages' questions at N = 12 and 512 (docs/classroom.md;
bench/predict.py until issue 49).

    python bench/class_hall.py --phones 300 --questions 8 --window 120
    python bench/class_hall.py --replicas 3 --postgres --phones 1000
    python bench/class_hall.py --part tally --tally-samples 20
    python bench/class_hall.py --part predict --phones 300 --threads 16 [--pages]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import platform
import random
import re
import secrets
import shutil
import statistics
import tempfile
import time
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import hall
import kit
import numpy as np
import psutil
import sqlalchemy as sa
from kit import Server, spread, timed_ms

from attnviz import classroom, engine, viz
from attnviz.classroom import exercises, predict

SEED = 7
#: The page's waits between two tries of a request that failed (student.js RETRY_MS).
RETRY_S = (1.0, 2.0, 3.0, 5.0)
#: Seconds a long poll may take before the client gives up on it (the server's 25 s + slack).
POLL_TIMEOUT_S = 45.0
REQUEST_TIMEOUT_S = 30.0
JOIN_TRIES = 5  # a phone that cannot load the page reloads this many times
KEEPALIVE_S = 4.0
NETWORK_ERRORS = (aiohttp.ClientError, TimeoutError, ValueError)
TAG_HEADER = hall.TAG_HEADER
_ASSET = re.compile(r'(?:href|src)="(join/static/[^"]+)"')
_STUDENT = re.compile(r'data-student="([A-Za-z0-9]+)"')


def backoff(tries: int) -> float:
    return RETRY_S[min(tries, len(RETRY_S) - 1)]


@dataclass
class Phone:
    i: int
    nickname: str
    plan: list[tuple[float, int, str, bool]] = field(default_factory=list)  # (t, item, ...)
    session: aiohttp.ClientSession | None = None
    student: str = ""
    version: str = ""
    join_s: float | None = None
    join_bytes: int = 0
    join_requests: int = 0
    joined_at: float = 0.0
    seen: dict[int, float] = field(default_factory=dict)  # revealed item -> when seen
    acked: dict[int, str] = field(default_factory=dict)  # item -> answer acknowledged
    replica: str = ""  # the SERVERID cookie HAProxy gave it (replicas)
    poll_errors: Counter = field(default_factory=Counter)
    failed_after_kill: bool = False
    on_killed: bool = False  # its cookie named the killed replica at the kill
    sent: list[float] = field(default_factory=list)  # time.time() of each request sent
    redispatched: bool = False  # held by the killed replica, sent again by HAProxy
    done: bool = False  # every answer settled (or the phone never joined)

    @property
    def hit(self) -> bool:
        """The kill reached it: the killed replica held a request of it, or had its cookie."""
        return self.on_killed or self.failed_after_kill or self.redispatched


@dataclass
class Run:
    """What the phones share: where the class is, the clock, and the counts."""

    base: str
    code: str
    args: argparse.Namespace
    t0: float = 0.0
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    checks: list[float] = field(default_factory=list)
    check_tries: Counter = field(default_factory=Counter)  # tries per settled check
    retries: Counter = field(default_factory=Counter)  # why a request was sent again
    errors: Counter = field(default_factory=Counter)
    requests: Counter = field(default_factory=Counter)
    acked: int = 0
    killed_at: float | None = None
    killed_wall: float | None = None  # time.time() of the kill (HAProxy's log is in it)
    killed_cookie: str = ""
    lag: list[tuple[float, float]] = field(default_factory=list)  # (when, seconds late)

    def lag_max(self, start: float, end: float) -> float:
        """The client's worst event-loop delay between two moments, in ms."""
        return round(max((x for t, x in self.lag if start <= t <= end), default=0.0) * 1000, 1)

    @property
    def api(self) -> str:
        return f"{self.base}/{classroom.JOIN_PATH}/api/{self.code}"

    def error(self, what: str) -> None:
        self.errors[what[:160]] += 1


async def _get(run: Run, phone: Phone, url: str, kind: str, timeout: float = REQUEST_TIMEOUT_S,
               body: dict | None = None):  # fmt: skip
    """GET ``url``, or POST ``body`` as JSON from the page's origin: (status, decoded body,
    bytes as they came, Retry-After s); the replica HAProxy's cookie names noted."""
    run.requests[kind] += 1
    phone.sent.append(time.time())  # the tag names the request in HAProxy's log
    headers = {TAG_HEADER: f"{phone.i}.{len(phone.sent) - 1}"}
    headers |= {} if body is None else {"Origin": run.base}
    async with phone.session.request(
        "GET" if body is None else "POST", url, json=body, headers=headers,
        timeout=aiohttp.ClientTimeout(total=timeout),
    ) as resp:  # fmt: skip
        raw = await resp.read()
        cookie = resp.cookies.get(hall.COOKIE)
        if cookie is not None and cookie.value:
            phone.replica = cookie.value
        enc = resp.headers.get("Content-Encoding", "")  # zlib's wbits 47: gzip or zlib
        if enc not in ("", "gzip", "deflate"):
            raise ValueError(f"cannot decode Content-Encoding {enc}")
        wire = len(f"HTTP/1.1 {resp.status} {resp.reason}\r\n") + 2 + len(raw)
        wire += sum(len(k) + len(v) + 4 for k, v in resp.raw_headers)
        wait = float(resp.headers.get("Retry-After") or 0)
        return resp.status, zlib.decompress(raw, 47) if enc else raw, wire, wait


async def _try(run: Run, phone: Phone, url: str, kind: str, timeout: float = REQUEST_TIMEOUT_S,
               body: dict | None = None) -> tuple[int | None, bytes | str, float]:  # fmt: skip
    """:func:`_get`'s (status, body, Retry-After); a network error: (None, its name, 0)."""
    try:
        status, data, _, wait = await _get(run, phone, url, kind, timeout, body)
    except NETWORK_ERRORS as exc:
        return None, type(exc).__name__, 0.0
    return status, data, wait


async def _join_once(run: Run, phone: Phone) -> None:
    """The join link as a browser follows it: the page, its two files, state and mine."""
    status, page, size, _ = await _get(run, phone, f"{run.base}/join?class={run.code}", "page")
    text = page.decode()
    m, assets = _STUDENT.search(text), _ASSET.findall(text)
    if status != 200 or m is None or len(assets) != 2:
        raise RuntimeError(f"page {status} without its student id or its two files")
    phone.student = m.group(1)
    files = await asyncio.gather(*(_get(run, phone, f"{run.base}/{a}", "static") for a in assets))
    files += await asyncio.gather(  # what the page's script asks for once it runs
        _get(run, phone, f"{run.api}/state?since=", "state"),
        _get(run, phone, f"{run.api}/mine?student={phone.student}", "mine"),
    )
    if any(f[0] != 200 for f in files):
        raise RuntimeError(f"static files, state, mine: {[f[0] for f in files]}")
    phone.version = json.loads(files[2][1])["v"]
    phone.join_requests, phone.join_bytes = 5, size + sum(f[2] for f in files)


async def join(run: Run, phone: Phone, at: float) -> bool:
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    for attempt in range(JOIN_TRIES):
        start = time.monotonic()
        try:
            await _join_once(run, phone)
        except (*NETWORK_ERRORS, RuntimeError) as exc:
            run.retries[f"join: {type(exc).__name__} {exc}"[:80]] += 1
            await asyncio.sleep(backoff(attempt))
            continue
        phone.joined_at = time.monotonic()
        phone.join_s = phone.joined_at - start
        return True
    run.error("a phone could not join")
    return False


async def follow(run: Run, phone: Phone) -> None:
    """The page's long poll (student.js ``follow``): until the run stops."""
    fails = 0
    while not run.stop.is_set():
        url = f"{run.api}/state?since={phone.version}"
        status, body, _ = await _try(run, phone, url, "poll", POLL_TIMEOUT_S)
        if status == 404:
            run.error("poll: 404 (the class is gone)")
            return
        if status in (200, 204):
            fails = 0
            if status == 200:
                state, now = json.loads(body), time.monotonic()
                phone.version = state["v"]
                for item in state["revealed"]:
                    phone.seen.setdefault(int(item), now)
            continue
        fails += 1
        phone.poll_errors[str(status or body)] += 1
        phone.failed_after_kill |= run.killed_at is not None
        await asyncio.sleep(backoff(fails - 1))


def _json(raw: bytes | str) -> dict:
    with contextlib.suppress(ValueError):
        return json.loads(raw)
    return {}


async def answer(run: Run, phone: Phone, item: int, text: str, right: bool) -> None:
    """Send one answer until it is settled (student.js ``Outbox.flush``), same cid."""
    body = {"student": phone.student, "nickname": phone.nickname, "item": item, "answer": text,
            "cid": secrets.token_hex(12)}  # fmt: skip
    start, tries = time.monotonic(), 0
    while time.monotonic() < start + run.args.answer_deadline:
        tries += 1
        status, raw, wait = await _try(run, phone, f"{run.api}/answer", "answer", body=body)
        if status == 200:
            run.checks.append(time.monotonic() - start)
            run.check_tries[tries] += 1
            data = _json(raw)
            if data.get("right") is not right or data.get("stored") is not True:
                run.error(f"answer: verdict {data.get('right')} stored {data.get('stored')}")
            phone.acked[item] = text
            run.acked += 1
            return
        if status is not None and status != 429 and status < 500:
            run.error(f"answer: {status} {_json(raw).get('message', '')}")
            return
        run.retries[f"answer: {status or raw}"] += 1
        phone.failed_after_kill |= run.killed_at is not None
        await asyncio.sleep(wait or backoff(tries - 1))
    run.error("answer: not settled before its deadline")


def plan(phone: Phone, items: list[exercises.Exercise], rng: random.Random) -> None:
    """(moment in the window 0..1, item, answer, right) for each question: 60% right."""
    out = []
    for i, e in enumerate(items):
        if rng.random() < 0.6:
            text = e.answer_text
        else:
            text = next((c for c in e.choices or () if not e.check(c)), "999")
        out.append((rng.random(), i, text, bool(e.check(text))))
    phone.plan = sorted(out)


async def student(run: Run, phone: Phone, at: float, window_end: float) -> None:
    """One phone: join, then the long poll beside the answers, until the run stops."""
    # idle connections closed before the server (5 s) or HAProxy (10 s) does: a browser
    # resends on a reused connection found closed, aiohttp does not
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=6, keepalive_timeout=KEEPALIVE_S),
        cookie_jar=aiohttp.CookieJar(unsafe=True),  # cookies for 127.0.0.1, as a browser
        auto_decompress=False,
        headers={"Accept-Encoding": "gzip, deflate"},  # what the client decodes (no brotli)
    ) as phone.session:
        if not await join(run, phone, at):
            phone.done = True
            return
        poll = asyncio.create_task(follow(run, phone))
        try:
            begin = max(phone.joined_at, run.t0)
            for moment, item, text, right in phone.plan:
                when = begin + moment * max(0.0, window_end - begin)
                await asyncio.sleep(max(0.0, when - time.monotonic()))
                await answer(run, phone, item, text, right)
            phone.done = True
            await run.stop.wait()
        finally:
            poll.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poll


async def reload_mine(run: Run, phone: Phone, gate: asyncio.Semaphore) -> bool:
    """A reload's ``mine`` (``gate``: so many at a time): the phone's acknowledged answers
    come back from the store."""
    async with gate:
        for attempt in range(3):
            url = f"{run.api}/mine?student={phone.student}"
            status, body, _ = await _try(run, phone, url, "mine")
            if status == 200:
                got = {int(i): a["answer"] for i, a in json.loads(body)["answers"].items()}
                return got == phone.acked
            await asyncio.sleep(RETRY_S[attempt])
    return False


async def loop_lag(run: Run, every: float = 0.1) -> None:
    """How late the client's event loop wakes (a busy client makes every time longer)."""
    while True:
        t = time.monotonic()
        await asyncio.sleep(every)
        now = time.monotonic()
        run.lag.append((now, now - t - every))


class Servers(kit.Service):
    """One ``streamlit run serve.py`` on SQLite, or ``replicas`` of it on PostgreSQL behind
    HAProxy. ``url`` is where the phones go; ``store`` the teacher's ClassStore."""

    def __init__(self, replicas: int, postgres: bool) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="attnviz-class-hall-"))
        self.pg: hall.PgCluster | None = None
        self.replicas: list[Server] = []
        self.proxy: hall.HAProxy | None = None
        self.count = max(1, replicas)
        self.postgres = postgres or replicas > 1
        self.store: classroom.ClassStore | None = None

    def start(self) -> Servers:
        if self.postgres:  # PgCluster says how to install PostgreSQL if it is not
            self.pg = hall.PgCluster(durable=False).start()
        # "": not a database inherited from the caller (SQLite in the data folder)
        env = {classroom.DATA_DIR_ENV: str(self.dir)}
        env[classroom.DATABASE_URL_ENV] = self.pg.url if self.pg else ""
        url = self.pg.url if self.pg else f"sqlite:///{self.dir / 'classes.db'}"
        # the schema, before the servers open it
        self.store = classroom.ClassStore(url, grade=exercises.grade)
        if self.count > 1:
            env[hall.SECRET_ENV] = secrets.token_hex(32)
        for i in range(self.count):  # started together, then waited for
            log = self.dir / f"server{i + 1}.log"
            self.replicas.append(Server("serve.py", env=env, log=log).start(wait=False))
        for r in self.replicas:
            r.wait()
        if self.count > 1:
            self.proxy = hall.HAProxy([r.port for r in self.replicas], bench=True).start()
        return self

    def stop(self) -> None:
        if self.store is not None:
            self.store.dispose()
        if self.proxy:
            self.proxy.stop()
        for r in self.replicas:  # SIGTERM: a server answers its waiting polls, then exits
            kit.stop(r.proc, 3.0)
        if self.pg:
            self.pg.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def url(self) -> str:
        return self.proxy.url if self.proxy else self.replicas[0].url

    def processes(self) -> list[int]:
        """The live server processes' ids."""
        return [r.proc.pid for r in self.replicas if r.proc and r.proc.poll() is None]

    def others(self) -> list[int]:
        """HAProxy's and PostgreSQL's process ids (replicas)."""
        out = [self.proxy.proc.pid] if self.proxy and self.proxy.proc else []
        with contextlib.suppress(OSError, ValueError, AttributeError):
            out.append(int((self.pg.data / "postmaster.pid").read_text().split()[0]))
        return out

    def log_problems(self) -> list[str]:
        """The servers' logged tracebacks (the line that ends each)."""
        out = []
        for i, r in enumerate(self.replicas):
            lines = r.log_path.read_text(errors="replace").splitlines()
            for n, line in enumerate(lines):
                if line.startswith("Traceback"):
                    tail = next((x for x in lines[n + 1 :] if x and not x[0].isspace()), "(no end)")
                    out.append(f"server{i + 1}: {tail[:200]}")
        return out


#: psutil.cpu_times()'s fields that are not idle.
BUSY = ("user", "nice", "system", "irq", "softirq", "steal")


class Meter:
    """The machine's CPU over a span, in cores: this client, the servers, HAProxy and
    PostgreSQL, and the rest (other processes on the machine, not this benchmark's)."""

    def __init__(self, servers: Servers) -> None:
        self.servers = servers
        self.t, self.start = time.monotonic(), self._now()

    def _now(self) -> tuple[float, float, dict[int, float], dict[int, float]]:
        t, me, s = psutil.cpu_times(), psutil.Process().cpu_times(), self.servers
        busy = sum(getattr(t, f, 0.0) for f in BUSY)
        procs = ({p: kit.cpu_s(p) for p in ps} for ps in (s.processes(), s.others()))
        return busy, me.user + me.system, *procs

    def seconds(self) -> tuple[float, float, float, float, float]:
        """Wall, machine busy, client, servers and HAProxy+PostgreSQL CPU seconds so far
        (the processes' over those alive at both ends: not a killed replica)."""
        (b0, o0, s0, h0), (b1, o1, s1, h1) = self.start, self._now()
        srv, oth = (sum(b[p] - a[p] for p in b if p in a) for a, b in ((s0, s1), (h0, h1)))
        return max(time.monotonic() - self.t, 1e-6), b1 - b0, o1 - o0, srv, oth

    def read(self) -> dict[str, float]:
        wall, busy, own, srv, oth = self.seconds()
        return {
            "wall_s": round(wall, 2),
            "machine": round(busy / wall, 2),
            "client": round(own / wall, 2),
            "servers": round(srv / wall, 2),
            "servers_cpu_s": round(srv, 2),
            "proxy_db": round(oth / wall, 2),
            "rest": round(max(0.0, busy - own - srv - oth) / wall, 2),
        }


async def reveal(run: Run, servers: Servers, key: str, item: int, phones: list[Phone]) -> dict:
    """The teacher reveals ``item``; seconds until each phone's long poll brought it."""
    meter, t = Meter(servers), time.monotonic()
    await asyncio.to_thread(servers.store.reveal, run.code, key, item)
    stored = time.monotonic() - t
    live = [p for p in phones if p.join_s is not None]
    while time.monotonic() < t + run.args.reveal_deadline and any(item not in p.seen for p in live):
        await asyncio.sleep(0.05)
    seen = [p.seen[item] - t for p in live if item in p.seen]
    return {
        "item": item,
        "at_s": round(t - run.t0, 1),
        "store_ms": round(stored * 1000, 1),
        "s": spread(seen),
        "after_stored_s": spread([x - stored for x in seen]),
        "missed": sum(item not in p.seen for p in live),
        "cpu": meter.read(),
        "client_lag_max_ms": run.lag_max(t, time.monotonic()),
        "_t": t,
    }


def split_reveal(r: dict, phones: list[Phone]) -> None:
    """The reveal's times for the phones the kill reached, and for the others."""
    t, item = r.pop("_t"), r["item"]
    for name, hit in (("moved", True), ("others", False)):
        group = [p for p in phones if p.join_s is not None and p.hit == hit]
        r[name] = {
            "phones": len(group),
            "s": spread([p.seen[item] - t for p in group if item in p.seen]),
            "missed": sum(item not in p.seen for p in group),
        }


#: A line of HAProxy's httplog: retries ("+1": sent again to another server), the captured
#: request tag, method and path.
_LOG = re.compile(r'-?\d+/-?\d+/-?\d+/-?\d+/(\+?\d+) \d+/\d+ \{([^}]*)\} "(\S+) (\S+)')


def redispatched(log: str, killed_wall: float, phones: list[Phone]) -> dict:
    """Mark the phones whose request, held by the replica at its kill, HAProxy sent again to
    a live one (a "+1" line of its log, the request sent before the kill); also counted:
    requests sent after the kill, refused by the dead replica, then sent to a live one."""
    held: Counter = Counter()
    after: Counter = Counter()
    for line in log.splitlines():
        m = _LOG.search(line)
        if m is None or m.group(1) == "0" or "/join/" not in m.group(4):
            continue
        kind = "poll" if "/state" in m.group(4) else m.group(3).lower()
        i, _, seq = m.group(2).partition(".")
        if not (i.isdigit() and seq.isdigit() and int(i) < len(phones)):
            continue
        phone = phones[int(i)]
        if int(seq) < len(phone.sent) and phone.sent[int(seq)] < killed_wall:
            phone.redispatched = True
            held[kind] += 1
        else:
            after[kind] += 1
    return {"held_and_sent_again": dict(held), "refused_and_sent_again": dict(after)}


async def teacher_tally(run: Run, servers: Servers, key: str, until: float, out: list) -> None:
    """The teacher's page reads the tally every ``--tally-every`` s during the answers."""
    while run.args.tally_every > 0 and time.monotonic() < until and not run.stop.is_set():
        t = time.monotonic()
        try:
            await asyncio.to_thread(servers.store.tally, run.code, key)
            out.append(time.monotonic() - t)
        except Exception as exc:  # noqa: BLE001 - counted, the class goes on
            run.error(f"tally: {type(exc).__name__}")
        await asyncio.sleep(run.args.tally_every)


async def midclass(run: Run, servers: Servers, key: str, phones: list[Phone], total: int):
    """Once half the answers are acknowledged: kill a replica (replicas), reveal question 1."""
    deadline = run.t0 + run.args.ramp + run.args.window + run.args.answer_deadline
    while run.acked < total / 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    out: dict = {"acked_at_trigger": run.acked}
    if servers.count > 1:  # the replica holding the most requests (HAProxy's stats)
        held = [servers.proxy.held().get(n, 0) for n, _ in servers.proxy.servers]
        victim = max(range(servers.count), key=lambda i: held[i])
        run.killed_cookie = servers.proxy.servers[victim][1]
        for p in phones:
            p.on_killed = bool(p.replica) and p.replica == run.killed_cookie
        run.killed_at, run.killed_wall = time.monotonic(), time.time()
        await asyncio.to_thread(kit.kill, servers.replicas[victim].proc)
        out["kill"] = {
            "replica": f"replica {victim + 1}",
            "requests_held": held,
            "at_s": round(run.killed_at - run.t0, 1),
            "acked_before": run.acked,
            "phones_with_its_cookie": sum(p.on_killed for p in phones),
        }
    out["reveal"] = await reveal(run, servers, key, 0, phones)
    return out


async def joined_meter(run: Run, servers: Servers, phones: list[Phone]) -> dict:
    """The machine's CPU while the phones join (until the last has joined or given up)."""
    meter = Meter(servers)
    deadline = run.t0 + run.args.ramp + 120
    while time.monotonic() < deadline and not all(p.join_s is not None or p.done for p in phones):
        await asyncio.sleep(0.1)
    return meter.read()


async def idle_phase(run: Run, servers: Servers, phones: list[Phone], base: float) -> dict:
    """``--idle`` s of long polls on a class where nothing changes: CPU per phone, gross
    and net of ``base`` (ms of CPU per second of one server process with no phone)."""
    await asyncio.sleep(min(2.0, run.args.idle))  # the last answers' requests are over
    polls0, meter = run.requests["poll"], Meter(servers)
    await asyncio.sleep(run.args.idle)
    wall, _, own, server_cpu, other = meter.seconds()
    live = max(sum(p.join_s is not None for p in phones), 1)
    net = server_cpu * 1000 / wall - base * len(servers.processes())
    return {
        "seconds": round(wall, 1),
        "phones": live,
        "server_cpu_s": round(server_cpu, 3),
        "ms_per_phone_per_s": round(server_cpu * 1000 / live / wall, 4),
        "net_ms_per_phone_per_s": round(net / live, 4),
        "proxy_db_cpu_s": round(other, 3),
        "polls_answered": run.requests["poll"] - polls0,
        "client_cpu_share": round(own / wall, 3),
    }


async def baseline(servers: Servers, seconds: float) -> dict:
    """The servers' CPU with no phone (ms per second, all and per process)."""
    if seconds <= 0:
        return {}
    procs, meter = servers.processes(), Meter(servers)
    await asyncio.sleep(seconds)
    cpu = meter.seconds()[3] * 1000 / seconds
    per = cpu / max(len(procs), 1)
    return {"seconds": seconds, "server_cpu_ms_per_s": round(cpu, 3),
            "per_process_ms_per_s": round(per, 3)}  # fmt: skip


def verify(store: classroom.ClassStore, code: str, key: str, acked: dict) -> dict:
    """The store against what the students were told (``acked``: (student, item) ->
    (answer, nickname)): every acknowledged answer stored once, nothing else stored."""
    a = classroom.answers_table.c
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(a.student, a.item, a.answer, a.nickname).where(a.code == code)
        ).all()
    stored = {(s, int(i)): (ans, nick) for s, i, ans, nick in rows}
    return {
        "rows": len(rows),
        "count_rows": store.count_rows(code),
        "acknowledged": len(acked),
        "lost": sum(k not in stored for k in acked),
        "unacknowledged_rows": sum(k not in acked for k in stored),
        "wrong_answer": sum(k in stored and stored[k][0] != v[0] for k, v in acked.items()),
        "wrong_nickname": sum(k in stored and stored[k][1] != v[1] for k, v in acked.items()),
        "nicknames_match": store.nicknames(code, key) == sorted({n for _, n in acked.values()}),
        "tally_answered": sum(t["answered"] for t in store.tally(code, key).values()),
    }


async def run_class(args: argparse.Namespace, servers: Servers) -> dict:
    code, key = await asyncio.to_thread(servers.store.create, SEED, args.questions)
    run = Run(base=servers.url, code=code, args=args)
    rng = random.Random(args.seed)
    items = exercises.generate(seed=SEED, count=args.questions)
    phones = [  # some nicknames not ASCII
        Phone(i, f"Zoë {i}" if i % 10 == 3 else f"phone {i:04d}") for i in range(args.phones)
    ]
    for p in phones:
        plan(p, items, rng)
    lag = asyncio.create_task(loop_lag(run))
    out: dict = {"baseline": await baseline(servers, args.baseline)}
    run_meter = Meter(servers)
    run.t0 = time.monotonic() + 0.5
    window_end = run.t0 + args.window
    order = list(range(args.phones))
    rng.shuffle(order)
    starts = {i: run.t0 + args.ramp * k / max(args.phones, 1) for k, i in enumerate(order)}
    tasks = [asyncio.create_task(student(run, p, starts[p.i], window_end)) for p in phones]
    tallies: list[float] = []
    teacher = asyncio.create_task(teacher_tally(run, servers, key, window_end, tallies))
    whole = Meter(servers)
    joins = asyncio.create_task(joined_meter(run, servers, phones))
    out["midclass"] = await midclass(run, servers, key, phones, args.phones * args.questions)
    settled = window_end + args.answer_deadline + 5
    while time.monotonic() < settled and not all(p.done for p in phones):
        await asyncio.sleep(0.2)
    out["answers_done_s"] = round(time.monotonic() - run.t0, 1)
    out["cpu"] = {"join": await joins, "class": whole.read()}
    out["server_cpu_ms"] = per_operation(out, phones, run)
    teacher.cancel()
    base = out["baseline"].get("per_process_ms_per_s", 0.0)
    out["idle"] = await idle_phase(run, servers, phones, base)
    if args.questions > 1:
        out["reveal_end"] = await reveal(run, servers, key, 1, phones)
    gate = asyncio.Semaphore(50)  # reloads 50 at a time: not a burst of their own
    live = [p for p in phones if p.join_s is not None]
    mine_ok = await asyncio.gather(*(reload_mine(run, p, gate) for p in live))
    run.stop.set()
    await asyncio.wait(tasks, timeout=60)
    for t in [*tasks, lag]:
        t.cancel()
    wall, _, client_cpu, server_cpu, _ = run_meter.seconds()
    acked = {(p.student, i): (a, p.nickname) for p in phones for i, a in p.acked.items()}
    out["store"] = await asyncio.to_thread(verify, servers.store, code, key, acked)
    out["store"]["mine_mismatch"] = sum(not ok for ok in mine_ok)
    if run.killed_wall is not None:
        log = servers.proxy.log_path
        log = log.read_text(errors="replace") if log.exists() else ""
        out["midclass"]["kill"].update(redispatched(log, run.killed_wall, phones))
    for r in (out["midclass"]["reveal"], out.get("reveal_end")):
        if r and run.killed_at is not None:
            split_reveal(r, phones)
        elif r:
            r.pop("_t")
    out.update(_figures(run, phones, tallies))
    out["server_cpu_s"] = round(server_cpu, 1)
    out["client"] = {
        "cpu_s": round(client_cpu, 1),
        "wall_s": round(wall, 1),
        "cpu_share_of_machine": round(client_cpu / wall / (os.cpu_count() or 1), 3),
        "loop_lag_ms": spread([x for _, x in run.lag], 1000, 1),
    }
    return out


def per_operation(out: dict, phones: list[Phone], run: Run) -> dict:
    """The servers' CPU per join, per check and per phone woken by the mid-class reveal
    (ms): what the machine's load does not change much, unlike the times."""
    joined = sum(p.join_s is not None for p in phones) or 1
    join, whole = out["cpu"]["join"]["servers_cpu_s"], out["cpu"]["class"]["servers_cpu_s"]
    reveal = out["midclass"]["reveal"]["cpu"]["servers_cpu_s"]
    return {
        "per_join": round(join * 1000 / joined, 2),
        "per_check": round((whole - join - reveal) * 1000 / max(len(run.checks), 1), 2),
        "per_phone_at_reveal": round(reveal * 1000 / joined, 2),
    }


def _figures(run: Run, phones: list[Phone], tallies: list[float]) -> dict:
    joined = [p for p in phones if p.join_s is not None]
    join_bytes = [p.join_bytes for p in joined] or [0]
    out = {
        "joined": len(joined),
        "join_s": spread([p.join_s for p in joined]),
        "join_bytes": {"mean": round(statistics.fmean(join_bytes)), "max": max(join_bytes)},
        "join_requests": max((p.join_requests for p in joined), default=0),
        "checks": len(run.checks),
        "check_s": spread(run.checks),
        "check_tries": {str(k): v for k, v in sorted(run.check_tries.items())},
        "errors": sum(run.errors.values()),
        "error_kinds": dict(run.errors),
        "retries": dict(run.retries),
        "poll_errors": dict(sum((p.poll_errors for p in phones), Counter())),
        "requests": dict(run.requests),
        "tally_reads": spread(tallies, 1000, 1),
    }
    if run.killed_at is not None:
        on = [p for p in phones if p.on_killed]
        out["moved"] = {
            "phones_with_its_cookie": len(on),
            "cookie_moved_to_another": sum(p.replica != run.killed_cookie for p in on),
            "saw_a_failure_after_kill": sum(p.failed_after_kill for p in phones),
            "redispatched": sum(p.redispatched for p in phones),
            "hit": sum(p.hit for p in phones),
        }
    return out


def tally_part(args: argparse.Namespace) -> dict:
    """``--part tally``: an answer stored, until the teacher's page (``serve.py``, headless
    Chromium) shows it, at a random moment of its 2 s refresh cycle; ``--tally-samples``."""
    seconds, rng = [], random.Random(3)
    with Servers(1, False) as servers, kit.browser() as browser:
        store = servers.store
        code, key = store.create(SEED, 8)
        _, page = kit.tab(browser, (1280, 800))
        page.goto(f"{servers.url}/exercises?class={code}&teacher={key}")
        page.get_by_text("0 students · 0 answers").wait_for(timeout=90_000)
        for n in range(1, args.tally_samples + 1):
            time.sleep(rng.uniform(0.0, 2.0))
            s = time.perf_counter()
            store.submit(code, f"tally{n}", 0, "1")
            page.get_by_text(f"{n} student{'s' if n != 1 else ''} · ").wait_for(timeout=30_000)
            seconds.append(time.perf_counter() - s)
    return {"samples": len(seconds), "tally_s": spread(seconds, 1, 2),
            "tally_s_mean": round(statistics.fmean(seconds), 2) if seconds else None}  # fmt: skip


def view_question(students: int, threads: int) -> dict:
    """``--part predict``: ``students`` answering one view question at once, the tally."""
    weights = engine.softmax(np.random.default_rng(0).standard_normal((2, 12, 12)) * 2)
    q = predict.top_key(weights, 0, 3, [f"t{i}" for i in range(12)])
    with tempfile.TemporaryDirectory() as tmp:
        store = classroom.ClassStore(f"sqlite:///{Path(tmp) / 'classes.db'}")
        code, key = store.create(1, 8)
        qid = store.ask(
            code, key, page="playground", link="N=12", view="bench", kind=q.kind,
            prompt=q.prompt, choices=list(q.choices), answer=q.answer, detail=q.detail,
        )  # fmt: skip
        times: list[float] = []
        errors = 0

        def one(s: int) -> None:
            nonlocal errors
            t0 = time.perf_counter()
            try:
                store.answer_question(code, f"student{s:05d}", qid, s % len(q.choices))
            except Exception:  # counted, not raised: the report says how many
                errors += 1
                return
            times.append(time.perf_counter() - t0)

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(students)))
        tally = store.question_tally(code, key, qid)
        out = {
            "students": students,
            "threads": threads,
            "errors": errors,
            "acknowledged": len(times),
            "rows": sum(tally),
            "answer_ms_p50": round(kit.percentile(times, 50) * 1000, 2),
            "answer_ms_p95": round(kit.percentile(times, 95) * 1000, 2),
            "question_tally_ms": timed_ms(lambda: store.question_tally(code, key, qid), 50),
            "question_ms": timed_ms(lambda: store.question(code), 50),
        }
        store.dispose()
    fig = viz.heatmaps.attention_figure(weights[0], what="weights")
    out["top_key_ms"] = timed_ms(lambda: predict.top_key(weights, 0, 3), 200)
    out["outline_cells_ms"] = timed_ms(lambda: viz.classroom.outline_cells(fig, [(3, 4)]), 200)
    return out


def projector_parts(n: int, repeat: int) -> dict[str, float]:
    """The pure parts of a projector rerun at N = ``n`` tokens."""
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((9, n, n))  # (H, N, N)
    mask = engine.causal_mask(n)
    causal = engine.softmax(np.where(mask, scores, -np.inf))  # (H, N, N)
    un, sc = engine.softmax(scores * 8), engine.softmax(scores)
    out = rng.standard_normal((n, n))  # (N, D)
    moved = out[rng.permutation(n)]
    fig = viz.heatmaps.attention_figure(causal[0], what="weights", mask=mask)
    b = viz.style.pool_factor(n)
    span = (-b / 2, (n - 1) // b * b + b / 2)
    diagonal = predict.answer_cells("previous_head", {"head": 0}, n)
    return {
        "top_key_masked_ms": timed_ms(lambda: predict.top_key(causal, 0, n - 1, mask=mask), repeat),
        "sharper_row_ms": timed_ms(lambda: predict.sharper_row(un, sc, 0, n // 2), repeat),
        "moved_row_ms": timed_ms(lambda: predict.moved_row(out, moved, n // 2), repeat),
        "previous_head_9_heads_ms": timed_ms(lambda: predict.previous_head(causal), repeat),
        "outline_row_ms": timed_ms(
            lambda: viz.classroom.outline_row(fig, n // 2, span, "rows", n), repeat
        ),
        "outline_diagonal_ms": timed_ms(
            lambda: viz.classroom.outline_cells(fig, diagonal, "rows", n), repeat
        ),
    }


def predict_part(args: argparse.Namespace) -> dict:
    if args.pages:
        return {f"N={n}": projector_parts(n, repeat) for n, repeat in ((12, 200), (512, 20))}
    return view_question(args.phones, args.threads)


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = kit.parser(__doc__)
    ap.add_argument("--part", choices=("hall", "tally", "predict"), default="hall")
    ap.add_argument("--phones", type=int, default=300, help="phones on the page")
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--window", type=float, default=120.0, help="s for all the answers")
    ap.add_argument("--ramp", type=float, default=10.0, help="s over which the phones join")
    ap.add_argument("--idle", type=float, default=50.0, help="s of the idle measurement")
    ap.add_argument("--baseline", type=float, default=10.0, help="s of server CPU, no phone")
    ap.add_argument("--replicas", type=int, default=1)
    ap.add_argument("--postgres", action="store_true", help="PostgreSQL (implied by replicas)")
    ap.add_argument("--reveal-deadline", type=float, default=30.0)
    ap.add_argument("--answer-deadline", type=float, default=60.0)
    ap.add_argument("--tally-every", type=float, default=2.0)
    ap.add_argument("--tally-samples", type=int, default=10, help="answers timed (tally)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=16, help="predict: threads answering")
    ap.add_argument("--pages", action="store_true", help="predict: the other pages' questions")
    args = ap.parse_args(argv)
    if not 1 <= args.questions <= exercises.COUNT_MAX or args.phones < 1:
        ap.error("--questions 1..COUNT_MAX and at least one phone")
    return args


def hall_part(args: argparse.Namespace) -> dict:
    with Servers(args.replicas, args.postgres) as servers:
        res = asyncio.run(run_class(args, servers))
        res["server_log_problems"] = servers.log_problems()
    db = "PostgreSQL" if servers.postgres else "SQLite"
    where = f"{servers.count} replicas behind HAProxy" if servers.count > 1 else "one server"
    return {
        "scenario": f"{args.phones} phones, {args.questions} questions in {args.window:g} s, "
        f"{where}, {db}",
        "ramp_s": args.ramp,
        "replicas": servers.count,
        **res,
    }


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    load = os.getloadavg()
    res = {"hall": hall_part, "tally": tally_part, "predict": predict_part}[args.part](args)
    res = {
        "part": args.part,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_before": " / ".join(f"{x:.1f}" for x in load),
        "load_after": " / ".join(f"{x:.1f}" for x in os.getloadavg()),
        **({"phones": args.phones, "window_s": args.window} if args.part == "hall" else {}),
        **({} if args.part == "predict" else {"questions": args.questions}),
        **res,
    }
    kit.show(res)
    kit.write_json(args.json, res, say=False)
    return res


if __name__ == "__main__":
    main()
