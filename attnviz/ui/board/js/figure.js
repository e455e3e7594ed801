// attnviz board: the one reader of a figure. The per-chart modules (table.js: its tables,
// keys.js: its keyboard cells and announcements, cell.js: a clicked cell worked out) read a
// chart's plotly JSON and its link spec only through this module, so that they agree on
// what a chart is: a heatmap or not, its rows' and columns' nouns ("query", "key") and
// names ("t2", a user's token, a block "t8–t15"), its grid of values, what a value is
// ("weight", "score") and whether the values are attention weights.
//
// Meaning comes as fields (attnviz/ui/board/__init__.py, attnviz/viz/style.py), never read
// from a chart's title: what each titled axis counts in `layout.meta.axes[<axis>].noun` (an
// English identifier; the word shown, in the shown language, is `.word`), whether the
// values are attention weights in `layout.meta.value` ("weights"), a tiled grid of every
// head in `layout.meta.tiles`, the value's name as the colour bar's title, an attention
// chart's orientation, heads and cell arithmetic in its link. The titles and words may be
// translated; the nouns a module compares ("query", "key", "token") never are.

import { N_, _, fill } from "./i18n.js";
//
// Pure (no DOM), tested by `node --test tests/js/` (figure.test.mjs) and through table.js
// and keys.js (tests/ui/test_board_js.py, test_board_js_panels.py).

// ------------------------------------------------------------------ plotly's data arrays

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
      throw new Error(`figure: unknown dtype ${v.dtype} (expected one of ${Object.keys(DTYPES)})`);
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

/** The figure's title as plain text ("" when it has none). */
export function figureTitle(figure) {
  const layout = (figure && figure.layout) || {};
  return plainText(layout.title && layout.title.text);
}

// ------------------------------------------------------------------ axes

/** The layout key of a trace's axis `id` ("x2", or none for the first): "xaxis2". */
export function axisKey(id, letter) {
  return id && id.length > 1 ? letter + "axis" + id.slice(1) : letter + "axis";
}

/** The layout's entry of a trace's axis `id` ({} when the layout has none). */
export function axisOf(layout, id, letter) {
  return (layout && layout[axisKey(id, letter)]) || {};
}

/** An axis title as plain text: what the axis counts when its builder sent no noun with the
 * figure (every attnviz figure sends one for each titled axis, `layout.meta.axes`:
 * tests/test_board.py), e.g. a figure made elsewhere. The title is not taken apart. */
export function axisNoun(title, fallback) {
  return plainText(title && typeof title === "object" ? title.text : title) || fallback;
}

/** What axis `id` (a trace's "x2", or none) counts: the noun its builder sent with the
 * figure (`layout.meta.axes`, attnviz.viz.style.AxisTitle), else read from its title. */
export function nounOf(layout, id, letter, fallback) {
  const axes = layout && layout.meta && layout.meta.axes;
  const parts = axes && axes[axisKey(id, letter)];
  if (parts && parts.noun) return parts.noun;
  return axisNoun(axisOf(layout, id, letter).title, fallback);
}

/** The nouns the board itself names an axis by, marked for the catalog. */
const NOUNS = new Set([
  N_("query"), N_("key"), N_("token"), N_("row"), N_("column"),
  N_("item"), N_("value"), N_("weight"), N_("head"), N_("layer"),
]);

/** The word shown for a noun the board itself names an axis by ("query", "row", ...), in the
 * shown language; any other noun as it is (a builder's noun is shown by its `word`). */
export function nounWord(noun) {
  return NOUNS.has(noun) ? _(noun) : noun;
}

/** The word shown for what axis `id` counts: its builder's `word` (`layout.meta.axes`,
 * translated), else its noun (nounWord), else its title, else nounWord(`fallback`). */
export function wordOf(layout, id, letter, fallback) {
  const axes = layout && layout.meta && layout.meta.axes;
  const parts = axes && axes[axisKey(id, letter)];
  if (parts && parts.word) return parts.word;
  if (parts && parts.noun) return nounWord(parts.noun);
  return axisNoun(axisOf(layout, id, letter).title, "") || nounWord(fallback);
}

/** Whether an axis of this noun counts tokens (its cells are named "t0", "t1", ...). */
export function countsTokens(noun) {
  return /query|key|token/i.test(noun);
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

/** Where the cells of one axis sit (data coordinates): the trace's own `x` / `y` when it
 * gives one finite number per cell (e.g. heads 1..12), else start + i * step. */
export function positions(given, count, start, step) {
  const v = given ? decode(given) : null;
  if (v && v.length === count && v.every((t) => Number.isFinite(Number(t))))
    return v.map(Number);
  return Array.from({ length: count }, (_, i) => start + i * step);
}

// ------------------------------------------------------------------ heatmaps

/** The heatmap traces of a figure that hold values (`z`), in drawing order. */
export function heatmapTraces(figure) {
  return ((figure && figure.data) || []).filter((t) => t.type === "heatmap" && t.z);
}

/** Whether the figure draws a matrix (at least one heatmap with values). */
export function isHeatmap(figure) {
  return heatmapTraces(figure).length > 0;
}

/** A heatmap trace's value name: its colour bar's title, or its shared colour axis'
 * ("" when neither has one). */
export function valueTitle(trace, layout) {
  let cb = trace.colorbar && trace.colorbar.title;
  if (!cb && trace.coloraxis) {
    const ca = layout && layout[trace.coloraxis];
    cb = ca && ca.colorbar && ca.colorbar.title;
  }
  return plainText(cb && typeof cb === "object" ? cb.text : cb);
}

/** Whether values of this name are attention weights (each query's row sums to 1):
 * "weight", "max weight", "softmax weight"; not "score", "B − A". */
export function isWeights(valueName) {
  return /weight/i.test(valueName);
}

/** Whether a figure's values are attention weights: its builder says so
 * (`layout.meta.value`: "weights", or another kind), else its value name does (isWeights:
 * a figure made elsewhere, in English). */
export function weightsOf(layout, valueName) {
  const kind = layout && layout.meta && layout.meta.value;
  return typeof kind === "string" ? kind === "weights" : isWeights(valueName);
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

/** One heatmap trace read: {z (rows x cols, NaN where masked), rows, cols, rowNoun, colNoun,
 * rowNames, colNames, valueName, weights, pooled, x0, dx, y0, dy, xs, ys (each cell's data
 * coordinate), xaxis, yaxis}. Nouns: what the axes count (`layout.meta.axes`), else
 * `shared` (sharedNouns: a panel's untitled axes), else for an attention chart (`link`
 * kind "attn") its orientation's ("rows": queries down, keys across; "columns": the UDL
 * book's, keys down), else "row" / "column". The value name is the colour bar's ("value"
 * without one); `weights` when it names weights. */
export function readHeatmap(trace, layout, link = null, shared = null) {
  const z = decode(trace.z) || [];
  const rows = z.length;
  const cols = rows ? z[0].length : 0;
  let rowNoun = nounOf(layout, trace.yaxis, "y", "") || (shared ? shared.row : "");
  let colNoun = nounOf(layout, trace.xaxis, "x", "") || (shared ? shared.col : "");
  if (link && link.kind === "attn") {
    const rowsQ = link.orient !== "columns";
    rowNoun = rowNoun || (rowsQ ? "query" : "key");
    colNoun = colNoun || (rowsQ ? "key" : "query");
  }
  rowNoun = rowNoun || "row";
  colNoun = colNoun || "column";
  const word = (id, letter, noun) => {
    const w = nounOf(layout, id, letter, "") ? wordOf(layout, id, letter, noun) : "";
    return w || nounWord(noun);
  };
  const rowWord = word(trace.yaxis, "y", rowNoun);
  const colWord = word(trace.xaxis, "x", colNoun);
  const x0 = Number(trace.x0) || 0;
  const dx = Number(trace.dx) || 1;
  const y0 = Number(trace.y0) || 0;
  const dy = Number(trace.dy) || 1;
  const xs = positions(trace.x, cols, x0, dx);
  const ys = positions(trace.y, rows, y0, dy);
  const valueName = valueTitle(trace, layout) || _("value");
  const xaxis = axisOf(layout, trace.xaxis, "x");
  const yaxis = axisOf(layout, trace.yaxis, "y");
  return {
    xaxis: trace.xaxis || "x",
    yaxis: trace.yaxis || "y",
    z,
    rows,
    cols,
    rowNoun,
    colNoun,
    rowWord,
    colWord,
    rowNames: tokenNames(yaxis, rows, ys[0] || 0, dy, countsTokens(rowNoun)),
    colNames: tokenNames(xaxis, cols, xs[0] || 0, dx, countsTokens(colNoun)),
    valueName,
    weights: weightsOf(layout, valueName),
    pooled: dx > 1 || dy > 1,
    x0,
    dx,
    y0,
    dy,
    xs,
    ys,
  };
}

/** Every heatmap of a figure read (readHeatmap), each with `trace` (the plotly trace) and
 * `panel`: null for a figure of one, else "head 2" (the link's `heads`), the trace's name
 * ("previous") or "panel 3". Panels share the nouns of the axes any of them titles. */
export function readHeatmaps(figure, link = null) {
  const layout = (figure && figure.layout) || {};
  const heatmaps = heatmapTraces(figure);
  const shared = sharedNouns(heatmaps, layout);
  const many = heatmaps.length > 1;
  return heatmaps.map((trace, i) => {
    let panel = null;
    if (link && link.heads && link.heads[i] != null)
      panel = fill(_("head {i}"), { i: link.heads[i] });
    else if (many) panel = plainText(trace.name) || fill(_("panel {i}"), { i: i + 1 });
    return { ...readHeatmap(trace, layout, link, shared), trace, panel };
  });
}

/** The tiles of a heatmap tiled by `layout.meta.tiles` (the real-model pages' grid of every
 * head, attnviz/viz/models.py: tile_spec): {tiles: [{name ("layer 3, head 4"),
 * x0, y0 (its first cell in the trace's data coordinates), z (size x size)}], names (each
 * cell's token, "t3", or a block "t4–t7"), pooled, size, cols, rowNoun, colNoun, valueName,
 * weights}, tiles row by row; null when the figure is not tiled (or its data does not fit
 * the spec). Each tile is one head's weights, queries down and keys across. */
export function tiles(figure) {
  const layout = (figure && figure.layout) || {};
  const spec = layout.meta && layout.meta.tiles;
  const [hm] = heatmapTraces(figure);
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
      const layer = r + (spec.first_row || 0);
      out.push({
        name:
          spec.row === "layer" && spec.col === "head"
            ? fill(_("layer {layer}, head {head}"), { layer, head: c })
            : `${nounWord(spec.row || "row")} ${layer}, ${nounWord(spec.col || "column")} ${c}`,
        x0,
        y0,
        z: z.slice(y0, y0 + size).map((row) => row.slice(x0, x0 + size)),
      });
    }
  const pooled = !!b && b.some((v, i) => i > 0 && v - b[i - 1] > 1);
  const what = {
    rowNoun: "query",
    colNoun: "key",
    rowWord: _("query"),
    colWord: _("key"),
    valueName: _("weight"),
    weights: true,
  };
  return { tiles: out, names, pooled, size, cols, ...what };
}

// ------------------------------------------------------------------ bar charts

/** The bar traces of a figure that hold values (`y`), in drawing order. */
export function barTraces(figure) {
  return ((figure && figure.data) || []).filter((t) => t.type === "bar" && t.y);
}

/** A figure's bar chart read: {across (horizontal bars), names (each bar's), itemNoun (what
 * the bars are: "key", "" for named items), valueName, weights, series: [{name, values}]
 * (one per trace)}, or null without bars. Vertical bars (x: the items, y: the values) or
 * horizontal ones (`orientation: "h"`: y the items, x the values, e.g. the live class's
 * tally); items named by their tick labels, their own text (a category axis: "1. argmax")
 * or their index. */
export function readBars(figure) {
  const bars = barTraces(figure);
  if (!bars.length) return null;
  const layout = (figure && figure.layout) || {};
  const across = bars[0].orientation === "h";
  const [itemLetter, valueLetter] = across ? ["y", "x"] : ["x", "y"];
  const itemId = bars[0][`${itemLetter}axis`];
  const values0 = decode(bars[0][valueLetter]) || [];
  const items = decode(bars[0][itemLetter]) || values0.map((_, i) => i);
  const numbered = items.every((v) => v !== "" && v != null && Number.isFinite(Number(v)));
  const itemNoun = nounOf(layout, itemId, itemLetter, numbered ? "item" : "");
  const itemWord = itemNoun ? wordOf(layout, itemId, itemLetter, itemNoun) : "";
  const itemAxis = axisOf(layout, itemId, itemLetter);
  const names = numbered
    ? tokenNames(itemAxis, items.length, Number(items[0]) || 0, 1, countsTokens(itemNoun))
    : items.map((v) => plainText(v));
  const valueId = bars[0][`${valueLetter}axis`];
  const valueNoun = nounOf(layout, valueId, valueLetter, "value");
  const valueName = wordOf(layout, valueId, valueLetter, "value");
  const series = bars.map((b) => ({
    name: plainText(b.name) || valueName,
    values: (decode(b[valueLetter]) || []).map(Number),
  }));
  const weights = weightsOf(layout, valueNoun);
  return { across, names, itemNoun, itemWord, valueName, weights, series };
}

// ------------------------------------------------------------------ the chart's link

/** What a chart's link (attnviz.ui.board.link_attn) says about its cells: null unless it is
 * an attention matrix (scores or weights); else {selects: a click or Enter selects the
 * cell's query (and head), arithmetic: the data a cell is worked out from in the browser
 * (attnviz.ui.cell.cell_data, cell.js), or null}. */
export function attentionCells(link) {
  if (!link || link.kind !== "attn") return null;
  return { selects: link.select !== false, arithmetic: link.arithmetic || null };
}
