"""Speed budget of issue 3 in AppTest: the playground's rerun against bench/bare_app.py
(<= 1.5x) and its plotly payload at N=256 (< 1.5 MB); docs/benchmarks.md.

    python bench/rerun.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import json
import statistics

import kit
from streamlit.testing.v1 import AppTest

APP = str(kit.REPO / "app.py")
BARE = str(kit.REPO / kit.BARE_APP)
BUDGET_RATIO = 1.5
BUDGET_BYTES = 1.5e6
kit.server_like_pages()


def start(path: str, query: dict) -> AppTest:
    at = AppTest.from_file(path, default_timeout=300)
    at.query_params.update(query)
    kit.run_app(at, path)
    return at


def timed(at: AppTest, seed: int | None) -> float:
    if seed is not None:
        at.session_state["seed"] = seed
    return kit.run_app(at, "rerun")


def payload(at: AppTest) -> tuple[int, int]:
    """Bytes of chart data and the number of charts: ``st.plotly_chart``'s JSON (the bare
    page) and the boards' data (each holds a page section's figures)."""
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    size, count = sum(len(s.encode()) for s in specs), len(specs)
    for el in at.get("bidi_component"):  # components v2 (the board): its data, JSON bytes
        args = el.proto.bytes or el.proto.json.encode() or b"{}"
        size += len(args)
        count += len(json.loads(args).get("figures", []))
    return size, count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    query = {"N": "64", "D": "64", "heads": "8"}
    play, bare = start(APP, query), start(BARE, query)
    n_play, n_bare = payload(play)[1], payload(bare)[1]
    ok = True
    print(
        f"rerun at N=64, D=64, heads=8 ({args.repeats} reruns each, median; "
        f"playground {n_play} plots, bare {n_bare} plots)"
    )
    for kind in ("same inputs", "new seed"):
        tp, tb = [], []
        for i in range(args.repeats):
            seed = None if kind == "same inputs" else 1000 + i
            tp.append(timed(play, seed))
            tb.append(timed(bare, seed))
        mp, mb = statistics.median(tp), statistics.median(tb)
        ratio = mp / mb
        ok &= ratio <= BUDGET_RATIO
        print(
            f"  {kind:12s}: playground {mp * 1000:7.1f} ms | bare {mb * 1000:7.1f} ms | "
            f"ratio {ratio:.2f} (budget <= {BUDGET_RATIO}) "
            + ("OK" if ratio <= BUDGET_RATIO else "OVER")
        )
    for q in (
        {"N": "256", "D": "64", "heads": "8"},
        {"N": "256", "D": "64", "heads": "8", "mask": "causal"},
    ):
        at = start(APP, q)
        size, count = payload(at)
        ok &= size < BUDGET_BYTES
        print(
            f"payload of the playground at {json.dumps(q)}: {size / 1e6:.3f} MB in {count} "
            f"plots (budget < {BUDGET_BYTES / 1e6} MB) {'OK' if size < BUDGET_BYTES else 'OVER'}"
        )
    bare256 = start(BARE, {"N": "256", "D": "64", "heads": "8"})
    size, count = payload(bare256)
    print(
        f"(for comparison, the bare page at N=256, heads=8: {size / 1e6:.3f} MB in {count} plots)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
