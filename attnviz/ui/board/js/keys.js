// attnviz board, per-chart module: a heatmap (or bar chart) read and driven by keyboard
// (issue 18: "keyboard in the heatmap").
//
// - Tab focuses the chart; the first cell (or the last one visited) is outlined and
//   announced through an aria-live region: "query t2, key t4, weight 0.23, row sums to 1".
// - Arrows move one cell; Home / End: first / last cell of the row (with Ctrl: of the
//   chart); PageUp / PageDown: PAGE rows up / down. The linked views follow (api.hover), as
//   they follow the mouse.
// - A figure of several heatmaps (small multiples: one per head; the Heads section's six
//   pattern panels; the tiles of the model pages' grid of every head) is walked panel by
//   panel: `]` / `[` move to the same cell of the next / previous panel, whose name leads
//   the announcement ("head 1: query t2, key t4, ..."); in the tiled grid `}` / `{` move
//   a layer down / up.
// - Enter selects the cell's query (and head), as a click does (api.select), in attention
//   charts that select; in those that only carry their cells' arithmetic (cell.js) it works
//   the cell out. Escape leaves the chart.
// - A click or a tap on a cell moves the outline and the announcement there (a tap focuses
//   the chart: its outline and caption were left on the first cell).
// - PageUp / PageDown are also the presenter view's Previous / Next (presentation remotes
//   send them): the chart takes them only when it was focused from the keyboard
//   (:focus-visible), never after a mouse click on it.
//
// Hook (attnviz/ui/board/js/board.js): attach(chartElement, figure, api) after the chart is drawn;
// api.hover(i, j, t), api.select(i, j, t): row i, column j in the chart's data coordinates
// of trace t (the board turns them into query, key and head by the chart's link),
// api.clear() (optional), api.link (optional: the board's link spec). Pure parts (tested by
// `node --test tests/js/`): chartGrids, nextCell, nextPanel, announcement, coordinates.

import {
  attentionCells,
  axisKey,
  axisOf,
  barTraces,
  countsTokens,
  decode,
  figureTitle,
  nounOf,
  nounWord,
  readHeatmaps,
  tiles,
  tokenNames,
  weightsOf,
  wordOf,
} from "./figure.js";
import { _, fill, ngettext, separators } from "./i18n.js";
import { chartBar } from "./table.js";

export const PAGE = 5; // rows per PageUp / PageDown

// ------------------------------------------------------------------ pure

/** The grids of a tiled heatmap (figure.js tiles): one per tile (head), in the trace's own
 * data coordinates (the outline lands on the tile). */
function tileGrids(t, title) {
  return t.tiles.map((tile) => ({
    kind: "heatmap",
    title,
    panel: tile.name,
    stride: t.cols,
    xaxis: "x",
    yaxis: "y",
    z: tile.z,
    rows: t.size,
    cols: t.size,
    rowNoun: t.rowNoun,
    colNoun: t.colNoun,
    rowWord: t.rowWord,
    colWord: t.colWord,
    rowNames: t.names,
    colNames: t.names,
    valueName: t.valueName,
    weights: t.weights,
    pooled: t.pooled,
    x0: tile.x0,
    dx: 1,
    y0: tile.y0,
    dy: 1,
    xs: t.names.map((_, i) => tile.x0 + i),
    ys: t.names.map((_, i) => tile.y0 + i),
  }));
}

/** What the keyboard walks in a figure: one grid per heatmap trace (a figure of several,
 * e.g. one per head, is walked panel by panel: `[` / `]`), or its first bar trace (1 x
 * bars). A grid: {kind, panel, z, rows, cols, rowNoun, colNoun, rowNames, colNames,
 * valueName, weights, pooled, x0, dx, y0, dy, xs, ys, xaxis, yaxis, title}; `panel`: null
 * for a figure of one, else "head 2" (the link's `heads`) or the trace's name ("previous").
 * `link` (optional): the board's link spec of the chart. [] when there is nothing to walk. */
export function chartGrids(figure, link = null) {
  const layout = (figure && figure.layout) || {};
  const title = figureTitle(figure).split(" · ")[0];
  const tiled = tiles(figure);
  if (tiled) return tileGrids(tiled, title);
  const heatmaps = readHeatmaps(figure, link);
  if (heatmaps.length)
    return heatmaps.map(({ trace, ...h }) => ({ kind: "heatmap", title, ...h }));
  const [bar] = barTraces(figure);
  if (bar) {
    // The first trace read as vertical bars (x: the items, y: the values), as it always was.
    // Not yet figure.js readBars (the table's): for horizontal bars (the class tallies, the
    // next-token chart) and bars named by text (category items) the two differ.
    const y = decode(bar.y).map(Number);
    const xs = (decode(bar.x) || y.map((_, i) => i)).map(Number);
    const xa = axisOf(layout, bar.xaxis, "x");
    const colNoun = nounOf(layout, bar.xaxis, "x", "item");
    const meta = layout.meta || {};
    const q = Number.isInteger(meta.query) ? meta.query : null; // the bars' query (Python's)
    return [
      {
        kind: "bars",
        title,
        panel: null,
        xaxis: bar.xaxis || "x",
        yaxis: bar.yaxis || "y",
        z: [y],
        rows: 1,
        cols: y.length,
        rowNoun: q != null ? "query" : "",
        colNoun,
        rowWord: q != null ? _("query") : "",
        colWord: wordOf(layout, bar.xaxis, "x", colNoun),
        rowNames: [q != null ? `t${q}` : ""],
        colNames: tokenNames(xa, y.length, xs[0] || 0, 1, countsTokens(colNoun)),
        valueName: wordOf(layout, bar.yaxis, "y", "value"),
        weights: weightsOf(layout, nounOf(layout, bar.yaxis, "y", "")),
        pooled: false,
        x0: xs[0] || 0,
        dx: 1,
        y0: q != null ? q : 0,
        dy: 1,
        xs: xs.map((_, i) => (xs[0] || 0) + i),
        ys: [q != null ? q : 0],
      },
    ];
  }
  return [];
}

/** The first grid of a figure (see chartGrids), or null. */
export function chartGrid(figure, link = null) {
  return chartGrids(figure, link)[0] || null;
}

/** The panel a key moves to from `panel` among `count` panels: `]` the next, `[` the
 * previous (clamped); in panels laid out `stride` a row (the tiled grid of every head:
 * heads across, layers down) `}` / `{` the one a row below / above (or stay). Null for
 * another key. */
export function nextPanel(key, panel, count, stride = 0) {
  if (count < 2) return null;
  if (key === "]") return Math.min(count - 1, panel + 1);
  if (key === "[") return Math.max(0, panel - 1);
  if (stride > 0 && key === "}") return panel + stride < count ? panel + stride : panel;
  if (stride > 0 && key === "{") return panel - stride >= 0 ? panel - stride : panel;
  return null;
}

/** The cell a key moves to from `cell` ({row, col}) in a grid of `rows` x `cols`, or null
 * for a key the chart does not take. `ctrl`: Ctrl+Home / Ctrl+End go to the chart's
 * first / last cell. */
export function nextCell(key, cell, rows, cols, ctrl = false) {
  if (rows < 1 || cols < 1) return null;
  const clamp = (r, c) => ({
    row: Math.max(0, Math.min(rows - 1, r)),
    col: Math.max(0, Math.min(cols - 1, c)),
  });
  const { row, col } = cell || { row: 0, col: 0 };
  switch (key) {
    case "ArrowUp":
      return clamp(row - 1, col);
    case "ArrowDown":
      return clamp(row + 1, col);
    case "ArrowLeft":
      return clamp(row, col - 1);
    case "ArrowRight":
      return clamp(row, col + 1);
    case "Home":
      return ctrl ? clamp(0, 0) : clamp(row, 0);
    case "End":
      return ctrl ? clamp(rows - 1, cols - 1) : clamp(row, cols - 1);
    case "PageUp":
      return clamp(row - PAGE, col);
    case "PageDown":
      return clamp(row + PAGE, col);
    default:
      return null;
  }
}

/** A number as it is spoken: 2 decimals ("0.23"), 2 significant digits below 0.005
 * ("0.0012"), "−" for minus; a sum of 1.00 is "1". */
export function spoken(v, sum = false) {
  if (!Number.isFinite(v)) return _("masked");
  let s;
  if (v !== 0 && Math.abs(v) < 0.005) s = v.toPrecision(2);
  else s = v.toFixed(2);
  if (sum) s = s.replace(/\.?0+$/, "") || "0";
  const dec = separators()[0]; // the shown language's decimal sign ("0,23" in Spanish)
  if (dec !== ".") s = s.replace(".", dec);
  return s.startsWith("-") ? "−" + s.slice(1) : s;
}

/** A cell in data coordinates (y of its row, x of its column: what api.hover / api.select
 * take), and its query and key (token coordinates; null where the chart has no query or
 * key axis; the token of X, Q, K, V counts as the query). */
export function coordinates(grid, cell) {
  const y = grid.ys ? grid.ys[cell.row] : grid.y0 + cell.row * grid.dy;
  const x = grid.xs ? grid.xs[cell.col] : grid.x0 + cell.col * grid.dx;
  const at = (noun) => (grid.rowNoun === noun ? y : grid.colNoun === noun ? x : null);
  let query = at("query");
  const key = at("key");
  if (query == null && grid.rowNoun === "token") query = y; // X, Q, K, V: the token's row
  return { x, y, query, key };
}

/** The cell of `grid` at data coordinates (x, y) (a point in its plot), or null when the
 * point lies outside its cells. */
export function cellAt(grid, x, y) {
  const near = (vals, v, step) => {
    let best = -1;
    let dist = Infinity;
    vals.forEach((c, i) => {
      const d = Math.abs(c - v);
      if (d < dist) [best, dist] = [i, d];
    });
    return dist <= step / 2 + 1e-9 ? best : -1;
  };
  const xs = grid.xs || Array.from({ length: grid.cols }, (_, i) => grid.x0 + i * grid.dx);
  const ys = grid.ys || Array.from({ length: grid.rows }, (_, i) => grid.y0 + i * grid.dy);
  const col = near(xs, x, grid.dx || 1);
  const row = near(ys, y, grid.dy || 1);
  return col < 0 || row < 0 ? null : { row, col };
}

// The panel and cell under the pointer at (clientX, clientY), or null.
function pointedCell(gd, grids, clientX, clientY) {
  const rect = gd.getBoundingClientRect();
  for (let p = 0; p < grids.length; p++) {
    const g = grids[p];
    const area = g.kind === "heatmap" ? plotArea(gd, g) : null;
    if (!area || typeof area.xa.p2l !== "function") continue;
    const px = clientX - rect.left - area.xa._offset;
    const py = clientY - rect.top - area.ya._offset;
    if (px < 0 || py < 0 || px > area.xa._length || py > area.ya._length) continue;
    const cell = cellAt(g, area.xa.p2l(px), area.ya.p2l(py));
    if (cell) return { panel: p, cell };
  }
  return null;
}

/** What the live region says for a cell: "query t2, key t4, weight 0.23, row sums to 1";
 * in a figure of several panels the panel first: "head 1: query t2, key t4, …". */
export function announcement(grid, cell) {
  const v = grid.z[cell.row][cell.col];
  const names = [];
  const rowWord = grid.rowWord || nounWord(grid.rowNoun);
  const colWord = grid.colWord || nounWord(grid.colNoun);
  if (grid.rowNoun) names.push([grid.rowNoun, `${rowWord} ${grid.rowNames[cell.row]}`]);
  if (grid.colNoun) names.push([grid.colNoun, `${colWord} ${grid.colNames[cell.col]}`]);
  names.sort((a, b) => (a[0] === "query" ? -1 : b[0] === "query" ? 1 : 0)); // query first
  const parts = names.map((n) => n[1]);
  const value = grid.pooled ? fill(_("mean {value}"), { value: grid.valueName }) : grid.valueName;
  parts.push(
    Number.isFinite(v)
      ? `${value} ${spoken(v)}`
      : fill(_("masked ({value} 0)"), { value: grid.valueName }),
  );
  if (grid.weights && !grid.pooled && grid.kind === "heatmap") {
    const alongRows = grid.rowNoun === "query";
    const line = alongRows ? grid.z[cell.row] : grid.z.map((r) => r[cell.col]);
    const sum = line.reduce((s, w) => s + (Number.isFinite(w) ? w : 0), 0);
    const sums = alongRows ? _("row sums to {sum}") : _("column sums to {sum}");
    parts.push(fill(sums, { sum: spoken(sum, true) }));
  }
  return (grid.panel ? `${grid.panel}: ` : "") + parts.join(", ");
}

// ------------------------------------------------------------------ DOM

function plotArea(gd, grid) {
  const fl = gd._fullLayout;
  const xa = fl && fl[axisKey(grid.xaxis, "x")];
  const ya = fl && fl[axisKey(grid.yaxis, "y")];
  return xa && ya ? { xa, ya } : null;
}

/** The cell's box in the plot div's pixels, on its own subplot's axes. */
function outlineBox(gd, grid, cell) {
  const area = plotArea(gd, grid);
  if (!area || typeof area.xa.l2p !== "function") return null;
  const { xa, ya } = area;
  const { x: cx, y: cy } = coordinates(grid, cell);
  const xs = grid.kind === "bars" ? [cx - 0.5, cx + 0.5] : [cx - grid.dx / 2, cx + grid.dx / 2];
  const px = (ax, a, b) => {
    const p = [ax.l2p(a), ax.l2p(b)].map((v) => Math.max(0, Math.min(ax._length, v)));
    return [Math.min(...p), Math.max(...p)];
  };
  const [x0, x1] = px(xa, xs[0], xs[1]);
  const [y0, y1] =
    grid.kind === "bars" ? [0, ya._length] : px(ya, cy - grid.dy / 2, cy + grid.dy / 2);
  return { left: xa._offset + x0, top: ya._offset + y0, width: x1 - x0, height: y1 - y0 };
}

const FOCUSABLE =
  "a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), " +
  'textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** The first keyboard stop after the chart and everything inside it (Escape goes there). */
export function nextFocusable(chartElement) {
  const doc = chartElement.ownerDocument;
  for (const e of doc.querySelectorAll(FOCUSABLE)) {
    if (chartElement.contains(e)) continue;
    if (!(chartElement.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
    if (e.getClientRects().length === 0 && !e.closest(".attnviz-sr-only")) continue; // hidden
    if (e.closest(".attnviz-sr-only")) continue;
    return e;
  }
  return null;
}

let liveCount = 0;

/** Whether Enter selects in this chart: an attention chart whose link selects. */
function selectable(api) {
  const cells = attentionCells(api.link);
  return !!(api.select && cells && cells.selects);
}

/** Whether Enter works the cell out without selecting (cell.js: a chart that does not
 * select but carries its cells' arithmetic, e.g. step by step's and masking's weights). */
function explains(api) {
  const cells = attentionCells(api.link);
  return !!(api.select && cells && cells.arithmetic && !selectable(api));
}

/** The chart's keyboard handler (one per chart element; reads the state `st`). */
function onKey(chartElement, st, ev) {
  const g = st.grids[st.panel];
  if (!g) return;
  const panel = nextPanel(ev.key, st.panel, st.grids.length, g.stride || 0); // AltGr allowed
  if (panel != null) {
    ev.preventDefault();
    ev.stopPropagation();
    st.panel = panel;
    const n = st.grids[panel];
    const c = st.cell || { row: 0, col: 0 };
    st.cell = { row: Math.min(c.row, n.rows - 1), col: Math.min(c.col, n.cols - 1) };
    st.show();
    return;
  }
  if (ev.altKey || ev.metaKey) return;
  if (ev.key === "Escape") {
    ev.preventDefault();
    ev.stopPropagation();
    const next = nextFocusable(chartElement);
    if (next) next.focus();
    else chartElement.blur();
    return;
  }
  if (ev.key === "Enter" || ev.key === " ") {
    const cell = st.cell || { row: 0, col: 0 };
    const { x, y, query } = coordinates(g, cell);
    const local = explains(st.api);
    if (g.kind !== "heatmap" || query == null || !(selectable(st.api) || local)) return;
    ev.preventDefault();
    st.api.select(y, x, st.panel);
    const name = g.rowNoun === "query" ? g.rowNames[cell.row] : g.colNames[cell.col];
    const did = local
      ? _("worked out below the chart: the weight of query {name}")
      : _("selected query {name}");
    st.say(`${g.panel ? `${g.panel}: ` : ""}${fill(did, { name })}`);
    return;
  }
  const paging = ev.key === "PageUp" || ev.key === "PageDown";
  if (paging && !chartElement.matches(":focus-visible")) return; // the presenter's keys
  const next = nextCell(ev.key, st.cell, g.rows, g.cols, ev.ctrlKey);
  if (!next) return;
  ev.preventDefault();
  ev.stopPropagation();
  st.cell = next;
  st.show();
}

/** Make the chart element a keyboard stop with its live region (once per element). */
function setUp(chartElement, grids) {
  const doc = chartElement.ownerDocument;
  const st = { cell: null, panel: 0, grids, api: {}, outline: null, live: null };
  chartElement.__attnvizKeys = st;
  const live = doc.createElement("div");
  live.id = `attnviz-live-${++liveCount}`;
  live.className = "attnviz-live attnviz-sr-only";
  live.setAttribute("role", "status");
  live.setAttribute("aria-live", "polite");
  chartBar(chartElement).prepend(live);
  st.live = live;
  chartElement.tabIndex = 0;
  chartElement.classList.add("attnviz-kbd");
  chartElement.setAttribute("role", "application");
  chartElement.setAttribute(
    "aria-roledescription",
    grids[0].kind === "bars" ? _("bar chart") : _("heatmap"),
  );
  st.say = (text) => {
    live.textContent = text;
  };
  st.show = () => {
    const g = st.grids[st.panel];
    if (!g || !st.cell) return;
    const box = outlineBox(chartElement, g, st.cell);
    const host = chartElement.parentElement;
    if (box && host) {
      if (getComputedStyle(host).position === "static") host.style.position = "relative";
      if (!st.outline) {
        st.outline = doc.createElement("div");
        st.outline.className = "attnviz-focus";
        st.outline.setAttribute("aria-hidden", "true");
      }
      Object.assign(st.outline.style, {
        left: chartElement.offsetLeft + box.left + "px",
        top: chartElement.offsetTop + box.top + "px",
        width: box.width + "px",
        height: box.height + "px",
      });
      if (st.outline.parentElement !== host) host.appendChild(st.outline);
    }
    const { x, y } = coordinates(g, st.cell);
    if (st.api.hover) st.api.hover(y, x, st.panel);
    st.say(announcement(g, st.cell));
  };
  chartElement.addEventListener("focus", () => {
    const g = st.grids[st.panel];
    if (!g) return;
    live.classList.remove("attnviz-sr-only"); // sighted keyboard users read it too
    st.cell =
      st.cell && st.cell.row < g.rows && st.cell.col < g.cols ? st.cell : { row: 0, col: 0 };
    st.show();
  });
  // a click or a tap: the outline and the caption go to the cell under it (before the focus
  // a tap gives shows them; a chart already focused shows them at once)
  chartElement.addEventListener("pointerdown", (ev) => {
    const hit = pointedCell(chartElement, st.grids, ev.clientX, ev.clientY);
    if (!hit) return;
    st.panel = hit.panel;
    st.cell = hit.cell;
    if (doc.activeElement === chartElement) st.show();
  });
  chartElement.addEventListener("blur", () => {
    if (st.outline) st.outline.remove();
    if (st.api.clear) st.api.clear();
    live.classList.add("attnviz-sr-only");
  });
  chartElement.addEventListener("keydown", (ev) => onKey(chartElement, st, ev));
  return st;
}

/** The keys between panels, for the chart's label: "] and [ to the next and previous head
 * (4 heads)", or panels by name ("… panel (2 panels: previous, first)"). */
function panelKeys(grids, grid, api) {
  const heads = !!(api.link && api.link.heads) || !!grid.stride;
  const n = grids.length;
  let keys = heads
    ? _("] and [ to the next and previous head")
    : _("] and [ to the next and previous panel");
  if (grid.stride) keys += ", " + _("} and { to the next and previous layer");
  if (heads) return `${keys} (${fill(ngettext("{n} head", "{n} heads", n), { n })})`;
  const names = grids.map((g) => g.panel).join(", ");
  return `${keys} (${fill(ngettext("{n} panel", "{n} panels", n), { n })}: ${names})`;
}

/** The hook: make the chart a keyboard stop. Idempotent: a redraw updates the figure. */
export function attach(chartElement, figure, api = {}) {
  const doc = chartElement.ownerDocument;
  const grids = chartGrids(figure, api.link);
  let st = chartElement.__attnvizKeys;
  if (!grids.length) {
    if (st) st.grids = [];
    return null;
  }
  if (!st) st = setUp(chartElement, grids);
  st.grids = grids;
  st.api = api;
  if (st.panel >= grids.length) st.panel = 0;
  const grid = grids[st.panel];
  // the chart's own label (the board's), without the keys this module added to it before
  const had = chartElement.getAttribute("aria-label");
  const label = (had && had === st.ariaSet ? st.ariaBase : had || grid.title || _("chart"))
    .replace(/\. Arrow keys.*$/, "");
  const parts = [_("Arrow keys move between cells")];
  if (grids.length > 1) parts.push(panelKeys(grids, grid, api));
  if (grid.kind === "heatmap" && selectable(api)) parts.push(_("Enter selects the query"));
  if (grid.kind === "heatmap" && explains(api)) parts.push(_("Enter works the weight out"));
  parts.push(_("Escape leaves the chart"));
  st.ariaBase = label;
  st.ariaSet = `${label}. ${parts.join(", ")}.`;
  chartElement.setAttribute("aria-label", st.ariaSet);
  if (st.cell && (st.cell.row >= grid.rows || st.cell.col >= grid.cols)) st.cell = null;
  if (st.cell && doc.activeElement === chartElement) st.show();
  return st;
}
