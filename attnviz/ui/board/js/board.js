// attnviz board: the entry module of the Streamlit component (components v2) that draws the
// plotly figures of one page section, keeps its plot divs across reruns and links the charts
// of the page. It renders in the app's own document (no iframe); Streamlit imports this
// module once per tab and calls its default export on every render of every board.
//
// One module per concern, no build step (plain ES modules served from attnviz/ui/board/js/):
//   board.js          this file: one Board per mounted component, the render cycle
//                     (skip a drawn revision, defer out-of-view boards), chart modules
//   plotly_loader.js  plotly.js, loaded once per tab, shared by every board of every page
//   draw.js           Plotly.react in kept plot divs, text scale, fitted axis titles
//   fit.js            each chart fitted to its room: stacked on a phone, titles wrapped,
//                     legends under narrow charts, square cells on the projector
//   rtl.js            a right-to-left language's words in a chart read from the right
//   values.js         the values written in a heatmap's cells: readable in them or absent
//   link.js           linked hover across the boards of a page, click-to-select
//   headswitch.js     a head change drawn in the browser from prefetched figures
//   downloads.js      the mode bar's PNG (projector width) and SVG buttons
//   stepkeys.js       the presenter view's steps by the arrow keys (a hidden board)
//   wide.js           display equations wider than their column: scroll hints, a key stop
//   navlinks.js       in-app links (a lesson's Back / Next) followed within the session
//   figure.js         the one reader of a figure for the chart modules below: heatmap or
//                     bars, nouns and names of rows and columns, values, weights or not
//   table.js          (a chart module) each chart's values as a <table>, the strip under it
//   keys.js           (a chart module) the cells walked by keyboard, announced aria-live
//   tools.js          (a chart module) the downloads as buttons, the mode bar out of Tab
//   cell.js           (a chart module) a clicked attention cell worked out in the browser
//   example_module.js an example per-chart module (below), loaded only when named in
//                     $ATTNVIZ_BOARD_MODULES
//
// Data from Python (attnviz/ui/board/__init__.py, as compact UTF-8 JSON bytes):
// {figures: [{key, figure, link, label, title, role, rev}], columns, group, text_scale,
// present, rev, name, watch, plotly: {src, name, version}, modules, prefetch?, reveal?}, or {preload: {src, name, version, modules}, locale}
// for the hidden first board of every run (it only starts loading plotly.js and the chart
// modules, and sets the shown language: i18n.js; its catalog comes by URL, once per tab),
// or {step_keys: {next, prev}} for the hidden board under the presenter view's step bar (the
// arrow keys press those buttons). Every one carries `dom`: the selectors of Streamlit's
// markup the board needs (a widget's element by its key, the head picker's value, a
// Markdown table's box), defined in attnviz/ui/streamlit_private.py: no module here names
// Streamlit's markup. `reveal`: a token the board has not seen scrolls it into
// view once (a button far below changed what it shows). To Python: the state value
// `selection` ({query, key, head, chart, chart_key, index, title, at}) when a linked
// attention cell is clicked (a chart with `select: false` but with its cells' arithmetic
// gives a `local` selection that only the modules hear).
//
// Per-chart modules (the hook for e.g. data tables and keyboard navigation): a file
// attnviz/ui/board/js/<name>.js listed in CHART_MODULES of attnviz/ui/board/__init__.py (or in the
// environment variable ATTNVIZ_BOARD_MODULES, comma-separated) is imported once
// per tab when present, and its export
//     attach(chartElement, figure, api) -> optional detach()
// is called after each (re)draw of every chart of every board (the detach of the previous
// attach first; a chart not redrawn keeps its attachment; detach also when the chart goes
// away). chartElement: the plot div (plotly's
// graph div, inside the board's cell `.cell[data-key]`); figure: the plotly JSON drawn;
// api: {
//   key, role, title, label, link, head, index,   // the chart (role: "scores", "weights"...)
//   present,                                      // drawn in the presenter view (a slide)
//   cell,                                         // the chart's cell (place extra UI here)
//   Plotly,                                       // the tab's plotly.js
//   hover(i, j, t),  // link as if the cell of row i, column j (data coordinates) of
//                    // trace t (default 0: small multiples have one per head) were hovered
//   clear(),         // clear the linked highlights
//   select(i, j, t), // select as if that cell were clicked (attention charts with select)
//   onLink(fn),   // fn(detail) on every link event of the page; returns its remover
//   onSelect(fn), // fn(value) on every cell selected on the page (a click, Enter), before
//                 // Python hears of it; returns its remover
// }
// Errors of a module are shown under its board, never thrown into the page.
//
// Test and bench hooks: each board's root `.attnviz-board` carries data-board (its key),
// data-state ("drawing" | "drawn" | "deferred"), data-renders, data-switches, data-stacked
// ("1": one chart per row), data-present ("1": the presenter view);
// window.__attnvizBoardErrors lists the errors shown; window.__attnvizCatchUpMs overrides
// CATCH_UP_MS.

import { _, fill, ready, setLocale } from "./i18n.js";
import { chartLabel, draw, pageTop, scrollerOf, styled } from "./draw.js";
import { keep, switchTarget, watch, widgetElement } from "./headswitch.js";
import {
  applyLink,
  emit,
  emitSelect,
  hoverDetail,
  clickValue,
  listen,
  listenSelect,
} from "./link.js";
import { loadPlotly } from "./plotly_loader.js";
import "./downloads.js"; // draw.js's: fetched with the others, not one round trip later
import { stepKeys } from "./stepkeys.js";
import { watchNavLinks } from "./navlinks.js";
import { watchWide } from "./wide.js";

const errors = (window.__attnvizBoardErrors = window.__attnvizBoardErrors || []);

// Out-of-view boards defer their redraws: the charts in the viewport are drawn first and
// alone (plotly shares the page's main thread with Streamlit). A deferred redraw happens
// when the board scrolls into view, when a linked hover needs it, or after CATCH_UP_MS
// without a new render or a key press or click in the page (so a board is never left stale
// for long, and a stale board does not draw while the user's next gesture is under way:
// the rerun a key press on a slider asks for brings it new data anyway, and drawing the
// old one then took the main thread from the charts in view, issue 46).
const CATCH_UP_MS = 1000;
const deferred = new Set(); // the boards waiting to catch up
let inputWatched = false;
function postponeCatchUps() {
  for (const b of deferred) b.armCatchUp();
}
function watchInput(doc) {
  if (inputWatched) return;
  inputWatched = true;
  for (const e of ["keydown", "pointerdown"]) {
    doc.addEventListener(e, postponeCatchUps, { capture: true, passive: true });
  }
}
// How long a revealed board keeps itself centred after the last scroll or change of layout
// while the rest of the run arrives (see reveal(); the user's own scrolling, clicking or
// typing ends it at once). A long run on a busy server takes seconds: only scrolls and
// layouts the user did not make are undone meanwhile.
const REVEAL_MS = 10000;
// A board whose width changed (a phone turned, a window resized) fits its charts again
// once the width has been still this long.
const REFIT_MS = 150;

const chartModules = new Map(); // file name -> Promise of the module (once per tab)
function chartModule(name) {
  if (!chartModules.has(name)) chartModules.set(name, import(new URL(name, import.meta.url).href));
  return chartModules.get(name);
}

// The shown language (ui.lang.board_locale): the catalog of every chart module, and the
// page's <html lang> (screen readers pronounce by it); data-dir says a right-to-left
// language (its prose runs right to left by board.css's html[data-dir="rtl"] rules, the
// charts not).
function applyLocale(doc, locale) {
  setLocale(locale);
  const root = doc.documentElement;
  if (root.lang !== locale.lang) root.lang = locale.lang;
  if (root.dataset.dir !== locale.dir) root.dataset.dir = locale.dir;
}

class Board {
  constructor(host) {
    this.host = host;
    this.root = document.createElement("div");
    this.root.className = "attnviz-board";
    this.grid = this.root; // the grid of cells
    host.appendChild(this.root);
    this.cells = new Map(); // figure key -> {cell, gd, spec, config, hooked, index, detach}
    this.group = "";
    this.textScale = 1;
    this.Plotly = null;
    this.renders = 0;
    this.switches = 0;
    this.drawnRev = null;
    this.pending = null;
    this.catchUp = 0;
    this.lastArgs = null;
    this.watched = null;
    this.inView = true;
    this.revealed = null;
    this.selectFn = null;
    this.unlisten = listen((d) => this.onLink(d));
    this.observer = new IntersectionObserver(
      (entries) => {
        this.inView = entries[entries.length - 1].isIntersecting;
        if (this.inView && this.pending) this.flush();
      },
      { rootMargin: "120px" },
    );
    this.observer.observe(this.root);
    this.present = false;
    this.drawnArgs = null;
    this.refitTimer = 0;
    this.width = 0;
    this.stopKeys = null;
    this.resizer = new ResizeObserver(() => {
      const w = this.root.clientWidth;
      if (!w || w === this.width) return;
      this.width = w;
      clearTimeout(this.refitTimer);
      this.refitTimer = setTimeout(() => this.refit(), REFIT_MS);
    });
    this.resizer.observe(this.root);
    this.drawnTop = null;
    this.mover = null;
  }

  // A slide's charts fill the screen below the board's top, the top draw.js measured
  // (drawnTop). Text above the board that settles after the draw (the rest of the run, a
  // font) moves that top without changing the board's width: fit again then, or the slide
  // scrolls below the screen (measured under load: 34 and 46 px). Watched while a draw
  // used it: the page's content, whose size changes when something above the board does.
  watchTop() {
    if (this.drawnTop == null) {
      if (this.mover) this.mover.disconnect();
      this.mover = null;
      return;
    }
    if (this.mover) return;
    const scroller = scrollerOf(this.root);
    if (!scroller) return;
    this.mover = new ResizeObserver(() => {
      if (!this.topMoved()) return;
      clearTimeout(this.refitTimer);
      this.refitTimer = setTimeout(() => this.refit(), REFIT_MS);
    });
    for (const child of scroller.children) this.mover.observe(child);
  }

  topMoved() {
    return this.drawnTop != null && Math.round(pageTop(this.root)) !== this.drawnTop;
  }

  // the charts drawn again in the room they have now (draw.js redraws only those whose room
  // changed); not a render: nothing new from Python
  refit() {
    if (this.root.dataset.state === "drawing") {
      // a draw is under way (it may have measured the old width): fit after it
      clearTimeout(this.refitTimer);
      this.refitTimer = setTimeout(() => this.refit(), REFIT_MS);
      return;
    }
    if (!this.Plotly || !this.drawnArgs || this.root.dataset.state !== "drawn") return;
    // the width the last draw fitted (the resize observer's first call, a width that came
    // back): nothing to fit, and a draw would clear what the pointer is showing
    if (this.root.clientWidth === this.drawnWidth && !this.topMoved()) return;
    const args = this.drawnArgs;
    draw(this, args)
      .then((drawn) => {
        this.watchTop();
        return this.attachModules(drawn, args.modules || []);
      })
      .catch((e) => this.fail(e));
  }

  set state(v) {
    this.root.dataset.state = v;
  }

  select(value) {
    emitSelect(this.group, value); // the page's modules first (cell.js draws at once)
    if (this.selectFn && !value.local) this.selectFn(value); // a local one: no rerun
  }

  onLink(d) {
    if (!d || d.group !== this.group || !this.Plotly) return;
    try {
      // A board whose redraw was deferred (out of view) draws first, then shows the link.
      if (this.pending && !d.clear) this.flush().then(() => applyLink(this.Plotly, this.cells, d));
      else applyLink(this.Plotly, this.cells, d);
    } catch (e) {
      /* a board being torn down */
    }
  }

  fail(e) {
    const msg = fill(_("The charts could not be drawn: {error}"), { error: e && e.message ? e.message : e });
    errors.push(msg);
    const el = document.createElement("p");
    el.className = "err";
    el.textContent = msg;
    this.root.appendChild(el);
  }

  // ---------------------------------------------------------------- from Streamlit
  update(args) {
    watchWide(document, args.dom); // wide equations of every page, once per tab
    watchNavLinks(document, args.dom); // a lesson's links: within the session (navlinks.js), once per tab
    if (args.locale) applyLocale(document, args.locale); // the preload board's, first of all
    if (args.preload) {
      // the first element of every run (ui.board.preload_plotly): starts loading plotly.js
      // while the rest of the run arrives; a failure is shown by the boards that need it
      loadPlotly(args.preload).catch(() => {});
      for (const n of args.preload.modules || []) chartModule(n).catch(() => {}); // theirs too
      this.root.dataset.hidden = "1";
      this.state = "drawn";
      return;
    }
    if (args.step_keys) {
      // the hidden board under the presenter view's step bar: the arrow keys step too
      if (this.stopKeys) this.stopKeys();
      this.stopKeys = stepKeys(document, args.step_keys, args.dom);
      this.root.dataset.hidden = "1";
      this.state = "drawn";
      return;
    }
    if (args.prefetch) {
      // the hidden board: keeps the figures for the others, draws nothing, takes no height
      keep(args.prefetch);
      this.root.dataset.hidden = "1";
      this.state = "drawn";
      return;
    }
    this.root.dataset.board = args.name || "";
    this.lastArgs = args;
    this.watch(args.watch, args.dom);
    this.handle(args);
    this.reveal(args.reveal);
  }

  reveal(token) {
    if (!token || token === this.revealed) return;
    this.revealed = token;
    const root = this.root;
    const center = () => root.isConnected && root.scrollIntoView({ block: "center" });
    center(); // at once: a smooth scroll is cut short by the rest of the run arriving
    // The run is not over, and the board is not drawn yet: this centres an empty board, whose
    // charts then grow it downwards (measured: it ended 248 px lower than centred), and the
    // elements around it are swapped, the page shorter for a moment (the browser clamps the
    // scroll). Centre it again on each scroll that follows and on each change of the board's
    // size or of the page's content (a change of layout moves the board without a scroll
    // event: it once ended 112.86 px above the window), until the user scrolls, clicks or
    // types, or for REVEAL_MS after the last of them.
    const scroller = scrollerOf(root);
    if (!scroller) return;
    const doc = root.ownerDocument;
    const user = ["wheel", "touchstart", "keydown", "mousedown"];
    let frame = 0;
    let timer = 0;
    const resized = new ResizeObserver(() => again());
    const stop = () => {
      scroller.removeEventListener("scroll", again);
      user.forEach((e) => doc.removeEventListener(e, stop, true));
      resized.disconnect();
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
    function again() {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(center);
      clearTimeout(timer);
      timer = setTimeout(stop, REVEAL_MS);
    }
    scroller.addEventListener("scroll", again, { passive: true });
    user.forEach((e) => doc.addEventListener(e, stop, true));
    resized.observe(root);
    for (const child of scroller.children) resized.observe(child); // the page's content
    timer = setTimeout(stop, REVEAL_MS);
  }

  watch(key, dom) {
    const el = widgetElement(key, dom);
    if (this.watched && this.watched.el === el) return;
    if (this.watched) this.watched.stop();
    this.watched = el ? watch(key, this, dom) : null;
  }

  onWidget(el) {
    const target = switchTarget(this.lastArgs, el);
    if (!target || target.rev === this.drawnRev) return;
    if (this.pending && this.pending.rev === target.rev) return;
    this.switches += 1;
    this.root.dataset.switches = String(this.switches);
    this.handle(Object.assign({}, this.lastArgs, target));
  }

  handle(args) {
    if (args.rev && args.rev === this.drawnRev) {
      // the same data again, or the figures a head switch already drew: nothing to redraw
      if (this.pending) {
        this.pending = null;
        this.cancelCatchUp();
        this.state = "drawn";
      }
      return;
    }
    if (this.renders > 0 && !this.inView) this.defer(args);
    else {
      this.pending = null;
      this.cancelCatchUp();
      this.render(args);
    }
  }

  defer(args) {
    this.pending = args;
    this.state = "deferred";
    watchInput(document);
    deferred.add(this);
    this.armCatchUp();
  }

  // the catch-up draw CATCH_UP_MS from now (again: a key press or click postpones it)
  armCatchUp() {
    clearTimeout(this.catchUp);
    const wait = Number(window.__attnvizCatchUpMs) || CATCH_UP_MS;
    this.catchUp = setTimeout(() => this.flush(), wait);
  }

  cancelCatchUp() {
    clearTimeout(this.catchUp);
    deferred.delete(this);
  }

  flush() {
    this.cancelCatchUp();
    if (!this.pending) return Promise.resolve();
    const args = this.pending;
    this.pending = null;
    return this.render(args);
  }

  render(args) {
    this.drawnRev = args.rev || null;
    this.drawnArgs = args;
    this.group = args.group || "";
    this.present = !!args.present;
    this.root.dataset.present = this.present ? "1" : "0";
    this.state = "drawing";
    // the shown language's catalog too (fetched once per tab, i18n.js): the charts' tables
    // and announcements are written in it
    return Promise.all([loadPlotly(args.plotly), ready(), styled(this.root)])
      .then(([P]) => {
        this.Plotly = P;
        return draw(this, args);
      })
      .then((drawn) => this.attachModules(drawn, args.modules || []))
      .catch((e) => this.fail(e))
      .finally(() => {
        this.root.dataset.renders = String(++this.renders);
        this.watchTop();
        if (!this.pending) this.state = "drawn";
      });
  }

  // ---------------------------------------------------------------- chart modules
  detach(c) {
    if (c.detach) {
      const d = c.detach;
      c.detach = null;
      try {
        d();
      } catch (e) {
        this.fail(e);
      }
    }
  }

  api(c) {
    const board = this;
    const s = c.spec;
    return {
      key: s.key,
      role: s.role || null,
      title: s.title || null,
      label: chartLabel(s),
      link: s.link || null,
      head: s.link && s.link.head != null ? s.link.head : null,
      index: c.index,
      present: board.present,
      cell: c.cell,
      Plotly: board.Plotly,
      hover(i, j, t = 0) {
        const d = hoverDetail(c, j, i, t);
        if (d) emit(board.group, d);
      },
      clear() {
        emit(board.group, { clear: true });
      },
      select(i, j, t = 0) {
        const v = clickValue(c, j, i, t);
        if (v) board.select(v);
      },
      onLink(fn) {
        return listen((d) => d.group === board.group && fn(d));
      },
      onSelect(fn) {
        return listenSelect((d) => {
          if (d.group !== board.group) return;
          try {
            fn(d.value);
          } catch (e) {
            board.fail(e);
          }
        });
      },
    };
  }

  attachModules(drawn, names) {
    if (!names.length || !drawn.length) return null;
    return Promise.all(names.map((n) => chartModule(n).catch((e) => this.fail(e)))).then((mods) => {
      for (const c of drawn) {
        this.detach(c);
        const detaches = [];
        for (const m of mods) {
          if (!m || typeof m.attach !== "function") continue;
          try {
            const d = m.attach(c.gd, c.spec.figure, this.api(c));
            if (typeof d === "function") detaches.push(d);
          } catch (e) {
            this.fail(e);
          }
        }
        c.detach = detaches.length ? () => detaches.forEach((d) => d()) : null;
      }
    });
  }

  destroy() {
    this.cancelCatchUp();
    clearTimeout(this.refitTimer);
    this.observer.disconnect();
    this.resizer.disconnect();
    if (this.mover) this.mover.disconnect();
    if (this.stopKeys) this.stopKeys();
    this.unlisten();
    if (this.watched) this.watched.stop();
    for (const c of this.cells.values()) {
      this.detach(c);
      if (this.Plotly) this.Plotly.purge(c.gd);
    }
    this.cells.clear();
    this.root.remove();
  }
}

const boards = new WeakMap(); // the component's element -> its Board
const parsed = new WeakMap(); // the data's bytes -> their JSON (a render again: no parse)
const utf8 = new TextDecoder();

// The board's data comes as bytes, compact UTF-8 JSON (ui.board.encode: Streamlit's own
// JSON of a dict escapes every non-ASCII letter to six bytes), or as JSON already parsed.
function readData(data) {
  if (!data || !ArrayBuffer.isView(data)) return data || {};
  if (!parsed.has(data)) parsed.set(data, JSON.parse(utf8.decode(data)));
  return parsed.get(data);
}

export default function (component) {
  const { parentElement, setStateValue } = component;
  let board = boards.get(parentElement);
  if (!board) {
    board = new Board(parentElement);
    boards.set(parentElement, board);
  }
  board.selectFn = (value) => setStateValue("selection", value);
  try {
    board.update(readData(component.data));
  } catch (e) {
    board.fail(e);
  }
  // Streamlit calls this before the next render of the same element too: tear down only
  // when the element has left the page (a page switch, a section no longer drawn).
  return () =>
    setTimeout(() => {
      if (!parentElement.isConnected && boards.get(parentElement) === board) {
        board.destroy();
        boards.delete(parentElement);
      }
    }, 0);
}
