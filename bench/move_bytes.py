"""What a slider move sends, without a browser: bytes (and deflated), messages, deltas by
element and the server's CPU per rerun, per page and language (issue 46; docs/benchmarks.md).

    python bench/move_bytes.py --langs en,es,zh_CN,ar --pages ""  # the languages, playground
    python bench/move_bytes.py --pages step_by_step --detail      # bytes by element
    python bench/move_bytes.py --join --langs en,es,zh_CN,ar       # the phone page's bytes
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import time
import zlib

import kit
from kit import Server
from stclient import Session
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attnviz.ui.streamlit_private import HIDDEN_BOARDS


def label(fm: ForwardMsg) -> str:
    """What a message is: its kind, a delta's element type, a board by its key."""
    kind = fm.WhichOneof("type")
    if kind != "delta":
        return kind
    if fm.delta.WhichOneof("type") != "new_element":
        return "delta:" + fm.delta.WhichOneof("type")
    el = fm.delta.new_element
    et = el.WhichOneof("type")
    return "board:" + el.bidi_component.id.split("-")[-1][:30] if et == "bidi_component" else et


class Deflater:
    """A message's bytes under permessage-deflate as uvicorn's ``websockets`` does it (window
    2^12, context kept, memLevel 5): compressed and flushed, less the 4 bytes stripped."""

    def __init__(self) -> None:
        self.z = zlib.compressobj(wbits=-12, memLevel=5)

    def size(self, data: bytes) -> int:
        return len(self.z.compress(data) + self.z.flush(zlib.Z_SYNC_FLUSH)) - 4


class Probe(Session):
    """A session that also notes each message of the last run (label, bytes, deflated, ms
    from the rerun's request to its arrival)."""

    deflater: Deflater | None = None

    def rerun(self, changes: dict | None = None):
        self.log: list[tuple[str, int, int, float]] = []
        self.deflater = self.deflater or Deflater()  # one per connection, as the server's
        self.t0 = time.perf_counter()
        return super().rerun(changes)

    def noted(self, data: bytes, fm: ForwardMsg) -> None:
        ms = 1000 * (time.perf_counter() - self.t0)
        self.log.append((label(fm), len(data), self.deflater.size(data), ms))


def arrivals(log: list[tuple[str, int, int, float]]) -> tuple[float, float, float]:
    """When a run's first element, first board drawn on the page (not one of the hidden
    ones: preload, prefetch, step keys) and last message came (ms; nan if none)."""
    first = [m[3] for m in log if m[0] not in ("session_status_changed", "new_session")]
    shown = [m for m in log if m[0].startswith("board:")]
    board = [m[3] for m in shown if m[0].removeprefix("board:") not in HIDDEN_BOARDS]
    return (first or [float("nan")])[0], (board or [float("nan")])[0], log[-1][3]


#: Every response as the phone had it: [url, bytes sent, body bytes decoded, ms from the
#: request to the response's end]; then whether the state, the answers and the hello came.
LOADED_JS = """() => performance.getEntriesByType('navigation')
  .concat(performance.getEntriesByType('resource'))
  .map(e => [e.name, e.transferSize, e.decodedBodySize, e.responseEnd - e.requestStart])"""
SETTLED_JS = """() => ['state', 'mine', 'hello'].every(k => performance
  .getEntriesByType('resource').some(e => e.name.includes(`/${k}?`) && e.responseEnd > 0))"""


def join_bytes(langs: list[str], contexts: int, detail: bool) -> None:  # pragma: no cover
    """The phone page (``/join?class=``, ``&lang=`` unless English) in fresh 390x844 contexts:
    its bytes as sent and decoded, the median of ``contexts``, the change from the first."""
    import tempfile

    from attnviz.classroom import DATA_DIR_ENV, exercises
    from attnviz.classroom.store import ClassStore

    data = tempfile.mkdtemp(prefix="attnviz-join-")
    code, _key = ClassStore(f"sqlite:///{data}/classes.db").create(5, len(exercises.KINDS))
    first: tuple[float, float] | None = None
    with Server("serve.py", env={DATA_DIR_ENV: data}) as srv, kit.browser() as b:
        for lang in langs:
            runs = []
            for _ in range(contexts):
                ctx, page = kit.tab(b, (390, 844), is_mobile=True)
                with ctx:
                    page.goto(f"{srv.url}/join?class={code}" + f"&lang={lang}" * (lang != "en"))
                    page.wait_for_function(SETTLED_JS)
                    runs.append(page.evaluate(LOADED_JS))
            wire = statistics.median(sum(r[1] for r in run) for run in runs)
            raw = statistics.median(sum(r[2] for r in run) for run in runs)
            first = first or (wire, raw)
            print(
                f"{lang:6s} {len(runs[0])} requests  {wire / 1000:6.2f} KB sent "
                f"({wire / first[0] - 1:+6.1%})  {raw / 1000:6.2f} KB decoded "
                f"({raw / first[1] - 1:+6.1%})",
                flush=True,
            )
            for url, sent, body, ms in runs[-1] if detail else ():
                name = url.split("/")[-1].split("?")[0]
                print(f"      {name:12s} {sent:6d} {body:6d} {ms:6.1f} ms")


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - a benchmark
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default="serve.py")
    ap.add_argument("--pages", default=",multi_head,step_by_step", help="url paths ('' = home)")
    ap.add_argument("--langs", default="en")
    ap.add_argument("--moves", type=int, default=12)
    ap.add_argument("--detail", action="store_true", help="bytes by element, the last move")
    ap.add_argument("--join", action="store_true", help="the phone page's bytes instead")
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()}")
    if args.join:
        join_bytes(args.langs.split(","), 2, args.detail)
        return 0
    with Server(args.app) as srv:
        pid = srv.proc.pid
        for lang in args.langs.split(","):
            for page in args.pages.split(","):
                query = "" if lang == "en" else f"lang={lang}"
                with Probe(srv.url, page=page, query=query, timeout=180) as s:
                    s.rerun()
                    for v in (7, 8, 9, 10):
                        s.rerun({"N": v})
                    rows = []
                    for i in range(args.moves):
                        c0 = kit.cpu_s(pid)
                        r = s.rerun({"N": 7 + i % 4})
                        wire = sum(x[2] for x in s.log)
                        rows.append((kit.cpu_s(pid) - c0, r.bytes, r.messages, list(s.log), wire))
                        if not r.ok:
                            raise SystemExit(f"{page or 'home'} ?{query}: {r.errors}")
                kb = statistics.median(x[1] for x in rows) / 1024
                msgs = statistics.median(x[2] for x in rows)
                cpu = 1000 * statistics.mean(x[0] for x in rows)
                wire = statistics.median(x[4] for x in rows) / 1024
                times = zip(*(arrivals(x[3]) for x in rows), strict=True)
                came = [statistics.median(a) for a in times]
                print(
                    f"{lang:6s} {page or 'home':14s} {kb:6.1f} KB/move  ({wire:5.1f} deflated)  "
                    f"{msgs:5.1f} messages  "
                    f"server CPU {cpu:4.0f} ms/move (mean of {len(rows)})  came after "
                    "{:.0f} / {:.0f} / {:.0f} ms (first element / board / last)".format(*came),
                    flush=True,
                )
                if args.detail:
                    size: collections.Counter = collections.Counter()
                    count: collections.Counter = collections.Counter()
                    for name, n, *_ in rows[-1][3]:
                        size[name] += n
                        count[name] += 1
                    for name, n in size.most_common():
                        print(f"      {name:40s} {count[name]:3d} x {n / 1024:7.2f} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
