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
// The figure is read by figure.js (the one reader of a figure: nouns, names, values, whether
// they are weights), as keys.js and cell.js read it.
//
// Pure parts, tested with `node --test tests/js/` (tests/ui/test_board_js.py runs them):
// chartTables (figure -> table models), topK, formatValue.

import { figureTitle, nounWord, plainText, readBars, readHeatmaps, tiles } from "./figure.js";
import { _, fill, separators } from "./i18n.js";

export const TOP_K_ABOVE = 32; // more columns than this: top 3 per row
export const TOP_K = 3;
export const MAX_CELLS = 4096; // a chart with more cells in all its tables: top 3 per row too

// ------------------------------------------------------------------ pure: figure -> data

/** A number as the table shows it: 4 decimals (the hover's precision), "−" for minus, the
 * shown language's decimal sign. */
export function formatValue(v, digits = 4) {
  if (v == null || !Number.isFinite(v)) return _("masked");
  let s = (Math.abs(v) < 0.5 * 10 ** -digits ? 0 : v).toFixed(digits);
  const dec = separators()[0];
  if (dec !== ".") s = s.replace(".", dec);
  return s.startsWith("-") ? "−" + s.slice(1) : s;
}

/** The word of a table's nouns: its own (`rowWord`, `colWord`), else the noun's. */
function words(t) {
  return {
    row: t.rowWord != null ? t.rowWord : nounWord(t.rowNoun),
    col: t.colWord != null ? t.colWord : nounWord(t.colNoun),
  };
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

/** The table of a tiled figure (see tiles): a row per tile (head), a column per query, each
 * cell the key that query puts most weight on and that weight ("key t4: 0.9512"). */
function tilesTable(t, title) {
  return {
    caption: title || _("chart"),
    rowNoun: "",
    colNoun: t.rowNoun, // a column per query (a tile's row)
    rowWord: "",
    colWord: t.rowWord,
    valueName: t.valueName,
    weights: t.weights,
    colNames: t.names,
    rows: t.tiles.map((tile) => ({
      name: tile.name,
      cells: tile.z.map((row, q) => {
        const [best] = topK(row, 1);
        const text = best
          ? `${t.colWord} ${t.names[best[0]]}: ${formatValue(best[1])}`
          : _("masked");
        return { col: q, colName: t.names[q], value: best ? best[1] : null, text };
      }),
    })),
    top: null,
    note:
      _(
        "one row per head, one column per query: the key it puts most weight on, and that weight",
      ) +
      (t.pooled
        ? "; " +
          _(
            "each query and key is a block of tokens (weights averaged over the block's queries, summed over its keys)",
          )
        : ""),
  };
}

/** Panels: several heatmaps of one shape (`ax`, read by figure.js readHeatmaps), each named
 * (not heads), e.g. the Heads section's six pattern scores of every (layer, head). One
 * table, a row per cell ("layer 3, head 4") and a column per panel ("previous", …), so that
 * a screen reader walks one head's scores along its row; the note names each panel's
 * highest cell. Null when not panels. */
export function panelTable(ax, link, title) {
  if (ax.length < 2 || (link && link.heads)) return null;
  if (!ax.every((b) => plainText(b.trace.name))) return null;
  const [a] = ax;
  if (ax.some((b) => b.rows !== a.rows || b.cols !== a.cols)) return null;
  const names = ax.map((b) => plainText(b.trace.name));
  const w = words(a);
  const rows = [];
  for (let r = 0; r < a.rows; r++)
    for (let c = 0; c < a.cols; c++)
      rows.push({
        name: `${w.row} ${a.rowNames[r]}, ${w.col} ${a.colNames[c]}`,
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
      ? `${names[p]}: ${w.row} ${a.rowNames[at.r]}, ${w.col} ${a.colNames[at.c]} ` +
          `(${formatValue(at.v, 2)})`
      : `${names[p]}: ${_("none")}`;
  });
  return {
    caption: title || _("chart"),
    rowNoun: "",
    colNoun: "",
    valueName: a.valueName,
    weights: false,
    rows,
    colNames: names,
    top: null,
    note: fill(_("one row per {row} and {column}, its {value} in each column; highest: {best}"), {
      row: w.row,
      column: w.col,
      value: a.valueName,
      best: best.join("; "),
    }),
  };
}

/** The table of a figure's bar chart (figure.js readBars): a row per bar, a column per
 * trace; whole-number values (counts) are shown without decimals (`digits: 0`). */
function barTable(b, title) {
  const counts = !b.weights && b.series.every((s) => s.values.every((v) => Number.isInteger(v)));
  return {
    caption: title || _("bar chart"),
    rowNoun: b.itemNoun,
    colNoun: "",
    rowWord: b.itemWord,
    colWord: "",
    valueName: b.valueName,
    weights: b.weights,
    digits: counts ? 0 : 4,
    colNames: b.series.map((s) => s.name),
    rows: b.names.map((name, i) => ({
      name,
      cells: b.series.map((s, c) => ({ col: c, colName: s.name, value: s.values[i] })),
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
  const title = figureTitle(figure);
  const tiled = tiles(figure);
  if (tiled) return [tilesTable(tiled, title)];
  const tables = [];
  const heatmaps = readHeatmaps(figure, link);
  const panels = panelTable(heatmaps, link, title);
  if (panels) tables.push(panels);
  const totalCells = heatmaps.reduce((n, h) => n + h.rows * h.cols, 0);
  (panels ? [] : heatmaps).forEach((h, ti) => {
    const { z, cols, rowNoun, colNoun, rowNames, colNames, valueName, weights, pooled } = h;
    const w = words(h);
    const top = cols > TOP_K_ABOVE || totalCells > MAX_CELLS ? TOP_K : null;
    const head = link && link.heads ? link.heads[ti] : heatmaps.length > 1 ? ti : null;
    const name = plainText(h.trace.name) || title;
    const caption =
      (head != null ? `${title}, ${fill(_("head {i}"), { i: head })}` : name) || _("chart");
    const rows = z.map((r, i) => {
      const cells = top
        ? topK(r, top, !weights).map(([c, v]) => ({ col: c, colName: colNames[c], value: v }))
        : r.map((v, c) => ({ col: c, colName: colNames[c], value: v }));
      return { name: rowNames[i], cells };
    });
    const notes = [];
    if (pooled) notes.push(_("each cell is the mean of a block of tokens"));
    if (top) {
      // TRANSLATORS: the plural of a noun of the board's tables ("keys"); a language that
      // cannot make it from the word alone writes just {noun}
      const nouns = fill(_("{noun}s"), { noun: w.col });
      const note = weights
        ? _(
            "{n} {nouns} per row: each row lists its top {k} {nouns} and their weights instead of every cell",
          )
        : _("{n} {nouns} per row: each row lists its top {k} {nouns} by size instead of every cell");
      notes.push(fill(note, { n: cols, nouns, k: top }));
    }
    tables.push({
      caption,
      rowNoun,
      colNoun,
      rowWord: w.row,
      colWord: w.col,
      valueName,
      weights,
      rows,
      colNames,
      top,
      note: notes.join("; "),
    });
  });
  const bars = readBars(figure);
  if (bars) tables.push(barTable(bars, title));
  return tables;
}

// ------------------------------------------------------------------ DOM

let tableCount = 0;

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
  const w = words(t);
  const head = el(doc, "thead");
  const hr = el(doc, "tr");
  hr.appendChild(el(doc, "td"));
  if (t.top) {
    for (let i = 1; i <= t.top; i++)
      hr.appendChild(el(doc, "th", { scope: "col" }, fill(_("top {i}"), { i })));
  } else {
    for (const c of t.colNames)
      hr.appendChild(el(doc, "th", { scope: "col" }, w.col ? `${w.col} ${c}` : c));
  }
  head.appendChild(hr);
  table.appendChild(head);
  const body = el(doc, "tbody");
  for (const r of t.rows) {
    const tr = el(doc, "tr");
    tr.appendChild(el(doc, "th", { scope: "row" }, w.row ? `${w.row} ${r.name}` : r.name));
    for (const c of r.cells) {
      const value = formatValue(c.value, t.digits == null ? 4 : t.digits);
      let text = t.top ? `${w.col} ${c.colName}: ${value}` : value;
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
      _("Table"),
    );
    holder = el(doc, "div", { id, class: "attnviz-table-holder attnviz-sr-only" });
    button.addEventListener("click", () => {
      const open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? _("Hide table") : _("Table");
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
