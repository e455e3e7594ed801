"""A live class with real phones: ``--phones`` (30) headless Chromium pages at 390x844 open
the join link of one server (``streamlit run serve.py``, SQLite) at once, each answers one
question, then the teacher reveals a question.

Measured per phone, in the browser: **join**, from the start of the navigation until the
page shows the class's state (``document.body.dataset.state`` set by the page's script after
its first state request), and the part of it spent in its requests (Resource Timing: sent
to read, server and network; the rest is the browser's own work, which here shares the
machine's 2 cores among all the phones and the server, where each real phone has its
own); **check**, from the click on Check until the verdict shows;
**reveal**, from the teacher's reveal (made in the store, as the teacher's Reveal does) until
the revealed answer shows on that phone. Also each phone's requests and bytes
(``performance`` entries) and whether any request went to another host.

    python bench/class_phones.py                  # 30 phones
    python bench/class_phones.py --phones 10 --json phones.json

All on 127.0.0.1; the run is bounded (every wait has a deadline).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
from browser_latency import CHROMIUM_ARGS  # the browser's flags (tests/e2e/e2e_app.py)
from stclient import Server

from attnviz import classroom
from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore

CHROMIUM = "/usr/bin/chromium"
SEED, COUNT = 5, 8
WAIT_MS = 60_000

RESOURCES_JS = """() => performance.getEntriesByType('navigation')
  .concat(performance.getEntriesByType('resource'))
  .map(e => [e.name, e.transferSize || e.encodedBodySize || 0,
             e.responseEnd - e.requestStart])"""


def stats(values: list[float]) -> dict:
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return {"n": 0}
    return {
        "n": int(a.size),
        "p50": round(float(np.percentile(a, 50)), 3),
        "p95": round(float(np.percentile(a, 95)), 3),
        "max": round(float(a.max()), 3),
    }


async def join(context, url: str, host: str) -> dict:
    page = await context.new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    t0 = time.monotonic()
    await page.goto(url, wait_until="commit", timeout=WAIT_MS)
    await page.wait_for_function("() => !!document.body.dataset.state", timeout=WAIT_MS)
    joined = time.monotonic() - t0
    loaded = await page.evaluate(RESOURCES_JS)
    others = [u for u in asked if urlparse(u).netloc != host and not u.startswith("data:")]
    return {
        "page": page,
        "join_s": joined,
        # the requests' own times (request sent to response read: server and network),
        # the part of a join that does not depend on the phone's CPU
        "server_s": sum(ms for _, _, ms in loaded) / 1000,
        "requests": len(asked),
        "bytes": sum(size for _, size, _ in loaded),
        "other_hosts": others,
    }


async def check(phone: dict, answer: str) -> float:
    page = phone["page"]
    card = page.locator("#q0")
    await card.get_by_label("Your answer").fill(answer)
    t0 = time.monotonic()
    await card.get_by_role("button", name="Check").click()
    await page.wait_for_function(
        "() => /^(Right|Not quite)/.test(document.querySelector('#q0 .verdict').innerText)",
        timeout=WAIT_MS,
    )
    return time.monotonic() - t0


async def revealed(phone: dict, t0: float) -> float:
    await phone["page"].wait_for_function(
        "() => !document.querySelector('#q1 .revealed').hidden", timeout=WAIT_MS
    )
    return time.monotonic() - t0


async def run(phones: int, url: str, store: ClassStore, code: str, key: str) -> dict:
    from playwright.async_api import async_playwright

    items = exercises.generate(seed=SEED, count=COUNT)
    host = urlparse(url).netloc
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        contexts = [
            await browser.new_context(
                viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
            )
            for _ in range(phones)
        ]
        joined = await asyncio.gather(
            *(join(c, f"{url}/join?class={code}", host) for c in contexts)
        )
        answers = [items[0].answer_text if i % 2 == 0 else "17" for i in range(phones)]
        checks = await asyncio.gather(*(check(p, a) for p, a in zip(joined, answers, strict=True)))
        t0 = time.monotonic()
        await asyncio.to_thread(store.reveal, code, key, 1)
        reveals = await asyncio.gather(*(revealed(p, t0) for p in joined))
        await browser.close()
    return {
        "phones": phones,
        "join_s": stats([p["join_s"] for p in joined]),
        "join_requests_s": stats([p["server_s"] for p in joined]),
        "check_s": stats(checks),
        "reveal_s": stats(reveals),
        "requests_per_phone": max(p["requests"] for p in joined),
        "bytes_per_phone": max(p["bytes"] for p in joined),
        "other_hosts": sorted({u for p in joined for u in p["other_hosts"]}),
        "stored": store.count_rows(code),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phones", type=int, default=30)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="attnviz-phones-"))
    with Server("serve.py", env={classroom.DATA_DIR_ENV: str(data)}) as srv:
        store = ClassStore(f"sqlite:///{data / 'classes.db'}")
        code, key = store.create(SEED, COUNT)
        report = asyncio.run(run(args.phones, srv.url, store, code, key))
        store.dispose()
    for name in ("join_s", "join_requests_s", "check_s", "reveal_s"):
        s = report[name]
        print(
            f"{name:9} n={s['n']}  p50 {s['p50']:.2f} s  p95 {s['p95']:.2f} s  max {s['max']:.2f} s"
        )
    print(
        f"per phone: {report['requests_per_phone']} requests, {report['bytes_per_phone']} bytes; "
        f"other hosts: {report['other_hosts'] or 'none'}; answers stored {report['stored']}"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    ok = report["stored"] == args.phones and not report["other_hosts"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
