// attnviz board, per-chart module: every heatmap and bar chart also offers its values as a
// real <table> (issue 18: "every chart has its data"). Row and column headers are named by
// the tokens ("query t2", "key t4"); above TOP_K_ABOVE columns a row lists its top 3 cells
// instead of every cell, and the caption says so.
//
// Hook (the board's per-chart modules): attach(chartElement, figure, api) after the chart
// is drawn. The table goes right after the chart element (never inside it: the plot div is
// role="img", whose content a screen reader does not read). It is visually hidden but in the
// accessibility tree; a "Table" button, visible to all, shows it on screen.
//
// Pure parts, tested with `node --test tests/js/` (tests/ui/test_board_js.py runs them):
// decode, axisNoun, tokenNames, chartTables (figure -> table models), tiles, topK,
// formatValue.

export const TOP_K_ABOVE = 32; // more columns than this: top 3 per row
export const TOP_K = 3;
export const MAX_CELLS = 4096; // a chart with more cells in all its tables: top 3 per row too

// ------------------------------------------------------------------ pure: figure -> data

const DTYPES = {
  f8: Float64Array,
  f4: Float32Array,
  i4: Int32Array,
  u4: Uint32Array,
  i2: Int16Array,
  u2: Uint16Array,
  i1: Int8Array,
  u1: Uint8Array,
};

function base64Bytes(s) {
  if (typeof atob === "function") {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  return new Uint8Array(Buffer.from(s, "base64")); // node without atob
}

/** A plotly data array as plain JS: arrays as they are, typed arrays as arrays, plotly's
 * base64 form ({dtype, bdata, shape}) decoded; 2-D when `shape` has two sizes. */
export function decode(v) {
  if (v == null) return null;
  if (Array.isArray(v)) return v.map((r) => (r && typeof r === "object" ? decode(r) : r));
  if (ArrayBuffer.isView(v)) return Array.from(v);
  if (typeof v === "object" && typeof v.bdata === "string") {
    const Kind = DTYPES[v.dtype];
    if (!Kind)
      throw new Error(`table: unknown dtype ${v.dtype} (expected one of ${Object.keys(DTYPES)})`);
    const bytes = base64Bytes(v.bdata);
    const flat = Array.from(
      new Kind(bytes.buffer, bytes.byteOffset, bytes.byteLength / Kind.BYTES_PER_ELEMENT),
    );
    const shape = typeof v.shape === "string" ? v.shape.split(",").map(Number) : v.shape;
    if (!shape || shape.length < 2) return flat;
    const [rows, cols] = shape;
    const out = [];
    for (let r = 0; r < rows; r++) out.push(flat.slice(r * cols, (r + 1) * cols));
    return out;
  }
  return null;
}

/** Plotly text (HTML subset, character references) as plain text. */
export function plainText(s) {
  return String(s == null ? "" : s)
    .replace(/<br\s*\/?>/gi, " · ")
    .replace(/<[^>]*>/g, "")
    .replace(/&#(\d+);/g, (_, d) => String.fromCharCode(Number(d)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

/** An axis title as plain text: what the axis counts when its builder sent no noun with the
 * figure (every attnviz figure sends one for each titled axis, `layout.meta.axes`:
 * tests/test_board.py), e.g. a figure made elsewhere. The title is not taken apart. */
export function axisNoun(title, fallback) {
  return plainText(title && typeof title === "object" ? title.text : title) || fallback;
}

function axisKey(id, letter) {
  return id && id.length > 1 ? letter + "axis" + id.slice(1) : letter + "axis";
}

function axisOf(layout, id, letter) {
  return (layout && layout[axisKey(id, letter)]) || {};
}

/** What axis `id` (a trace's "x2", or none) counts: the noun its builder sent with the
 * figure (`layout.meta.axes`, attnviz.viz.style.AxisTitle), else read from its title. */
export function nounOf(layout, id, letter, fallback) {
  const axes = layout && layout.meta && layout.meta.axes;
  const parts = axes && axes[axisKey(id, letter)];
  if (parts && parts.noun) return parts.noun;
  return axisNoun(axisOf(layout, id, letter).title, fallback);
}

/** The name of each of `count` cells along an axis (`start`, `step`: the trace's x0/dx):
 * its tick label where the axis has one per cell ("t2", or a user's token), else "t" and
 * its index for token axes, else the index; a block of several tokens: "t8–t15". */
export function tokenNames(axis, count, start, step, tokens) {
  const vals = axis.tickvals ? decode(axis.tickvals) : null;
  const text = axis.ticktext ? decode(axis.ticktext) : null;
  const byValue = new Map();
  if (vals && text) vals.forEach((v, i) => byValue.set(Number(v), plainText(text[i])));
  const name = (i) => (byValue.has(i) ? byValue.get(i) : tokens ? `t${i}` : String(i));
  const out = [];
  for (let c = 0; c < count; c++) {
    const first = start + c * step;
    out.push(step > 1 ? `${name(first)}–${name(first + step - 1)}` : name(first));
  }
  return out;
}

/** A number as the table shows it: 4 decimals (the hover's precision), "−" for minus. */
export function formatValue(v, digits = 4) {
  if (v == null || !Number.isFinite(v)) return "masked";
  const s = (Math.abs(v) < 0.5 * 10 ** -digits ? 0 : v).toFixed(digits);
  return s.startsWith("-") ? "−" + s.slice(1) : s;
}

/** The `k` largest cells of a row (by value, or by size when `byMagnitude`): [[index,
 * value]], largest first, masked cells left out; ties keep the lower index first. */
export function topK(row, k = TOP_K, byMagnitude = false) {
  const key = (v) => (byMagnitude ? Math.abs(v) : v);
  return row
    .map((v, i) => [i, v])
    .filter(([, v]) => Number.isFinite(v))
    .sort((a, b) => key(b[1]) - key(a[1]) || a[0] - b[0])
    .slice(0, k);
}

const WEIGHTY = /weight|probab|softmax/i;

/** The tiles of a heatmap tiled by `layout.meta.tiles` (the real-model pages' grid of every
 * head, attnviz/viz/models.py: tile_spec): {tiles: [{name ("layer 3, head 4"),
 * x0, y0 (its first cell in the trace's data coordinates), z (size x size)}], names (each
 * cell's token, "t3", or a block "t4–t7"), pooled, size, cols}, tiles row by row; null when
 * the figure is not tiled (or its data does not fit the spec). */
export function tiles(figure) {
  const layout = (figure && figure.layout) || {};
  const spec = layout.meta && layout.meta.tiles;
  const hm = ((figure && figure.data) || []).find((t) => t.type === "heatmap" && t.z);
  if (!spec || !hm) return null;
  const z = decode(hm.z) || [];
  const { rows, cols, size, gap } = spec;
  const step = size + gap;
  if (!(size > 0) || z.length < rows * step - gap || (z[0] || []).length < cols * step - gap)
    return null;
  const b = spec.blocks && spec.blocks.length === size + 1 ? spec.blocks : null;
  const names = Array.from({ length: size }, (_, i) =>
    b && b[i + 1] - b[i] > 1 ? `t${b[i]}–t${b[i + 1] - 1}` : `t${b ? b[i] : i}`,
  );
  const out = [];
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const y0 = r * step;
      const x0 = c * step;
      out.push({
        name: `${spec.row || "row"} ${r + (spec.first_row || 0)}, ${spec.col || "column"} ${c}`,
        x0,
        y0,
        z: z.slice(y0, y0 + size).map((row) => row.slice(x0, x0 + size)),
      });
    }
  const pooled = !!b && b.some((v, i) => i > 0 && v - b[i - 1] > 1);
  return { tiles: out, names, pooled, size, cols };
}

/** The table of a tiled figure (see tiles): a row per tile (head), a column per query, each
 * cell the key that query puts most weight on and that weight ("key t4: 0.9512"). */
function tilesTable(t, title) {
  return {
    caption: title || "chart",
    rowNoun: "",
    colNoun: "query",
    valueName: "weight",
    weights: true,
    colNames: t.names,
    rows: t.tiles.map((tile) => ({
      name: tile.name,
      cells: tile.z.map((row, q) => {
        const [best] = topK(row, 1);
        const text = best ? `key ${t.names[best[0]]}: ${formatValue(best[1])}` : "masked";
        return { col: q, colName: t.names[q], value: best ? best[1] : null, text };
      }),
    })),
    top: null,
    note:
      "one row per head, one column per query: the key it puts most weight on, and that " +
      "weight" +
      (t.pooled
        ? "; each query and key is a block of tokens (weights averaged over the block's " +
          "queries, summed over its keys)"
        : ""),
  };
}

/** The row and column nouns of a figure of several heatmaps (panels): the first axis
 * titles any of them has (plotly figures title only the outer panels' axes). */
export function sharedNouns(heatmaps, layout) {
  const find = (letter, id) => {
    for (const t of heatmaps) {
      const n = nounOf(layout, t[id], letter, "");
      if (n) return n;
    }
    return "";
  };
  return { row: find("y", "yaxis"), col: find("x", "xaxis") };
}

/** A heatmap's nouns, names and value name: {rowNoun, colNoun, rowNames, colNames,
 * valueName}. Axes without a title in an attention chart (small multiples) take query and
 * key from the link's `orient`; the value name is the colour bar's (the trace's own or its
 * shared colour axis'); a trace's own `x` / `y` (e.g. heads 1..12) names its cells. */
function heatmapAxes(t, layout, link, title, shared = null) {
  const z = decode(t.z) || [];
  const nRows = z.length;
  const nCols = nRows ? z[0].length : 0;
  const xa = axisOf(layout, t.xaxis, "x");
  const ya = axisOf(layout, t.yaxis, "y");
  let colNoun = nounOf(layout, t.xaxis, "x", "") || (shared ? shared.col : "");
  let rowNoun = nounOf(layout, t.yaxis, "y", "") || (shared ? shared.row : "");
  if (link && link.kind === "attn") {
    const rowsQ = link.orient !== "columns";
    rowNoun = rowNoun || (rowsQ ? "query" : "key");
    colNoun = colNoun || (rowsQ ? "key" : "query");
  }
  colNoun = colNoun || "column";
  rowNoun = rowNoun || "row";
  const tokenAxis = (noun) => /query|key|token/i.test(noun);
  const first = (given, start) => {
    const v = given ? decode(given) : null;
    return v && v.length && Number.isFinite(Number(v[0])) ? Number(v[0]) : Number(start) || 0;
  };
  const dx = Number(t.dx) || 1;
  const dy = Number(t.dy) || 1;
  const colNames = tokenNames(xa, nCols, first(t.x, t.x0), dx, tokenAxis(colNoun));
  const rowNames = tokenNames(ya, nRows, first(t.y, t.y0), dy, tokenAxis(rowNoun));
  let cb = t.colorbar && t.colorbar.title;
  if (!cb && t.coloraxis) {
    const ca = layout[t.coloraxis];
    cb = ca && ca.colorbar && ca.colorbar.title;
  }
  const valueName =
    plainText(cb && typeof cb === "object" ? cb.text : cb) ||
    (WEIGHTY.test(title) ? "weight" : "value");
  return { z, nRows, nCols, rowNoun, colNoun, rowNames, colNames, valueName, dx, dy };
}

/** Panels: several heatmaps of one shape, each named (not heads), e.g. the Heads section's
 * six pattern scores of every (layer, head). One table, a row per cell ("layer 3, head 4")
 * and a column per panel ("previous", …), so that a screen reader walks one head's scores
 * along its row; the note names each panel's highest cell. Null when not panels. */
export function panelTable(heatmaps, layout, link, title) {
  if (heatmaps.length < 2 || (link && link.heads)) return null;
  if (!heatmaps.every((t) => plainText(t.name))) return null;
  const shared = sharedNouns(heatmaps, layout);
  const ax = heatmaps.map((t) => heatmapAxes(t, layout, link, title, shared));
  const [a] = ax;
  if (ax.some((b) => b.nRows !== a.nRows || b.nCols !== a.nCols)) return null;
  const names = heatmaps.map((t) => plainText(t.name));
  const rows = [];
  for (let r = 0; r < a.nRows; r++)
    for (let c = 0; c < a.nCols; c++)
      rows.push({
        name: `${a.rowNoun} ${a.rowNames[r]}, ${a.colNoun} ${a.colNames[c]}`,
        cells: ax.map((b, p) => ({ col: p, colName: names[p], value: b.z[r][c] })),
      });
  const best = ax.map((b, p) => {
    let at = null;
    b.z.forEach((row, r) =>
      row.forEach((v, c) => {
        if (Number.isFinite(v) && (at == null || v > at.v)) at = { v, r, c };
      }),
    );
    return at
      ? `${names[p]}: ${a.rowNoun} ${a.rowNames[at.r]}, ${a.colNoun} ${a.colNames[at.c]} ` +
          `(${formatValue(at.v, 2)})`
      : `${names[p]}: none`;
  });
  return {
    caption: title || "chart",
    rowNoun: "",
    colNoun: "",
    valueName: a.valueName,
    weights: false,
    rows,
    colNames: names,
    top: null,
    note:
      `one row per ${a.rowNoun} and ${a.colNoun}, its ${a.valueName} in each column; ` +
      `highest: ${best.join("; ")}`,
  };
}

/** The table of a figure's bar traces: a row per bar, a column per trace. Vertical bars
 * (x: the items, y: the values) or horizontal ones (`orientation: "h"`: y the items, x
 * the values, e.g. the live class's tally); items named by their tick labels, their own
 * text (a category axis: "1. argmax") or their index; whole-number values (counts) are
 * shown without decimals (`digits: 0`). */
function barTable(bars, layout, title) {
  const across = bars[0].orientation === "h";
  const [itemLetter, valueLetter] = across ? ["y", "x"] : ["x", "y"];
  const itemAxis = axisOf(layout, bars[0][`${itemLetter}axis`], itemLetter);
  const values0 = decode(bars[0][valueLetter]) || [];
  const items = decode(bars[0][itemLetter]) || values0.map((_, i) => i);
  const numbered = items.every((v) => v !== "" && v != null && Number.isFinite(Number(v)));
  const rowNoun = nounOf(layout, bars[0][`${itemLetter}axis`], itemLetter, numbered ? "item" : "");
  const names = numbered
    ? tokenNames(
        itemAxis,
        items.length,
        Number(items[0]) || 0,
        1,
        /query|key|token/i.test(rowNoun),
      )
    : items.map((v) => plainText(v));
  const valueName = nounOf(layout, bars[0][`${valueLetter}axis`], valueLetter, "value");
  const series = bars.map((b) => ({
    name: plainText(b.name) || valueName,
    values: (decode(b[valueLetter]) || []).map(Number),
  }));
  const weights = /weight/i.test(valueName);
  const counts = !weights && series.every((s) => s.values.every((v) => Number.isInteger(v)));
  return {
    caption: title || "bar chart",
    rowNoun,
    colNoun: "",
    valueName,
    weights,
    digits: counts ? 0 : 4,
    colNames: series.map((s) => s.name),
    rows: items.map((_, i) => ({
      name: names[i],
      cells: series.map((s, c) => ({ col: c, colName: s.name, value: s.values[i] })),
    })),
    top: null,
    note: "",
  };
}

/** The tables of a figure (plotly JSON): one per heatmap trace (or one for panels, see
 * panelTable) and one per bar chart.
 * A table: {caption, rowNoun, colNoun, valueName, rows: [{name, cells: [{col, colName,
 * value}]}], colNames, top (null, or k when each row lists its top k cells), note}.
 * `link` (optional): the board's link spec ({kind, orient, heads}) of the chart. */
export function chartTables(figure, link) {
  const data = (figure && figure.data) || [];
  const layout = (figure && figure.layout) || {};
  const title = plainText(layout.title && layout.title.text);
  const heatmaps = data.filter((t) => t.type === "heatmap" && t.z);
  const tiled = tiles(figure);
  if (tiled) return [tilesTable(tiled, title)];
  const tables = [];
  const panels = panelTable(heatmaps, layout, link, title);
  if (panels) tables.push(panels);
  const totalCells = heatmaps.reduce((n, t) => {
    const z = decode(t.z) || [];
    return n + z.length * (z[0] ? z[0].length : 0);
  }, 0);
  const shared = sharedNouns(heatmaps, layout);
  (panels ? [] : heatmaps).forEach((t, ti) => {
    const { z, nCols, rowNoun, colNoun, rowNames, colNames, valueName, dx, dy } =
      heatmapAxes(t, layout, link, title, shared);
    const weights = /weight/i.test(valueName) || (t.zmin === 0 && t.zmax === 1);
    const top = nCols > TOP_K_ABOVE || totalCells > MAX_CELLS ? TOP_K : null;
    const head = link && link.heads ? link.heads[ti] : heatmaps.length > 1 ? ti : null;
    const name = plainText(t.name) || title;
    const caption = (head != null ? `${title}, head ${head}` : name) || "chart";
    const rows = z.map((r, i) => {
      const cells = top
        ? topK(r, top, !weights).map(([c, v]) => ({ col: c, colName: colNames[c], value: v }))
        : r.map((v, c) => ({ col: c, colName: colNames[c], value: v }));
      return { name: rowNames[i], cells };
    });
    const pooled = dx > 1 || dy > 1;
    const notes = [];
    if (pooled) notes.push("each cell is the mean of a block of tokens");
    if (top)
      notes.push(
        `${nCols} ${colNoun}s per row: each row lists its top ${top} ${colNoun}s` +
          (weights ? " and their weights" : " by size") +
          " instead of every cell",
      );
    tables.push({
      caption,
      rowNoun,
      colNoun,
      valueName,
      weights,
      rows,
      colNames,
      top,
      note: notes.join("; "),
    });
  });
  const bars = data.filter((t) => t.type === "bar" && t.y);
  if (bars.length) tables.push(barTable(bars, layout, title));
  return tables;
}

// ------------------------------------------------------------------ DOM

let tableCount = 0;

// The styles of the tables and of the keyboard focus (keys.js), once per document. The
// focus ring is #111 on the page's white (18:1, and 3:1 needs only #949494); a white halo
// keeps it visible over dark cells.
export const STYLE = `
.attnviz-sr-only { position: absolute !important; width: 1px; height: 1px; padding: 0;
  margin: -1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%);
  white-space: nowrap; border: 0; }
.attnviz-bar { margin: 0.2rem 0 0.4rem 0; font-size: 0.875rem; color: #262730; }
.attnviz-buttons { display: flex; gap: 0.4rem; flex-wrap: wrap; }
.attnviz-live:not(.attnviz-sr-only) { margin: 0.1rem 0 0.3rem 0; }
.attnviz-table-toggle, .attnviz-download { font: inherit; color: #262730; background: #fff;
  border: 1px solid #6b6e7a; border-radius: 0.4rem; padding: 0.1rem 0.6rem; cursor: pointer; }
.attnviz-bar button:focus-visible, .attnviz-kbd:focus-visible {
  outline: 3px solid #111; outline-offset: 2px; box-shadow: 0 0 0 5px #fff; }
.attnviz-table-holder:not(.attnviz-sr-only) { overflow-x: auto; max-width: 100%; }
.attnviz-table { border-collapse: collapse; margin-top: 0.3rem; color: #262730; }
.attnviz-table caption { text-align: left; font-weight: 600; padding-bottom: 0.2rem; }
.attnviz-table th, .attnviz-table td { border: 1px solid #c8c9ce; padding: 0.1rem 0.4rem;
  text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.attnviz-table th { background: #f0f2f6; font-weight: 600; }
.attnviz-focus { position: absolute; pointer-events: none; box-sizing: border-box;
  border: 3px solid #111; box-shadow: 0 0 0 2px #fff, inset 0 0 0 2px #fff; z-index: 6; }
@media (prefers-reduced-motion: reduce) {
  .attnviz-bar *, .attnviz-focus { transition: none !important; animation: none !important; }
}
`;

export function ensureStyle(doc) {
  if (doc.getElementById("attnviz-a11y-style")) return;
  const style = doc.createElement("style");
  style.id = "attnviz-a11y-style";
  style.textContent = STYLE;
  (doc.head || doc.documentElement).appendChild(style);
}

function el(doc, tag, attrs, text) {
  const e = doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

/** A <table> element of one table model. */
export function tableElement(doc, t) {
  const table = el(doc, "table", { class: "attnviz-table" });
  table.appendChild(el(doc, "caption", {}, t.caption + (t.note ? ` (${t.note})` : "")));
  const head = el(doc, "thead");
  const hr = el(doc, "tr");
  hr.appendChild(el(doc, "td"));
  if (t.top) {
    for (let i = 1; i <= t.top; i++) hr.appendChild(el(doc, "th", { scope: "col" }, `top ${i}`));
  } else {
    for (const c of t.colNames)
      hr.appendChild(el(doc, "th", { scope: "col" }, t.colNoun ? `${t.colNoun} ${c}` : c));
  }
  head.appendChild(hr);
  table.appendChild(head);
  const body = el(doc, "tbody");
  for (const r of t.rows) {
    const tr = el(doc, "tr");
    tr.appendChild(el(doc, "th", { scope: "row" }, t.rowNoun ? `${t.rowNoun} ${r.name}` : r.name));
    for (const c of r.cells) {
      const value = formatValue(c.value, t.digits == null ? 4 : t.digits);
      let text = t.top ? `${t.colNoun} ${c.colName}: ${value}` : value;
      if (c.text != null) text = c.text; // a cell that says more than its value (tiles)
      tr.appendChild(el(doc, "td", {}, text));
    }
    body.appendChild(tr);
  }
  table.appendChild(body);
  return table;
}

/** The strip under a chart that the per-chart modules share, made once right after the
 * chart (outside it: the plot div may be role="img"): the live region (keys.js), a row of
 * buttons (Table here, the downloads in tools.js) and the table. */
export function chartBar(chartElement) {
  let bar = chartElement.__attnvizBar;
  if (bar && bar.isConnected) return bar;
  const doc = chartElement.ownerDocument;
  ensureStyle(doc);
  bar = el(doc, "div", { class: "attnviz-bar" });
  bar.appendChild(el(doc, "div", { class: "attnviz-buttons" }));
  chartElement.after(bar);
  chartElement.__attnvizBar = bar;
  return bar;
}

/** The hook: after a chart is drawn, (re)build its tables under it. Returns the holder. */
export function attach(chartElement, figure, api = {}) {
  const doc = chartElement.ownerDocument;
  const tables = chartTables(figure, api.link);
  const bar = chartBar(chartElement);
  let holder = bar.querySelector(".attnviz-table-holder");
  let button = bar.querySelector(".attnviz-table-toggle");
  if (!tables.length) {
    if (holder) holder.remove();
    if (button) button.remove();
    return null;
  }
  if (!holder) {
    const id = `attnviz-table-${++tableCount}`;
    button = el(
      doc,
      "button",
      {
        type: "button",
        class: "attnviz-table-toggle",
        "aria-expanded": "false",
        "aria-controls": id,
      },
      "Table",
    );
    holder = el(doc, "div", { id, class: "attnviz-table-holder attnviz-sr-only" });
    button.addEventListener("click", () => {
      const open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Hide table" : "Table";
      button.setAttribute("aria-label", `${button.textContent}: ${holder.dataset.caption}`);
      holder.classList.toggle("attnviz-sr-only", !open);
      // shown, a table wider than its column scrolls sideways: a keyboard stop (WCAG 2.1.1)
      if (open) {
        holder.tabIndex = 0;
        holder.setAttribute("role", "region");
        holder.setAttribute("aria-label", holder.dataset.caption);
      } else {
        holder.removeAttribute("tabindex");
        holder.removeAttribute("role");
        holder.removeAttribute("aria-label");
      }
      if (api.resized) api.resized();
    });
    bar.querySelector(".attnviz-buttons").prepend(button);
    bar.appendChild(holder);
  }
  holder.dataset.caption = tables[0].caption;
  if (holder.getAttribute("role") === "region")
    holder.setAttribute("aria-label", tables[0].caption);
  button.setAttribute("aria-label", `${button.textContent}: ${tables[0].caption}`);
  holder.replaceChildren(...tables.map((t) => tableElement(doc, t)));
  return holder;
}
