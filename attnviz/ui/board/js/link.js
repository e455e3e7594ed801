// Linking: hovering a cell of one chart highlights the linked cells of every board of the
// page (same `group`); a click on an attention cell selects its query (sent to Python).
//
// All boards render in the app's document (components v2, no iframe) and import this one
// module, so they share the bus below: no globals.

import { _, fill } from "./i18n.js";

const bus = new EventTarget();

/** Send a link event ({query, key, head, row} or {clear: true}) to every board of `group`. */
export function emit(group, detail) {
  bus.dispatchEvent(new CustomEvent("link", { detail: Object.assign({ group }, detail) }));
}

/** Call `fn(detail)` for every link event; returns the function that stops it. */
export function listen(fn) {
  const on = (ev) => fn(ev.detail);
  bus.addEventListener("link", on);
  return () => bus.removeEventListener("link", on);
}

/** Tell every board of `group` that an attention cell was selected (a click, or Enter in
 * keys.js): `value` is the click value sent to Python (see clickValue). */
export function emitSelect(group, value) {
  bus.dispatchEvent(new CustomEvent("select", { detail: { group, value } }));
}

/** Call `fn({group, value})` for every selection; returns the function that stops it. */
export function listenSelect(fn) {
  const on = (ev) => fn(ev.detail);
  bus.addEventListener("select", on);
  return () => bus.removeEventListener("select", on);
}

// ------------------------------------------------------------------ highlights
function step(gd, axis, trace) {
  const tr = gd._fullData && gd._fullData[trace || 0];
  if (!tr || tr.type !== "heatmap") return 1;
  return (axis === "x" ? tr.dx : tr.dy) || 1;
}
function span(gd, axis, t, trace) {
  const b = step(gd, axis, trace);
  const c = Math.floor(t / b) * b;
  return [c - b / 2, c + b / 2];
}
// The subplot axes of a trace: "x2" -> layout.xaxis2.
function axes(gd, trace) {
  const fl = gd._fullLayout;
  const t = gd._fullData && gd._fullData[trace || 0];
  const name = (id, d) => (id && id.length > 1 ? d + "axis" + id.slice(1) : d + "axis");
  return fl ? [fl[name(t && t.xaxis, "x")], fl[name(t && t.yaxis, "y")]] : [null, null];
}
function box(gd, xs, ys, trace) {
  const [xa, ya] = axes(gd, trace);
  if (!xa || !ya) return null;
  const clamp = (v, len) => Math.max(0, Math.min(len, v));
  const px = (ax, s) => {
    if (!s) return [0, ax._length];
    const a = clamp(ax.l2p(s[0]), ax._length);
    const b = clamp(ax.l2p(s[1]), ax._length);
    return [Math.min(a, b), Math.max(a, b)];
  };
  const [x0, x1] = px(xa, xs);
  const [y0, y1] = px(ya, ys);
  if (x1 - x0 < 1 || y1 - y0 < 1) return null;
  return { left: xa._offset + x0, top: ya._offset + y0, width: x1 - x0, height: y1 - y0 };
}
export function clearHighlights(c) {
  c.cell.querySelectorAll(".hl").forEach((el) => el.remove());
}
function drawBox(c, b, cls) {
  if (!b) return;
  const el = document.createElement("div");
  el.className = "hl" + (cls ? " " + cls : "");
  el.setAttribute("aria-hidden", "true");
  // from the chart's own corner: a chart of a fixed width stands at the right in Arabic
  el.style.left = c.gd.offsetLeft + b.left + "px";
  el.style.top = c.gd.offsetTop + b.top + "px";
  el.style.width = b.width + "px";
  el.style.height = b.height + "px";
  c.cell.appendChild(el);
}

/** Row q (a query) of the weights heatmap of `gd`, for the bar chart. */
export function weightsRow(gd, orient, q) {
  const cd = gd.calcdata && gd.calcdata[0] && gd.calcdata[0][0];
  if (!cd || !cd.z || step(gd, "x") !== 1 || step(gd, "y") !== 1) return null;
  const z = cd.z;
  const row = orient === "rows" ? Array.from(z[q] || []) : z.map((r) => r[q]);
  return row.map((v) => (Number.isFinite(v) ? v : 0));
}

export function restoreBars(Plotly, c) {
  if (!c.barsOrig) return;
  const o = c.barsOrig;
  c.barsOrig = null;
  Plotly.restyle(c.gd, { y: [o.y], visible: o.visible }, o.traces);
  Plotly.relayout(c.gd, { "title.text": o.title });
}

/** Show link event `d` on the charts (`cells`) of one board. */
export function applyLink(Plotly, cells, d) {
  for (const c of cells.values()) {
    const link = c.spec && c.spec.link;
    if (!link || !c.gd._fullLayout) continue;
    clearHighlights(c);
    if (d.clear) {
      if (link.kind === "bars") restoreBars(Plotly, c);
      continue;
    }
    if (link.head != null && d.head != null && link.head !== d.head) continue;
    const gd = c.gd;
    const q = d.query;
    const k = d.key;
    if (link.kind === "attn") {
      // one heatmap (trace 0), or one per head (small multiples: the same cell is
      // outlined in every head, to compare them)
      const traces = link.heads ? link.heads.map((h, i) => i) : [0];
      const rowsQ = link.orient !== "columns";
      const qa = rowsQ ? "y" : "x";
      const ka = rowsQ ? "x" : "y";
      for (const t of traces) {
        const qs = q != null ? span(gd, qa, q, t) : null;
        const ks = k != null ? span(gd, ka, k, t) : null;
        if (q != null && k != null) {
          drawBox(c, box(gd, rowsQ ? null : qs, rowsQ ? qs : null, t), "soft");
          drawBox(c, box(gd, rowsQ ? ks : qs, rowsQ ? qs : ks, t));
        } else if (q != null) {
          drawBox(c, box(gd, rowsQ ? null : qs, rowsQ ? qs : null, t));
        } else if (k != null) {
          drawBox(c, box(gd, rowsQ ? ks : null, rowsQ ? null : ks, t));
        }
      }
    } else if (link.kind === "tokens") {
      const t = link.follow === "key" ? k : q;
      if (t == null) continue;
      const s = span(gd, link.axis, t);
      drawBox(c, box(gd, link.axis === "x" ? s : null, link.axis === "y" ? s : null));
    } else if (link.kind === "bars") {
      if (d.row && q != null && gd.calcdata && d.row.length === gd.calcdata[0].length) {
        if (!c.barsOrig) {
          c.barsOrig = {
            y: gd.data[0].y,
            title: (gd.layout.title && gd.layout.title.text) || "",
            visible: gd.data.map((t) => (t.visible === undefined ? true : t.visible)),
            traces: gd.data.map((_, i) => i),
          };
        }
        const vis = gd.data.map((_, i) => i === 0);
        Plotly.restyle(gd, { y: [d.row], visible: vis }, c.barsOrig.traces.map((i) => i));
        Plotly.relayout(gd, {
          "title.text": fill(
            _("Weights of query {q} over the keys (hovered row; click to select)"),
            { q },
          ),
        });
      }
      if (k != null) drawBox(c, box(gd, [k - 0.5, k + 0.5], null));
    }
  }
}

function headOf(link, pt) {
  if (link.heads) return link.heads[pt.curveNumber] != null ? link.heads[pt.curveNumber] : null;
  return link.head != null ? link.head : null;
}

/** The link event of hovering cell (x, y) (data coordinates) of chart `c`. */
export function hoverDetail(c, x, y, curve) {
  const link = c.spec.link;
  if (!link) return null;
  const head = headOf(link, { curveNumber: curve || 0 });
  if (link.kind === "attn") {
    const rowsQ = link.orient !== "columns";
    const q = rowsQ ? y : x;
    const k = rowsQ ? x : y;
    return { query: q, key: k, head, row: link.weights ? weightsRow(c.gd, link.orient, q) : null };
  }
  if (link.kind === "tokens") {
    const t = link.axis === "x" ? x : y;
    return link.follow === "key" ? { key: t, head } : { query: t, head };
  }
  if (link.kind === "bars") return { key: x, head };
  return null;
}

/** The selection a click on cell (x, y) of attention chart `c` sends to Python, or null.
 * A chart that does not select (`select: false`) but carries the arithmetic of its cells
 * (cell.js) gives a `local` selection: the page's modules hear it, Python does not. */
export function clickValue(c, x, y, curve) {
  const link = c.spec.link;
  if (!link || link.kind !== "attn" || !(link.select || link.arithmetic)) return null;
  const rowsQ = link.orient !== "columns";
  return {
    query: rowsQ ? y : x,
    key: rowsQ ? x : y,
    head: headOf(link, { curveNumber: curve || 0 }),
    chart: c.spec.role || null,
    chart_key: c.spec.key,
    index: c.index,
    title: c.spec.title || null,
    at: Date.now(),
    local: !link.select,
  };
}

/** Hover and click handlers of chart `c` of `board` (once per plot div). */
export function hook(board, c) {
  const gd = c.gd;
  gd.on("plotly_hover", (ev) => {
    const pt = ev && ev.points && ev.points[0];
    const link = c.spec.link;
    if (!link || !pt) return;
    if (link.kind !== "bars" && pt.data.type !== "heatmap") return;
    const d = hoverDetail(c, pt.x, pt.y, pt.curveNumber);
    if (d) emit(board.group, d);
  });
  gd.on("plotly_unhover", () => emit(board.group, { clear: true }));
  gd.on("plotly_click", (ev) => {
    const pt = ev && ev.points && ev.points[0];
    if (!pt || pt.data.type !== "heatmap") return;
    const v = clickValue(c, pt.x, pt.y, pt.curveNumber);
    if (v) board.select(v);
  });
}
