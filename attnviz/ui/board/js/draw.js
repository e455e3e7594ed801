// Drawing: one plot div per chart, kept across reruns and redrawn in place with
// Plotly.react; unchanged charts in an unchanged room are not redrawn; the presenter
// view's text scale; horizontal axis titles fitted to the chart's width; each chart fitted
// to the room it gets (fit.js: stacked on a phone, titles wrapped, the legend under a
// narrow chart, square cells on the projector); no mode bar where it would cover the
// title for good (a touch screen, a stacked board) or on a slide.

import { _, dir, fill, separators } from "./i18n.js";
import { chartConfig } from "./downloads.js";
import {
  gridColumns,
  fillsSlide,
  fitGrid,
  isGrid,
  legendBelow,
  legendCorrection,
  measurer,
  presenterFill,
  STACK_BELOW,
  wrapTitle,
} from "./fit.js";
import { rtlFigure } from "./rtl.js";
import { cellText, READABLE_PX } from "./values.js";
import { clearHighlights, hook, restoreBars } from "./link.js";

// On a slide (a text scale above 1, the presenter view) no chart text is smaller than this
// (px): tick labels, axis and colour-bar titles, values in cells, a title's grey second line
// are read from the back row of a lecture hall (issue 47; attnviz.ui.present).
export const SLIDE_MIN_PX = 20;

// A font size times the text scale, at least SLIDE_MIN_PX when scaled up.
function grown(size, factor, scale) {
  const out = size * factor;
  return scale > 1 ? Math.max(out, SLIDE_MIN_PX) : out;
}

// The sizes written in a title's own markup ("<span style='font-size:13px'>": the grey
// note line of attnviz.viz.style.NOTE_LINE), grown as the fonts are.
function grownMarkup(text, factor, scale) {
  if (typeof text !== "string" || !/font-size:/i.test(text)) return text;
  return text.replace(/font-size:\s*(\d+(?:\.\d+)?)px/gi, (_, n) => {
    const px = Math.round(grown(Number(n), factor, scale) * 10) / 10;
    return `font-size:${px}px`;
  });
}

// The font sizes (px) a title's markup sets, in order.
function markupSizes(text) {
  if (typeof text !== "string") return [];
  return Array.from(text.matchAll(/font-size:\s*(\d+(?:\.\d+)?)px/gi), (m) => Number(m[1]));
}

// Every font size of a figure times the text scale (the presenter view): layout.font
// and the explicit ones (titles, ticks, colour bars, cell text, annotations), and those a
// title's or an annotation's markup sets; none under SLIDE_MIN_PX on a slide.
// Axis titles (long, vertical on the y axis) grow half as much, so that they stay
// within the plot's height (but not under SLIDE_MIN_PX either).
function scaleFonts(obj, key, factor, scale = factor) {
  if (Array.isArray(obj)) return obj.map((o) => scaleFonts(o, key, factor, scale));
  if (!obj || typeof obj !== "object" || ArrayBuffer.isView(obj)) return obj;
  const fontish = /font$/i.test(key || "");
  const axis = /^[xy]axis\d*$/.test(key || "");
  const titled = key === "title" || key === "annotations";
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    if (fontish && k === "size" && typeof v === "number") out[k] = grown(v, factor, scale);
    else if (k === "text" && titled) out[k] = grownMarkup(v, factor, scale);
    else if (k === "x" || k === "y" || k === "z" || k === "text" || k === "customdata")
      out[k] = v; // data arrays: no fonts inside
    else if (axis && k === "title") out[k] = scaleFonts(v, k, 1 + (factor - 1) / 2, scale);
    else out[k] = scaleFonts(v, k, factor, scale);
  }
  return out;
}

/** The forms of axis `name`'s title ({noun, forms, lines}) from the parts its builder sent
 * ({noun, head, rests}: attnviz.viz.style.AxisTitle.meta), or null: "head — rest" each,
 * longest first, and the same on two lines, "head<br>rest" ("" is the head alone). */
export function axisParts(layout, name) {
  const axes = layout && layout.meta && layout.meta.axes;
  const p = axes && axes[name];
  if (!p || typeof p.head !== "string" || !Array.isArray(p.rests)) return null;
  const join = (sep) => p.rests.map((r) => (r ? `${p.head}${sep}${r}` : p.head));
  return { noun: p.noun, forms: join(" — "), lines: join("<br>") };
}

// The px of a fixed margin (viz.style._fixed_margins) that hold the axis title, not labels.
const FIXED_TITLE_PX = 34;

export function scaled(layout, textScale) {
  if (textScale === 1) return layout;
  const out = scaleFonts(layout, "", textScale);
  // the part of a margin the builder set for token labels (automargin off: attnviz's
  // matrices, viz.style._fixed_margins: 34 px for the axis title, the rest for the labels)
  // grows with them, or the larger labels run into the axis title ("rows = tokens" over
  // "because"); numbers' short labels fit as they are
  const m0 = out.margin;
  const labelled = (ax) => ax && ax.automargin === false && Array.isArray(ax.ticktext);
  const withLabels = (px) => Math.ceil(px + Math.max(0, px - FIXED_TITLE_PX) * (textScale - 1));
  if (m0) {
    const grow = {};
    if (labelled(out.yaxis) && m0.l != null) grow.l = withLabels(m0.l);
    if (labelled(out.xaxis) && m0.b != null) grow.b = withLabels(m0.b);
    out.margin = Object.assign({}, m0, grow);
  }
  // a long vertical axis title ("query i (row) — rows = tokens (PyTorch)") would outgrow
  // a short plot at the larger size: it goes on two lines, the form its builder gave for
  // the form shown (layout.meta.axes, attnviz.viz.style.AxisTitle)
  for (const [k, ax] of Object.entries(out)) {
    const t = /^yaxis\d*$/.test(k) && ax && ax.title;
    const parts = axisParts(layout, k);
    const i = t && parts ? parts.forms.indexOf(t.text) : -1;
    if (i >= 0 && parts.lines[i] !== t.text) {
      ax.title = Object.assign({}, t, { text: parts.lines[i] });
      const m = out.margin || {};
      const size = (t.font && t.font.size) || 14;
      out.margin = Object.assign({}, m, { l: (m.l != null ? m.l : 80) + Math.ceil(size * 1.3) });
    }
  }
  // a title's note line set larger than its figure made room for: the top margin grows
  const before = markupSizes(layout.title && layout.title.text);
  const after = markupSizes(out.title && out.title.text);
  const more = after.reduce((sum, px, i) => sum + Math.max(0, px - before[i]), 0);
  if (more > 0) {
    const m = out.margin || {};
    out.margin = Object.assign({}, m, { t: (m.t != null ? m.t : 100) + Math.ceil(more * 1.3) });
    if (typeof out.height === "number") out.height += Math.ceil(more * 1.3);
  }
  const size = grown((layout.font && layout.font.size) || 12, textScale, textScale);
  out.font = Object.assign({}, out.font, { size });
  return out;
}

// A horizontal axis title wider than its chart ("query i (column) — columns = tokens (UDL
// book)" under a third of a 1280 px page) would be cut at both edges: the longest of its
// shorter forms that fits (its builder's, layout.meta.axes; the Python side does the same
// for vertical titles, viz.style._fit_axis_title): first without the parenthesis, then the
// head alone.
export function fitted(layout, width) {
  if (!width) return layout;
  let out = layout;
  for (const [k, ax] of Object.entries(layout)) {
    const t = /^xaxis\d*$/.test(k) && ax && ax.title;
    const parts = axisParts(layout, k);
    if (!t || !parts || parts.forms.length < 2) continue;
    const px = 7.8 * (((t.font && t.font.size) || 14) / 14);
    const forms = parts.forms;
    const text = forms.find((f) => f.length * px <= width - 16) || forms[forms.length - 1];
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

// The presenter view keeps this much of the screen under a chart that fills it: the strip of
// buttons under the chart and the page's bottom padding.
const PRESENT_RESERVE_PX = 72;

/** Whether the device's main pointer cannot hover (a phone, a tablet): plotly's mode bar
 * would stay over the title, and a drag on a chart must scroll the page, not zoom. */
export function touchScreen(win = globalThis) {
  return !!(win.matchMedia && win.matchMedia("(hover: none)").matches);
}

// The height of the screen left from the top of `el` down (its offset in the page's scroll
// container, whatever the page is scrolled to), less PRESENT_RESERVE_PX and `below` (px the
// page draws under the charts: a lesson's question). A chart that starts too low for the
// room left (less than LOW_ROOM of the screen, or than MIN_ROOM_PX) is one the lecturer
// scrolls to: it gets the screen's height less twice the reserve (its heading above it).
// (LOW_ROOM was 0.45 until a lesson's bar above the model pages' grid of every head left it
// 0.35-0.4 of a 1080 px screen: it scrolled. MIN_ROOM_PX: on a 720 px screen a third is too
// small for a grid of heads with their titles.)
const LOW_ROOM = 0.33;
const MIN_ROOM_PX = 320;

/** The page's scroll container around `el`: its first ancestor that scrolls (null: none). */
export function scrollerOf(el) {
  let p = el.parentElement;
  while (p && !/(auto|scroll)/.test(getComputedStyle(p).overflowY)) p = p.parentElement;
  return p;
}

/** The top of `el` in its page: its offset in the page's scroll container, whatever the
 * page is scrolled to. */
export function pageTop(el) {
  const top = el.getBoundingClientRect().top;
  const p = scrollerOf(el);
  return p ? top + p.scrollTop - p.getBoundingClientRect().top : top;
}

function screenBelow(el, under = 0) {
  const top = pageTop(el);
  const below = Math.floor(window.innerHeight - top - PRESENT_RESERVE_PX - under);
  return below >= Math.max(LOW_ROOM * window.innerHeight, MIN_ROOM_PX)
    ? below
    : Math.floor(window.innerHeight - 2 * PRESENT_RESERVE_PX - under);
}

// The plot area's width plotly will give a matrix figure `width` px wide: its margins and
// its colour bar, `bar` px as measured on the chart's last draw (barWidth) or, before the
// first, about 70 px at 13 px ticks.
function plotWidth(lay, dat, width, bar) {
  const m = lay.margin || {};
  const heat = dat.find((t) => t && t.type === "heatmap");
  const tick = (heat && heat.colorbar && heat.colorbar.tickfont && heat.colorbar.tickfont.size) || 13;
  const beside = heat && heat.showscale !== false && !(heat.colorbar && heat.colorbar.orientation === "h");
  const guess = beside ? 22 + tick * 4 + 12 : 0;
  return width - (m.l != null ? m.l : 80) - (m.r != null ? m.r : 80) - (bar != null ? bar : guess);
}

// What plotly took beside the margins of a drawn chart (its colour bar), in px.
function barWidth(lay, fl) {
  const m = lay.margin || {};
  const width = fl.width - (m.l != null ? m.l : 80) - (m.r != null ? m.r : 80);
  return Math.max(0, width - fl.xaxis._length);
}

/** The layout and data of figure `fig` as drawn in a room `room` ({width, height}: height
 * only for a presenter's matrix) at text scale `scale`. Values written in cells that will
 * clearly be too narrow for them are dropped before the draw (the estimate is generous:
 * draw.js checks again with plotly's own plot width). */
export function fitFigure(fig, scale, room, opts = {}) {
  const measure = opts.measure;
  let lay = scaled(fig.layout || {}, scale);
  let dat = scaledData(fig.data || [], scale);
  // Arabic words read from the right in the charts too (rtl.js)
  if (dir() === "rtl") [lay, dat] = rtlFigure(lay, dat);
  // numbers in hovers, ticks and colour bars as the shown language writes them (0,84 in es)
  if (!lay.separators && separators() !== ".,") lay = Object.assign({}, lay, { separators: separators() });
  if (isGrid(lay) && opts.stacked) {
    lay = fitGrid(lay, { width: room.width, height: 0 }, 1, measure);
  }
  else if (opts.present || opts.fill) [lay, dat] = presenterFill(lay, dat, room);
  const width = Math.min(room.width, typeof lay.width === "number" ? lay.width : room.width);
  // a chart drawn before knows its colour bar's width: the values are kept or dropped as the
  // draw will show them (a second Plotly.react per chart when the guess let them through
  // cost ~35 ms a slider move at N = 10-16, docs/benchmarks.md, issue 46)
  const bar = opts.bar;
  const least = opts.present ? READABLE_PX : 0; // on a slide a value is readable or absent
  if (width) dat = cellText(dat, plotWidth(lay, dat, width, bar) * (bar != null ? 1 : 1.25), measure, least);
  lay = wrapTitle(fitted(lay, width), width, measure);
  const before = lay;
  lay = legendBelow(lay, dat, width, measure);
  if (opts.touch) lay = Object.assign({}, lay, { dragmode: false });
  const [l, d] = quickTicks(lay, dat);
  return [l, d, lay.legend !== before.legend ? before : null];
}

// How long a board waits for its style sheet (board.css) before drawing without it.
const STYLE_WAIT_MS = 3000;
let unstyled = false; // the style sheet never came once: no board waits for it again

/** Resolves once board.css applies to `root` (it makes the board a grid), or after
 * STYLE_WAIT_MS. Streamlit loads a component's style sheet beside its script, and plotly.js
 * may be ready first (the page's early script, a second page of the tab): a board drawn
 * before its grid existed laid every chart out at the board's full width, and plotly kept
 * that size when the grid's columns came (a tablet's first page, 485 px past the screen). */
export function styled(root, wait = STYLE_WAIT_MS) {
  const win = root.ownerDocument.defaultView;
  const grid = () => win.getComputedStyle(root).display === "grid";
  if (grid() || unstyled) return Promise.resolve(grid());
  const t0 = win.performance.now();
  return new Promise((done) => {
    const look = () => {
      if (grid()) done(true);
      else if (win.performance.now() - t0 > wait) {
        unstyled = true;
        done(false);
      } else win.requestAnimationFrame(look);
    };
    win.requestAnimationFrame(look);
  });
}

/** A chart's accessible name in the shown language: "Chart: " and its title (Python sends
 * the title once, as the board entry's `title`, not a second time in a label: issue 45). */
export function chartLabel(f) {
  return f.title ? fill(_("Chart: {title}"), { title: f.title }) : _("chart");
}

/** Draw `args.figures` in `board.grid` (one cell per figure, by key); resolves with the
 * cells that were (re)drawn. */
export function draw(board, args) {
  const Plotly = board.Plotly;
  const scale = Number(args.text_scale) || 1;
  const rescale = scale !== board.textScale;
  board.textScale = scale;
  const present = !!args.present;
  const touch = touchScreen();
  const figs = args.figures || [];
  const cols = args.columns && args.columns.length ? args.columns : [1];
  const boardWidth = board.root.clientWidth;
  board.drawnWidth = boardWidth; // a refit at this width has nothing to fit (board.js)
  board.grid.style.gridTemplateColumns = gridColumns(cols, boardWidth);
  const stacked = boardWidth > 0 && boardWidth < STACK_BELOW;
  board.root.dataset.stacked = stacked ? "1" : "0";
  // a touch screen: no hover label over a heatmap (it covered the tapped row); the chart's
  // caption (keys.js) names the tapped cell instead (board.css)
  board.root.dataset.touch = touch ? "1" : "0";
  // the presenter view: matrices fill the screen below them (all of a board's or none); a
  // board fitted to the screen (`fit_screen`: px kept for what must be seen with it, a
  // slider above) shares the screen's height less those px among its rows of charts
  const matrix = (f) => fillsSlide((f.figure || {}).layout, (f.figure || {}).data);
  const reserve = Number(args.fit_screen) || 0;
  const fill = (present || reserve > 0) && figs.length > 0 && figs.every(matrix);
  const rows = stacked ? 1 : Math.ceil(figs.length / cols.length);
  const measure = board.measure || (board.measure = measurer(document));
  const keep = new Set(figs.map((f) => f.key));
  for (const [k, c] of board.cells) {
    if (!keep.has(k)) {
      board.detach(c);
      Plotly.purge(c.gd);
      c.cell.remove();
      board.cells.delete(k);
    }
  }
  // first every cell in place, then every room read (one layout of the page), then the
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
    c.cell.dataset.heat = ((f.figure || {}).data || []).some((t) => t && t.type === "heatmap")
      ? "1"
      : "0";
    c.cell.dataset.key = f.key;
    // the label is set when it changes: keys.js adds the keyboard's help to it when the chart
    // is drawn, and a chart that is not redrawn (below) keeps that help
    const label = chartLabel(f);
    if (c.label !== label) {
      c.label = label;
      c.drawnFig = null; // redrawn, so that keys.js writes its help on the new label
      c.gd.setAttribute("aria-label", label);
    }
    return c;
  });
  // a slide's charts take the room below their top: the top they were fitted at, which
  // board.js watches (text above the board that settles later moves it: fit again)
  board.drawnTop = fill && !reserve ? Math.round(pageTop(board.root)) : null;
  const under = Number(args.below) || 0; // px the page draws under them (a lesson's question)
  const fitted = Math.floor((window.innerHeight - reserve - under) / rows);
  const rooms = cells.map((c) => ({
    width: c.cell.clientWidth,
    height: !fill ? 0 : reserve ? fitted : screenBelow(c.cell, under),
    below: fill ? under : 0,
  }));
  const jobs = figs.map((f, i) => {
    const c = cells[i];
    // an unchanged chart in an unchanged room (its titles fit it) is not redrawn
    const room = rooms[i];
    const roomKey = `${room.width}x${room.height}:${present}:${touch}:${stacked}`;
    const same = f.rev && f.rev === c.drawnFig && roomKey === c.drawnRoom;
    if (same && !rescale) return Promise.resolve(null);
    c.drawnFig = f.rev || null;
    c.drawnRoom = roomKey;
    const bars = c.bars || (c.bars = new Map()); // colour bar px by text scale
    const [lay, dat, legendBase] = fitFigure(f.figure || {}, scale, room, {
      present,
      fill: reserve > 0,
      stacked,
      touch,
      measure,
      bar: bars.get(scale),
    });
    // no mode bar on a touch screen, a stacked board or a slide: its downloads are the
    // buttons under the chart (tools.js), its zoom a mouse's gesture
    const bar = !(touch || present || stacked);
    const config = bar ? c.config : Object.assign({}, c.config, { displayModeBar: false });
    // other subplots than the chart drawn (a slide's task switch: four heads, then two): a
    // new plot, as Plotly.react kept the old ones' constrained domains (cells not square)
    const axes = Object.keys(lay).filter((k) => /^[xy]axis\d*$/.test(k)).sort().join();
    if (c.axes && c.axes !== axes) {
      Plotly.purge(c.gd);
      c.hooked = false;
    }
    c.axes = axes;
    // a chart of a fixed width stands at its line's start: the right in Arabic (board.css)
    c.cell.toggleAttribute("data-fixed", typeof lay.width === "number");
    return Plotly.react(c.gd, dat, lay, config)
      .then(() => {
        // plotly sizes a chart without a width to its cell when the layout changes; a cell
        // resized under an unchanged layout (the board's grid come late, a refit) kept the
        // old size: measured again (the room was read before the draws, no layout forced;
        // plotly resizes after a 100 ms timer of its own, so such a draw ends that much later)
        const fl0 = c.gd._fullLayout;
        const stale = fl0 && typeof lay.width !== "number" && room.width > 0;
        const off = stale && Math.abs(fl0.width - room.width) > 1;
        return off ? Plotly.Plots.resize(c.gd).catch(() => null) : null;
      })
      .then(() => {
        // after plotly's layout: values in cells too narrow for them are dropped; a legend
        // moved under the plot gets the margin plotly's own rows of it need
        const fl = c.gd._fullLayout;
        if (fl && fl.xaxis) bars.set(scale, barWidth(lay, fl));
        const least = present ? READABLE_PX : 0;
        const fewer = fl && fl.xaxis ? cellText(dat, fl.xaxis._length, measure, least) : dat;
        const redraw = fewer !== dat ? Plotly.react(c.gd, fewer, lay, config) : null;
        return Promise.resolve(redraw).then(() => {
          const legend = c.gd._fullLayout && c.gd._fullLayout.legend;
          const fix = legendBase && legend && legendCorrection(legendBase, lay, legend._height);
          return fix ? Plotly.relayout(c.gd, fix) : null;
        });
      })
      .then(() => {
        if (!c.hooked) {
          hook(board, c);
          c.hooked = true;
        }
        return c;
      });
  });
  return Promise.all(jobs).then((drawn) => drawn.filter(Boolean));
}
