"""The Cross-attention page's slider against the playground's, in a real browser (same run).

Time from a key press on a slider (the page's ``N_src``; the playground's sidebar ``N``) to
the weights chart drawn with its new column count, at 1440x900, ``--moves`` moves each,
alternating right and left, two rounds per page; the median and the largest of each round.

    python bench/cross_latency.py [--moves 8]

Needs Debian's chromium and playwright (as tests/e2e); starts its own server.
"""

from __future__ import annotations

import argparse
import statistics
import time

import kit
from e2e_app import BrowserSession

PAGES = [  # name, path, slider key, weights chart key
    ("cross N_src", "/cross?N_src=20&N_tgt=12", "N_src", "cx_top_weights"),
    ("playground N", "/?N=12", "N", "pg_weights"),
]


def cols_js(chart: str) -> str:
    """JS: the column count of ``chart``'s heatmap as drawn (0 before its first draw)."""
    return (
        f"() => {{ const gd = document.querySelector('[data-key=\"{chart}\"] .js-plotly-plot');"
        " return gd && gd.calcdata ? gd.calcdata[0][0].z[0].length : 0; }"
    )


def moves(browser, server, path: str, slider: str, chart: str, count: int) -> list[float]:
    """Seconds from each key press to the chart redrawn with its new width."""
    cols = cols_js(chart)
    s = BrowserSession(browser, server, (1440, 900))
    try:
        s.open(path)
        thumb = s.page.locator(f".st-key-{slider} input[type='range']").first
        out = []
        for i in range(count):
            thumb.focus()
            before = s.page.evaluate(cols)
            t = time.perf_counter()
            s.page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
            s.page.wait_for_function(f"() => ({cols})() !== {before}", polling="raf")
            out.append(time.perf_counter() - t)
            s.page.wait_for_timeout(600)
        return out
    finally:
        s.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=8)
    args = ap.parse_args()
    with kit.e2e_server() as server, kit.browser() as browser:
        for name, path, slider, chart in PAGES * 2:
            t = moves(browser, server, path, slider, chart, args.moves)
            print(
                f"{name}: key -> weights redrawn, median {statistics.median(t) * 1000:.0f} ms "
                f"(max {max(t) * 1000:.0f}) over {len(t)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
