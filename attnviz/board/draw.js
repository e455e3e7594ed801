// Drawing: one plot div per chart, kept across reruns and redrawn in place with
// Plotly.react; unchanged charts at an unchanged width are not redrawn; the presenter
// view's text scale; horizontal axis titles fitted to the chart's width.

import { chartConfig } from "./downloads.js";
import { clearHighlights, hook, restoreBars } from "./link.js";

// Every font size of a figure times the text scale (the presenter view): layout.font
// and the explicit ones (titles, ticks, colour bars, cell text, annotations).
// Axis titles (long, vertical on the y axis) grow half as much, so that they stay
// within the plot's height.
function scaleFonts(obj, key, factor) {
  if (Array.isArray(obj)) return obj.map((o) => scaleFonts(o, key, factor));
  if (!obj || typeof obj !== "object" || ArrayBuffer.isView(obj)) return obj;
  const fontish = /font$/i.test(key || "");
  const axis = /^[xy]axis\d*$/.test(key || "");
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    if (fontish && k === "size" && typeof v === "number") out[k] = v * factor;
    else if (k === "x" || k === "y" || k === "z" || k === "text" || k === "customdata")
      out[k] = v; // data arrays: no fonts inside
    else if (axis && k === "title") out[k] = scaleFonts(v, k, 1 + (factor - 1) / 2);
    else out[k] = scaleFonts(v, k, factor);
  }
  return out;
}

export function scaled(layout, textScale) {
  if (textScale === 1) return layout;
  const out = scaleFonts(layout, "", textScale);
  // a long vertical axis title ("query i (row) — rows = tokens (PyTorch)") would outgrow
  // a short plot at the larger size: its two halves go on two lines
  for (const [k, ax] of Object.entries(out)) {
    const t = /^yaxis\d*$/.test(k) && ax && ax.title;
    if (t && typeof t.text === "string" && t.text.includes(" — ")) {
      ax.title = Object.assign({}, t, { text: t.text.replace(" — ", "<br>") });
      const m = out.margin || {};
      const size = (t.font && t.font.size) || 14;
      out.margin = Object.assign({}, m, { l: (m.l != null ? m.l : 80) + Math.ceil(size * 1.3) });
    }
  }
  const size = ((layout.font && layout.font.size) || 12) * textScale;
  out.font = Object.assign({}, out.font, { size });
  return out;
}

// A horizontal axis title wider than its chart ("query i (column) — columns = tokens (UDL
// book)" under a third of a 1280 px page) would be cut at both edges: shorten it as the
// Python side does for vertical titles (figures._fit_axis_title): first the parenthesis,
// then all after the dash.
export function fitted(layout, width) {
  if (!width) return layout;
  let out = layout;
  for (const [k, ax] of Object.entries(layout)) {
    const t = /^xaxis\d*$/.test(k) && ax && ax.title;
    if (!t || typeof t.text !== "string" || !t.text.includes(" — ")) continue;
    const px = 7.8 * (((t.font && t.font.size) || 14) / 14);
    const [head, tail] = t.text.split(" — ", 2);
    const short = tail.replace(/ \((PyTorch|UDL book)\)$/, "");
    const forms = [t.text, `${head} — ${short}`, head];
    const text = forms.find((f) => f.length * px <= width - 16) || head;
    if (text === t.text) continue;
    if (out === layout) out = Object.assign({}, layout);
    out[k] = Object.assign({}, ax, { title: Object.assign({}, t, { text }) });
  }
  return out;
}

function scaledData(data, textScale) {
  return textScale === 1 ? data : data.map((t) => scaleFonts(t, "", textScale));
}

// Tick labels drawn as they are: plotly's default for a numeric axis or colour bar
// (`ticklabeloverflow: "hide past div"`) measures every tick label (a getBBox, i.e. a
// forced layout, per label) on every redraw to hide those past the chart's edge, about a
// fifth of a heatmap's Plotly.react (measured, docs/benchmarks.md "Head change: where the
// time goes"). The board's charts make room for their labels (margins, automargin), so
// nothing is hidden by it; a figure that sets the option keeps its own.
function allowTicks(obj) {
  return obj && obj.ticklabeloverflow == null
    ? Object.assign({}, obj, { ticklabeloverflow: "allow" })
    : obj;
}

export function quickTicks(layout, data) {
  const lay = Object.assign({}, layout);
  for (const k of Object.keys(lay)) if (/^[xy]axis\d*$/.test(k)) lay[k] = allowTicks(lay[k]);
  if (!lay.xaxis) lay.xaxis = { ticklabeloverflow: "allow" };
  if (!lay.yaxis) lay.yaxis = { ticklabeloverflow: "allow" };
  const dat = data.map((t) =>
    t && t.colorbar ? Object.assign({}, t, { colorbar: allowTicks(t.colorbar) }) : t,
  );
  return [lay, dat];
}

/** Draw `args.figures` in `board.grid` (one cell per figure, by key); resolves with the
 * cells that were (re)drawn. */
export function draw(board, args) {
  const Plotly = board.Plotly;
  const scale = Number(args.text_scale) || 1;
  const rescale = scale !== board.textScale;
  board.textScale = scale;
  const figs = args.figures || [];
  const cols = args.columns && args.columns.length ? args.columns : [1];
  board.grid.style.gridTemplateColumns = cols.map((w) => `minmax(0, ${w}fr)`).join(" ");
  const keep = new Set(figs.map((f) => f.key));
  for (const [k, c] of board.cells) {
    if (!keep.has(k)) {
      board.detach(c);
      Plotly.purge(c.gd);
      c.cell.remove();
      board.cells.delete(k);
    }
  }
  // first every cell in place, then every width read (one layout of the page), then the
  // draws: a width read after the previous chart's Plotly.react forced a layout of the
  // whole page per chart (docs/benchmarks.md, issue 27)
  const cells = figs.map((f, i) => {
    let c = board.cells.get(f.key);
    if (!c) {
      const cell = document.createElement("div");
      cell.className = "cell";
      const gd = document.createElement("div");
      gd.className = "plot";
      gd.setAttribute("role", "img");
      cell.appendChild(gd);
      c = { cell, gd, spec: f, config: chartConfig(Plotly, f.key), hooked: false };
      board.cells.set(f.key, c);
    }
    const grid = board.grid;
    if (grid.children[i] !== c.cell) grid.insertBefore(c.cell, grid.children[i] || null);
    restoreBars(Plotly, c); // a hovered row's preview, in a chart that may not be redrawn
    clearHighlights(c);
    c.spec = f;
    c.index = i;
    c.cell.dataset.key = f.key;
    c.gd.setAttribute("aria-label", f.label || f.key);
    return c;
  });
  const widths = cells.map((c) => c.cell.clientWidth);
  const jobs = figs.map((f, i) => {
    const c = cells[i];
    // an unchanged chart at an unchanged width (its axis titles fit it) is not redrawn
    const width = widths[i];
    const same = f.rev && f.rev === c.drawnFig && width === c.drawnWidth;
    if (same && !rescale) return Promise.resolve(null);
    c.drawnFig = f.rev || null;
    c.drawnWidth = width;
    const fig = f.figure || {};
    const [lay, dat] = quickTicks(
      fitted(scaled(fig.layout || {}, scale), width),
      scaledData(fig.data || [], scale),
    );
    return Plotly.react(c.gd, dat, lay, c.config).then(() => {
      if (!c.hooked) {
        hook(board, c);
        c.hooked = true;
      }
      return c;
    });
  });
  return Promise.all(jobs).then((drawn) => drawn.filter(Boolean));
}
