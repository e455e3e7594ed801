"""A page that draws attnviz figures with plotly.js as the board does (a plot div with
``role="img"`` and plotly's mode bar, the board's stylesheet ``board.css``) and attaches the
board's accessibility modules to each chart (``attnviz/ui/board/js/table.js``, ``keys.js``)
through the per-chart hook, ``attach(chartElement, figure, api)``; ``api`` records its calls
in ``window.__calls``.

Served from memory through playwright's routing (no server): ``open_harness(page, charts)``.
"""

from __future__ import annotations

import json
from pathlib import Path

from attnviz.ui.board import board_plotly, figure_json

ROOT = Path(__file__).resolve().parents[2]
BOARD = ROOT / "attnviz" / "ui" / "board" / "js"
ORIGIN = "http://attnviz.test"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>attnviz accessibility harness</title>
<script src="/plotly.min.js"></script>
<link rel="stylesheet" href="/board/board.css">
<style>body { font-family: sans-serif; margin: 1rem; } .cell { position: relative; }
.board { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }</style>
</head><body><main>
<h1>Charts</h1>
<button id="before" type="button">Before the charts</button>
<div id="root" class="board"></div>
<button id="after" type="button">After the charts</button>
</main>
<script type="module">
import * as table from "/board/table.js";
import * as keys from "/board/keys.js";
import * as tools from "/board/tools.js";
window.__calls = [];
window.drawCharts = async (charts) => {
  const root = document.getElementById("root");
  for (const c of charts) {
    const cell = document.createElement("div");
    cell.className = "cell";
    const gd = document.createElement("div");
    gd.className = "plot";
    gd.setAttribute("role", "img");
    gd.setAttribute("aria-label", "Chart: " + c.label);
    gd.dataset.key = c.key;
    cell.appendChild(gd);
    root.appendChild(cell);
    await Plotly.newPlot(gd, c.figure.data, c.figure.layout, { displaylogo: false });
    const rec = (...a) => window.__calls.push([a[0], c.key, ...a.slice(1)]);
    const api = {
      key: c.key,
      Plotly: window.Plotly,
      hover: (i, j) => rec("hover", i, j),
      clear: () => rec("clear"),
      // a selectable chart: an attention chart whose link selects (as ui.link_attn gives)
      ...(c.select
        ? { select: (i, j) => rec("select", i, j), link: { kind: "attn", select: true } }
        : {}),
    };
    table.attach(gd, c.figure, api);
    keys.attach(gd, c.figure, api);
    tools.attach(gd, c.figure, api);
  }
  document.body.dataset.state = "drawn";
};
window.__ready = true;
</script></body></html>
"""


def _route(route) -> None:
    path = route.request.url[len(ORIGIN) :].split("?", 1)[0]
    if path in ("/", "/index.html"):
        return route.fulfill(status=200, content_type="text/html", body=PAGE)
    if path == "/plotly.min.js":
        return route.fulfill(status=200, content_type="text/javascript", path=str(board_plotly()))
    if path.startswith("/board/") and path.endswith((".js", ".css")):
        f = BOARD / path[len("/board/") :]
        kind = "text/css" if f.suffix == ".css" else "text/javascript"
        if f.is_file() and f.parent == BOARD:
            return route.fulfill(status=200, content_type=kind, path=str(f))
    return route.fulfill(status=404, body="not found")


def open_harness(page, charts: list[tuple[str, object, bool]]) -> None:
    """Open the harness in ``page`` and draw ``charts``: (key, plotly figure, selectable)."""
    page.route(ORIGIN + "/**", _route)
    page.goto(ORIGIN + "/")
    page.wait_for_function("() => window.__ready === true")
    payload = [
        {
            "key": key,
            "figure": figure_json(fig),
            "label": str(fig.layout.title.text or key),
            "select": select,
        }
        for key, fig, select in charts
    ]
    page.evaluate(f"() => window.drawCharts({json.dumps(payload)})")
    page.wait_for_function("() => document.body.dataset.state === 'drawn'")
