// Fitting: each chart's layout made to fit the room it gets on the screen (issue 25), from a
// phone held upright to a 1080p projector. Pure functions of a plotly layout (and data) and
// the room in pixels, returning new objects (the figure is never changed in place); draw.js
// applies them before Plotly.react. Tested in Node: tests/js/fit.test.mjs.
//
//   gridColumns  a board narrower than STACK_BELOW stacks its charts one per row at full
//                width (Streamlit's st.columns stack at the same 640 px); a chart narrower
//                than MIN_CHART_PX wraps its board's row in two
//   wrapTitle    a figure title wider than its chart wraps at spaces (the top margin and the
//                height grow by the added lines: the plot keeps its size), never clipped
//   legendBelow  a legend to the right of a chart narrower than LEGEND_BELOW goes under it
//   presenterFill  the presenter view (or a board fitted to the screen): a matrix fills the
//                free area below the chart (room.height) and the chart's width, square
//                cells for a square matrix (or a figure with layout.meta.cells "square"),
//                others stretched by at most 1:3, tick labels
//                thinned out where the cells are too small for them (a figure with
//                layout.meta.colorbar "under": its colour bar under the plot, the width
//                left to the plot); a grid of heads gets square cells too (with
//                meta.grid.shared_x its x labels under each column's last plot only); a
//                chart with layout.meta.fill "height" the room's height

import { PDI, RLI } from "./rtl.js";

export const STACK_BELOW = 640;
export const MIN_CHART_PX = 200;
export const LEGEND_BELOW = 460;
const LEGEND_GAP = 12; // px between the axis title and a legend under the plot
export const PLOTLY_FONT = '"Open Sans", verdana, arial, sans-serif';
const LINE = 1.3; // plotly's line height, in font sizes
// The px a slide's matrix may give up below its plot for its x labels turned upright.
const MAX_TURN_GROWTH = 120;
const TITLE_PAD = 8; // px kept free right of a title

/** Text width estimate where no canvas exists (Node): 0.56 of the font size a character. */
export function estimateWidth(text, size) {
  return String(text).length * size * 0.56;
}

/** A `measure(text, sizePx) -> px` that uses a canvas of `doc` when it has one. */
export function measurer(doc) {
  const canvas = doc && doc.createElement ? doc.createElement("canvas") : null;
  const ctx = canvas && canvas.getContext ? canvas.getContext("2d") : null;
  if (!ctx) return estimateWidth;
  const cache = new Map();
  return (text, size) => {
    const key = `${size}|${text}`;
    if (!cache.has(key)) {
      ctx.font = `${size}px ${PLOTLY_FONT}`;
      cache.set(key, ctx.measureText(String(text)).width);
    }
    return cache.get(key);
  };
}

/** Plotly text (tags, character references) as the characters it draws. */
export function plain(s) {
  return String(s == null ? "" : s)
    .replace(/<[^>]*>/g, "")
    .replace(/&#(\d+);/g, (_, d) => String.fromCharCode(Number(d)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

/** The CSS grid columns of a board `width` px wide showing `columns` (relative widths). */
export function gridColumns(columns, width) {
  const cols = columns && columns.length ? columns : [1];
  if (!width || cols.length === 1) return cols.map((w) => `minmax(0, ${w}fr)`).join(" ");
  if (width < STACK_BELOW) return "minmax(0, 1fr)";
  if (width / cols.length >= MIN_CHART_PX) return cols.map((w) => `minmax(0, ${w}fr)`).join(" ");
  return Array(Math.ceil(cols.length / 2)).fill("minmax(0, 1fr)").join(" ");
}

// One line of a title, wrapped at spaces into lines of at most `room` px (a word longer
// than that is cut into pieces that fit).
function wrapWords(text, size, room, measure) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line ? `${line} ${word}` : word;
    if (!line || measure(plain(next), size) <= room) {
      line = next;
      continue;
    }
    lines.push(line);
    line = word;
  }
  lines.push(line);
  const out = [];
  for (const l of lines) {
    let rest = l;
    while (rest.length > 1 && measure(plain(rest), size) > room) {
      let n = rest.length - 1;
      while (n > 1 && measure(plain(rest.slice(0, n)), size) > room) n -= 1;
      if (/[<&]/.test(rest.slice(0, n))) break; // never cut inside a tag or a reference
      out.push(rest.slice(0, n));
      rest = rest.slice(n);
    }
    out.push(rest);
  }
  return out;
}

/** `layout` with its title wrapped to fit `width` px (its lines kept, each wrapped at
 * spaces); the top margin and the height grow by the added lines. */
export function wrapTitle(layout, width, measure = estimateWidth) {
  const t = layout && layout.title;
  if (!width || !t || typeof t.text !== "string" || !t.text) return layout;
  const base = (t.font && t.font.size) || ((layout.font && layout.font.size) || 12) * 1.4;
  const room = width - TITLE_PAD - (t.pad && t.pad.l ? t.pad.l : 0);
  let added = 0;
  const lines = [];
  for (const seg of t.text.split(/<br\s*\/?>/i)) {
    // a line wrapped in one span (the grey note under a title): its own size, kept per line
    const m = seg.match(/^(<span[^>]*>)([^<]*)(<\/span>)$/i);
    const size = m && /font-size:\s*(\d+(?:\.\d+)?)px/i.test(m[1])
      ? Number(m[1].match(/font-size:\s*(\d+(?:\.\d+)?)px/i)[1])
      : base;
    const inner = m ? m[2] : seg;
    if (measure(plain(inner), size) <= room || (!m && /<[^>]*\s[^>]*>/.test(inner))) {
      lines.push(seg);
      continue;
    }
    // a right-to-left line's isolate (rtlLines) goes around each line it is cut into
    const iso = inner.startsWith(RLI) && inner.endsWith(PDI);
    const wrapped = wrapWords(iso ? inner.slice(1, -1) : inner, size, room, measure);
    added += (wrapped.length - 1) * size * LINE;
    for (const w of wrapped) {
      const line = iso ? RLI + w + PDI : w;
      lines.push(m ? m[1] + line + m[3] : line);
    }
  }
  if (!added) return layout;
  const grow = Math.ceil(added);
  const margin = Object.assign({}, layout.margin);
  margin.t = (margin.t != null ? margin.t : 100) + grow;
  const out = Object.assign({}, layout, {
    title: Object.assign({}, t, { text: lines.join("<br>") }),
    margin,
  });
  if (typeof layout.height === "number") out.height = layout.height + grow;
  return out;
}

function shownInLegend(data, layout) {
  if (layout.showlegend === false) return [];
  const entries = data.filter(
    (t) => t && t.showlegend !== false && !["heatmap", "contour"].includes(t.type),
  );
  return layout.showlegend === true || entries.length > 1 ? entries : [];
}

/** `layout` with a legend at the right of a chart narrower than LEGEND_BELOW moved under
 * it, in rows (left to right) that fit `width`; the bottom margin and the height grow. */
export function legendBelow(layout, data, width, measure = estimateWidth) {
  if (!width || width >= LEGEND_BELOW) return layout;
  const lg = layout.legend || {};
  if (lg.orientation === "h" || (typeof lg.x === "number" && lg.x < 1)) return layout;
  const entries = shownInLegend(data || [], layout);
  if (!entries.length) return layout;
  const size = (lg.font && lg.font.size) || (layout.font && layout.font.size) || 12;
  // plotly's horizontal legend: entries side by side, a new row when the plot area's width
  // is full (draw.js corrects the margin after drawing if plotly's rows differ)
  const m = layout.margin || {};
  const room = width - (m.l != null ? m.l : 80) - (m.r != null ? m.r : 80);
  let rows = 1;
  let x = 0;
  for (const t of entries) {
    const w = measure(plain(t.name || "trace"), size) + 44; // symbol and gaps
    if (x && x + w > room) {
      rows += 1;
      x = 0;
    }
    x += w;
  }
  const grow = Math.ceil(rows * (size * LINE + 6) + LEGEND_GAP);
  const margin = Object.assign({}, layout.margin);
  margin.b = (margin.b != null ? margin.b : 80) + grow;
  const out = Object.assign({}, layout, {
    margin,
    legend: Object.assign({}, lg, {
      orientation: "h",
      x: 0,
      xanchor: "left",
      xref: "container",
      y: 0,
      yanchor: "bottom",
      yref: "container",
    }),
  });
  if (typeof layout.height === "number") out.height = layout.height + grow;
  return out;
}

/** After drawing: the margin and height that fit the legend `legendBelow` put under the
 * plot as plotly drew it (`drawnHeight`: its height in px), from `base` (the layout before
 * the legend moved); null when the estimate was right. */
export function legendCorrection(base, drawn, drawnHeight) {
  const bm = (base.margin && base.margin.b) != null ? base.margin.b : 80;
  const need = Math.ceil(bm + drawnHeight + LEGEND_GAP);
  const has = drawn.margin && drawn.margin.b;
  if (!drawnHeight || has == null || Math.abs(need - has) <= 3) return null;
  const out = { "margin.b": need };
  if (typeof drawn.height === "number") out.height = drawn.height + (need - has);
  return out;
}

function span(axis) {
  const r = axis && axis.range;
  return Array.isArray(r) && r.length === 2 ? Math.abs(Number(r[1]) - Number(r[0])) : null;
}

/** Whether the figure is one matrix: a single heatmap on x/y whose axes' ranges are set to
 * its cells (attnviz's matrix figures), with or without markers over it (masked cells). */
export function isMatrix(layout, data) {
  const heat = (data || []).filter((t) => t && t.type === "heatmap");
  if (heat.length !== 1 || (heat[0].xaxis && heat[0].xaxis !== "x")) return false;
  const sx = span(layout.xaxis);
  const sy = span(layout.yaxis);
  return sx != null && sy != null && sx > 0 && sy > 0;
}

/** Whether the figure is one square matrix: a matrix whose axes' ranges have the same
 * length (a token-by-token matrix: scores, weights, a mask). */
export function isSquareMatrix(layout, data) {
  return isMatrix(layout, data) && Math.abs(span(layout.xaxis) - span(layout.yaxis)) < 1e-9;
}

/** Whether the figure is a grid of matrices (small multiples: `layout.meta.grid`, set by
 * attnviz.viz.attention.small_multiples_figure). */
export function isGrid(layout) {
  const g = layout && layout.meta && layout.meta.grid;
  return !!(g && g.rows && g.cols && g.n && g.m);
}

/** Whether the figure asks to be as tall as the room a slide leaves it (a line or bar
 * chart that is a slide's main chart: `layout.meta.fill === "height"`). */
export function fillsHeight(layout) {
  return !!(layout && layout.meta && layout.meta.fill === "height");
}

/** Whether a slide fits the figure to its room (presenterFill): a matrix, a grid, or a
 * chart that asks for the room's height. */
export function fillsSlide(layout, data) {
  return isMatrix(layout || {}, data || []) || isGrid(layout || {}) || fillsHeight(layout);
}

// The most a slide stretches a cell: never thinner than 1:3.
export const MAX_CELL_RATIO = 3;

/** How far a matrix of `nx` x `ny` cells may stretch its cells on a slide: square
 * matrices not at all, nor one whose figure asks for square cells (`square`:
 * layout.meta.cells === "square", cross-attention's T x S weights); others by the matrix's
 * own aspect, at least 1.5, at most 1:3. */
export function cellRatio(nx, ny, square = false) {
  if (nx === ny || square) return 1;
  return Math.min(MAX_CELL_RATIO, Math.max(1.5, Math.max(nx, ny) / Math.min(nx, ny)));
}

// Whether a slide puts a heatmap's colour bar under its plot: the figure asks for it
// (`layout.meta.colorbar === "under"`: a row of matrices whose bars beside them took the
// width their plots needed).
function barUnder(layout, heat) {
  const meta = (layout && layout.meta) || {};
  return !!(heat && heat.showscale !== false && meta.colorbar === "under");
}

// The px under a matrix's x labels that its colour bar under it takes (its bar, its ticks
// and a gap).
function barDepth(heat) {
  const cb = heat.colorbar || {};
  const tick = (cb.tickfont && cb.tickfont.size) || 13;
  return Math.ceil((cb.thickness || 12) + tick * 1.6 + 22);
}

// The width of a heatmap's colour bar (ticks, title and gaps) at its tick size.
function barWidth(heat) {
  if (!heat || heat.showscale === false) return 0;
  const tick = (heat.colorbar && heat.colorbar.tickfont && heat.colorbar.tickfont.size) || 13;
  return Math.ceil(12 + 10 + tick * 2.6 + tick * 1.4 + 12);
}

// Values written in cells `cell` px wide grow with them: a quarter of a cell, at most 28 px.
function grownText(data, heat, cell) {
  if (!heat.texttemplate) return data;
  const size = (heat.textfont && heat.textfont.size) || 12;
  const grown = Math.min(28, Math.max(size, Math.floor(cell * 0.25)));
  if (grown <= size) return data;
  const textfont = Object.assign({}, heat.textfont, { size: grown });
  return data.map((d) => (d === heat ? Object.assign({}, d, { textfont }) : d));
}

/** The presenter view: a matrix fills the slide's free area, `room` ({width, height}: the
 * chart's width and the screen's height left below the chart's top; height 0: the
 * figure's own). A square matrix gets square cells; another stretches its cells to fill
 * the room by at most cellRatio (never thinner than 1:3), plotly keeping that ratio
 * (`scaleanchor`, `scaleratio`). Never smaller than the figure's own height gives. The
 * figure is then only as wide as its plot and colour bar; values written in the cells grow
 * with them; x labels that would be thinned out flat are turned upright, the bottom margin
 * grown for them (a token per column keeps its label). A grid of matrices (small
 * multiples): fitGrid. Returns [layout, data]; other figures: unchanged. */
export function presenterFill(layout, data, room) {
  if (!room || !room.width) return [layout, data];
  if (fillsHeight(layout)) {
    return [room.height ? Object.assign({}, layout, { height: Math.max(room.height, 240) }) : layout, data];
  }
  if (isGrid(layout)) return [fitGrid(layout, room), data];
  if (!isMatrix(layout, data)) return [layout, data];
  const m = layout.margin || {};
  const l = m.l != null ? m.l : 80;
  const r = m.r != null ? m.r : 80;
  const t = m.t != null ? m.t : 100;
  const b = m.b != null ? m.b : 80;
  const heat = data.find((d) => d.type === "heatmap");
  // a colour bar under the plot (below the x labels and title, in the bottom margin), or
  // beside it
  const under = barUnder(layout, heat);
  const bar = under ? 0 : barWidth(heat);
  const depth = under ? barDepth(heat) : 0;
  // cells along each axis (a pooled axis: blocks of dx or dy units)
  const dx = Number(heat.dx) || 1;
  const dy = Number(heat.dy) || 1;
  const nx = span(layout.xaxis) / dx;
  const ny = span(layout.yaxis) / dy;
  const own = (typeof layout.height === "number" ? layout.height : 450) - t - b;
  const square = !!(layout.meta && layout.meta.cells === "square");
  const ratio = cellRatio(Math.round(nx), Math.round(ny), square);
  // the cells for a bottom margin `bottom`: as large as the room allows
  const cellsFor = (bottom) => {
    const byWidth = Math.max(room.width - l - r - bar, 40);
    const byHeight = Math.max(room.height ? room.height - t - bottom : own, own);
    let w = byWidth / nx;
    let h = byHeight / ny;
    if (w > h * ratio) w = h * ratio;
    if (h > w * ratio) h = w * ratio;
    return [w, h];
  };
  // x labels that would be thinned out flat, but fit turned upright: the bottom margin grows
  // by what they need (at most MAX_TURN_GROWTH px), so that every token keeps its label
  let bottom = b + depth;
  let [cw, ch] = cellsFor(bottom);
  const need = turnNeed(layout.xaxis, cw / dx);
  const short = need - underPlot(layout, bottom - depth);
  if (need && short > 0 && short <= MAX_TURN_GROWTH) {
    bottom += Math.ceil(short);
    [cw, ch] = cellsFor(bottom);
  }
  const plotW = Math.floor(cw * nx);
  const plotH = Math.floor(ch * ny);
  const constrained = { constrain: "domain" };
  const lay = Object.assign({}, layout, {
    height: plotH + t + bottom,
    width: Math.min(room.width, plotW + l + r + bar),
    margin: Object.assign({}, m, { b: bottom }),
    xaxis: Object.assign({}, belowTurned(thinTicks(layout.xaxis, cw / dx, false, undefined, underPlot(layout, bottom - depth)), layout.xaxis), constrained, {
      constraintoward: "left",
    }),
    yaxis: Object.assign({}, thinTicks(layout.yaxis, ch / dy, true), constrained, {
      scaleanchor: "x",
      // y px per unit over x px per unit: the cells' height over their width, per unit
      scaleratio: ratio === 1 ? 1 : Number((ch / dy / (cw / dx)).toFixed(6)),
      constraintoward: "top",
    }),
  });
  let dat = data;
  if (depth) {
    // the bar at the figure's bottom edge, as long as the plot is wide
    const colorbar = Object.assign({}, heat.colorbar, {
      orientation: "h", x: 0, xanchor: "left", xref: "paper", len: 1, lenmode: "fraction",
      y: 0, yanchor: "bottom", yref: "container", ypad: 4,
      title: Object.assign({}, heat.colorbar.title, { side: "right" }),
    });
    dat = data.map((d) => (d === heat ? Object.assign({}, d, { colorbar }) : d));
  }
  return [lay, grownText(dat, dat.find((d) => d.type === "heatmap"), Math.min(cw, ch))];
}

// `axis` (x) with its title below its labels where they were turned upright here: plotly
// places an axis title a fixed distance under the axis unless it has a `standoff`, which
// counts from the labels.
function belowTurned(axis, before) {
  if (!axis || axis.tickangle !== -90 || (before && before.tickangle != null) || !axis.title) {
    return axis;
  }
  const title = typeof axis.title === "string" ? { text: axis.title } : axis.title;
  return Object.assign({}, axis, { title: Object.assign({}, title, { standoff: 6 }) });
}

// The px under a matrix's plot (its bottom margin `b`) left for turned x tick labels: less
// the x axis title's lines and a gap.
function underPlot(layout, b) {
  const t = layout.xaxis && layout.xaxis.title;
  const text = t && (typeof t === "string" ? t : t.text);
  const size = (t && t.font && t.font.size) || (layout.font && layout.font.size) || 14;
  const lines = text ? String(text).split(/<br\s*\/?>/i).length : 0;
  return b - lines * size * LINE - 12;
}

/** `axis` with its tick labels (an array of labels) thinned out to every k-th where ticks
 * `pitch` px a unit apart (cells of one unit: one label a cell; a grid of heads: one a
 * head, several units apart) are too close for them: a vertical axis's labels need 1.25
 * lines of their type, a horizontal axis's their width and a gap (slanted labels,
 * `tickangle`: the lines of type across the slant, or their width if that is less), or, turned upright
 * (where `turnRoom`, the px under the plot for them, fits the longest), 1.25 lines: every
 * label is kept, turned. */
export function thinTicks(axis, pitch, vertical, measure = estimateWidth, turnRoom = 0) {
  const room = labelRoom(axis, pitch, measure);
  if (!room) return axis;
  const { apart, size, line, longest } = room;
  const sin = Math.abs(Math.sin(((Number(axis.tickangle) || 0) * Math.PI) / 180));
  const need = vertical ? line : sin > 0.2 ? Math.min(longest + 6, (size * 1.3) / sin) : longest + 6;
  const k = Math.ceil(need / apart);
  if (k <= 1) return axis;
  if (!vertical && apart >= line && longest + 6 <= turnRoom && axis.tickangle == null) {
    return Object.assign({}, axis, { tickangle: -90 });
  }
  const keep = (_, i) => i % k === 0;
  return Object.assign({}, axis, {
    tickvals: axis.tickvals.filter(keep),
    ticktext: axis.ticktext.filter(keep),
  });
}

/** The px under the plot that an x axis's labels (an array of labels, ticks `pitch` px a
 * unit apart) need turned upright, where flat they would be thinned out and turned they all
 * fit (1.25 lines apart); 0 where they fit flat, cannot be turned or are angled already. */
export function turnNeed(axis, pitch, measure = estimateWidth) {
  const room = labelRoom(axis, pitch, measure);
  if (!room || axis.tickangle != null || !axis.ticktext.length) return 0;
  const { apart, line, longest } = room;
  return longest + 6 <= apart || apart < line ? 0 : longest + 6;
}

/** An axis of labelled ticks (an array of labels, ticks `pitch` px a unit apart): how far
 * apart its labels are, their type's size, a line of that type (1.25 of it) and the widest
 * label; null for another axis (thinTicks and turnNeed read these alike). */
function labelRoom(axis, pitch, measure) {
  if (!axis || axis.tickmode !== "array" || !Array.isArray(axis.ticktext)) return null;
  if (!Array.isArray(axis.tickvals) || !pitch) return null;
  const vals = axis.tickvals.map(Number);
  let unit = Infinity;
  for (let i = 1; i < vals.length; i++) unit = Math.min(unit, Math.abs(vals[i] - vals[i - 1]));
  const apart = pitch * (Number.isFinite(unit) && unit > 0 ? unit : 1);
  const size = (axis.tickfont && axis.tickfont.size) || 12;
  const longest = Math.max(...axis.ticktext.map((s) => measure(plain(s), size)));
  return { apart, size, line: size * 1.25, longest };
}

/** The px a horizontal axis's tick labels take under its plot (the ticks and a gap
 * included): a line of type, or slanted labels (`tickangle`) their longest's slant. */
export function tickDepth(axis, measure = estimateWidth) {
  const a = axis || {};
  const size = (a.tickfont && a.tickfont.size) || 12;
  const rad = ((Number(a.tickangle) || 0) * Math.PI) / 180;
  if (Math.abs(Math.sin(rad)) < 0.2 || !Array.isArray(a.ticktext) || !a.ticktext.length) {
    return size * 1.8;
  }
  const wide = Math.max(...a.ticktext.map((t) => measure(plain(t), size)));
  return 10 + wide * Math.abs(Math.sin(rad)) + size * 1.2 * Math.abs(Math.cos(rad));
}

/** A grid of matrices (small multiples, `layout.meta.grid`: rows x cols plots of n x m
 * cells) laid out again in `cols` columns (a phone: one), every plot with square cells:
 * as wide as the room allows or, with `room.height`, as tall as the screen below allows
 * (never below the figure's own height); each plot's title (the first annotations) above
 * it, tick labels left of the first column only, thinned out where the cells are too
 * small for them; under each row its x labels (slanted ones too) and axis title, clear of
 * the next row's titles (plots that share their x labels, `grid.shared_x`: only under each
 * column's last plot, the rows closer). One column (a phone): the shared colour bar (`coloraxis`) lies
 * across the top, above the first plot, not beside a column of plots it would stretch
 * over; the plots take the width it left. */
export function fitGrid(layout, room, cols, measure = estimateWidth) {
  const g = layout.meta.grid;
  const count = g.count || g.rows * g.cols;
  const c = Math.max(1, Math.min(cols || g.cols, count));
  const rows = Math.ceil(count / c);
  const m = layout.margin || {};
  const l = m.l != null ? m.l : 80;
  const r = m.r != null ? m.r : 80;
  const x0 = layout.xaxis || {};
  const font = (layout.font && layout.font.size) || 12;
  // plotly's axis titles are 1.2 times the layout's type unless they say otherwise
  const titleSize = (x0.title && x0.title.font && x0.title.font.size) || font * 1.2;
  const titled = !!(x0.title && x0.title.text);
  const note = (layout.annotations || [])[0];
  const noteSize = (note && note.font && note.font.size) || font;
  const noteH = noteSize * 1.4 + ((note && note.yshift) || 0);
  // under a row: its x ticks (slanted ones need their slant) and axis title
  const under = tickDepth(x0, measure) + (titled ? titleSize * 1.6 : 0);
  const b = Math.max(m.b != null ? m.b : 80, Math.ceil(under));
  // the plots share their x labels (`grid.shared_x`: a slide's heads, every plot over the
  // same tokens): in columns of two rows or more only a column's last plot has them
  const shared = !!g.shared_x && c > 1 && rows > 1;
  // between two rows: what is under the upper one, a gap, the next plot's title
  const gap = Math.ceil((shared ? 0 : under) + 12 + noteH);
  const flat = c === 1 && !!(layout.coloraxis && layout.coloraxis.colorbar);
  const cbar = (layout.coloraxis && layout.coloraxis.colorbar) || {};
  const cbTick = (cbar.tickfont && cbar.tickfont.size) || font;
  // the shared colour bar: beside the plots, or (one column) across the top
  const bar = flat ? 0 : Math.ceil(12 + 10 + 13 * 4 + 12);
  const barH = flat ? Math.ceil((cbar.thickness || 12) + cbTick * 1.6 + 14) : 0;
  const t = (m.t != null ? m.t : 100) + barH;
  const room0 = Math.max(room.width - l - r - bar, 40);
  const hgap = c > 1 ? Math.max(0.04 * room0, 24) : 0;
  // side: a plot's longer side, so that its width fits a column and its height a row
  const long = Math.max(g.m, g.n);
  let side = (((room0 - hgap * (c - 1)) / c) * long) / g.m;
  if (room.height) {
    side = Math.min(side, (((room.height - t - b - gap * (rows - 1)) / rows) * long) / g.n);
  }
  const own = typeof layout.height === "number" ? layout.height : 450;
  side = Math.max(side, 40);
  const cw = (side * g.m) / Math.max(g.m, g.n); // plot width and height, square cells
  const chh = (side * g.n) / Math.max(g.m, g.n);
  // never lower than the figure's own height, unless the page keeps room under the charts
  // (`room.below`: a lesson's question on a slide), which that floor would push off screen
  const P = Math.max(rows * chh + gap * (rows - 1), room.below ? 0 : own - t - b);
  // the figure only as wide as its plots and colour bar (the bar beside the last column)
  const W = Math.min(room0, c * cw + hgap * (c - 1));
  const out = Object.assign({}, layout, {
    height: Math.ceil(P + t + b),
    margin: Object.assign({}, m, { b, t }),
  });
  // always a width of its own: a figure without one is as wide as plotly finds its div,
  // which after a wider figure (another task's heads, the same board) kept that one's
  // width, and the plots lost their square cells
  out.width = Math.ceil(W + l + r + bar);
  if (flat) {
    out.coloraxis = Object.assign({}, layout.coloraxis, {
      colorbar: Object.assign({}, cbar, {
        orientation: "h",
        x: 0,
        xanchor: "left",
        xref: "paper",
        len: Math.min(1, cw / W),
        lenmode: "fraction",
        y: 1 + (noteH + 6) / P,
        yanchor: "bottom",
        yref: "paper",
        title: Object.assign({}, cbar.title, { side: "right" }),
      }),
    });
  }
  const notes = (layout.annotations || []).slice();
  for (let i = 0; i < count; i++) {
    const row = Math.floor(i / c);
    const col = i % c;
    const sfx = i === 0 ? "" : String(i + 1);
    const xa = (col * (cw + hgap)) / W;
    const ytop = 1 - (row * (chh + gap)) / P;
    const xk = `xaxis${sfx}`;
    const yk = `yaxis${sfx}`;
    if (!layout[xk] || !layout[yk]) continue;
    // the domains give each plot its place; scaleanchor keeps its cells square where the
    // colour bar's width was estimated a little off (plotly shrinks the longer side)
    out[xk] = Object.assign({}, thinTicks(layout[xk], cw / g.m, false, measure), {
      domain: [xa, Math.min(1, xa + cw / W)],
      constrain: "domain",
    });
    if (shared && i + c < count) {
      // a plot under it in its column: its x labels and title are that plot's
      out[xk].showticklabels = false;
      out[xk].title = Object.assign({}, typeof out[xk].title === "object" ? out[xk].title : {}, {
        text: "",
      });
    }
    const y = Object.assign({}, thinTicks(layout[yk], chh / g.n, true, measure), {
      domain: [Math.max(0, ytop - chh / P), ytop],
      showticklabels: col === 0,
      scaleanchor: `x${sfx}`,
      scaleratio: 1,
      constrain: "domain",
      constraintoward: "top",
    });
    out[yk] = y;
    if (notes[i]) notes[i] = Object.assign({}, notes[i], { x: xa + cw / W / 2, y: ytop });
  }
  out.annotations = notes;
  return out;
}
