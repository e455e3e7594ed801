// attnviz board: draws the plotly figures of one page section with Plotly.react, keeping
// its plot divs across Streamlit reruns, and links the charts of the page (hover, click).
// Plain JS speaking the Streamlit component protocol (postMessage), no build step.
(() => {
  "use strict";
  // Errors of this board, read by the browser tests (the parent page does not see them).
  window.__boardErrors = [];
  window.addEventListener("error", (e) => window.__boardErrors.push(String(e.message)));
  window.addEventListener("unhandledrejection", (e) =>
    window.__boardErrors.push(String(e.reason && e.reason.message ? e.reason.message : e.reason)),
  );
  const send = (type, data) =>
    window.parent.postMessage(Object.assign({ isStreamlitMessage: true, type }, data || {}), "*");
  const root = document.getElementById("board");
  const cells = new Map(); // figure key -> {cell, gd, spec, config, hooked}
  let group = "";
  let lastHeight = -1;
  let textScale = 1;
  // Out-of-view boards defer their redraws: the charts in the viewport are drawn first and
  // alone (plotly shares the page's main thread with Streamlit). A deferred redraw happens
  // when the board scrolls into view, when a linked hover needs it, or after CATCH_UP_MS
  // without a new render message (so a board is never left stale for long).
  const CATCH_UP_MS = 1000;
  let inView = true;
  let pending = null;
  let catchUp = 0;

  // ------------------------------------------------------------------ linking bus
  // Every board of the page is a same-origin iframe: they share one EventTarget kept on the
  // parent window, so hovering a chart in one board highlights the linked cells in all.
  let bus = null;
  try {
    const p = window.parent;
    bus = p.__attnvizBoardBus || (p.__attnvizBoardBus = new p.EventTarget());
  } catch (e) {
    bus = null; // not same-origin: links stay inside this board
  }
  const onBus = (ev) => {
    try {
      // A board whose redraw was deferred (out of view) draws first, then shows the link.
      if (pending && !(ev.detail && ev.detail.clear)) flush().then(() => applyLink(ev.detail));
      else applyLink(ev.detail);
    } catch (e) {
      /* a board being torn down */
    }
  };
  if (bus) {
    bus.addEventListener("link", onBus);
    const off = () => bus.removeEventListener("link", onBus);
    window.addEventListener("pagehide", off);
    window.addEventListener("unload", off);
  }
  function emit(detail) {
    detail.group = group;
    if (bus) bus.dispatchEvent(new window.parent.CustomEvent("link", { detail }));
    else applyLink(detail);
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
  function clearHighlights(c) {
    c.cell.querySelectorAll(".hl").forEach((el) => el.remove());
  }
  function drawBox(c, b, cls) {
    if (!b) return;
    const el = document.createElement("div");
    el.className = "hl" + (cls ? " " + cls : "");
    el.setAttribute("aria-hidden", "true");
    el.style.left = b.left + "px";
    el.style.top = b.top + "px";
    el.style.width = b.width + "px";
    el.style.height = b.height + "px";
    c.cell.appendChild(el);
  }

  function weightsRow(gd, orient, q) {
    const cd = gd.calcdata && gd.calcdata[0] && gd.calcdata[0][0];
    if (!cd || !cd.z || step(gd, "x") !== 1 || step(gd, "y") !== 1) return null;
    const z = cd.z;
    const row = orient === "rows" ? Array.from(z[q] || []) : z.map((r) => r[q]);
    return row.map((v) => (Number.isFinite(v) ? v : 0));
  }

  function restoreBars(c) {
    if (!c.barsOrig) return;
    const o = c.barsOrig;
    c.barsOrig = null;
    Plotly.restyle(c.gd, { y: [o.y], visible: o.visible }, o.traces);
    Plotly.relayout(c.gd, { "title.text": o.title });
  }

  function applyLink(d) {
    if (!d || d.group !== group) return;
    for (const c of cells.values()) {
      const link = c.spec && c.spec.link;
      if (!link || !c.gd._fullLayout) continue;
      clearHighlights(c);
      if (d.clear) {
        if (link.kind === "bars") restoreBars(c);
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
            "title.text": `Weights of query ${q} over the keys (hovered row; click to select)`,
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

  function hook(c) {
    const gd = c.gd;
    gd.on("plotly_hover", (ev) => {
      const link = c.spec.link;
      const pt = ev && ev.points && ev.points[0];
      if (!link || !pt) return;
      const head = headOf(link, pt);
      if (link.kind === "attn") {
        if (pt.data.type !== "heatmap") return;
        const rowsQ = link.orient !== "columns";
        const q = rowsQ ? pt.y : pt.x;
        const k = rowsQ ? pt.x : pt.y;
        const row = link.weights ? weightsRow(gd, link.orient, q) : null;
        emit({ query: q, key: k, head, row });
      } else if (link.kind === "tokens") {
        if (pt.data.type !== "heatmap") return;
        const t = link.axis === "x" ? pt.x : pt.y;
        emit(link.follow === "key" ? { key: t, head } : { query: t, head });
      } else if (link.kind === "bars") {
        emit({ key: pt.x, head });
      }
    });
    gd.on("plotly_unhover", () => emit({ clear: true }));
    gd.on("plotly_click", (ev) => {
      const link = c.spec.link;
      const pt = ev && ev.points && ev.points[0];
      if (!link || !link.select || !pt || pt.data.type !== "heatmap") return;
      const rowsQ = link.orient !== "columns";
      const q = rowsQ ? pt.y : pt.x;
      const k = rowsQ ? pt.x : pt.y;
      send("streamlit:setComponentValue", {
        value: { query: q, key: k, head: headOf(link, pt), at: Date.now() },
        dataType: "json",
      });
    });
    c.hooked = true;
  }

  // ------------------------------------------------------------------ drawing
  // PNG downloads fill a projector's width (1920 px: a 1080p projector, 1.5x a 1280x720
  // one) whatever the chart's width on screen, and are never below 2x.
  const PROJECTOR_WIDTH = 1920;
  function projectorScale(gd) {
    const w = (gd._fullLayout && gd._fullLayout.width) || gd.offsetWidth || PROJECTOR_WIDTH;
    return Math.max(2, PROJECTOR_WIDTH / w);
  }
  function makeConfig(f) {
    const name = f.key || "chart";
    return {
      displaylogo: false,
      responsive: true,
      modeBarButtonsToRemove: ["lasso2d", "select2d", "toImage"],
      modeBarButtonsToAdd: [
        {
          name: "downloadPng",
          title: `Download plot as a PNG (projector: ${PROJECTOR_WIDTH} px wide)`,
          icon: Plotly.Icons.camera,
          click: (gd) =>
            Plotly.downloadImage(gd, { format: "png", scale: projectorScale(gd), filename: name }),
        },
        {
          name: "downloadSvg",
          title: "Download plot as an SVG",
          icon: Plotly.Icons.disk,
          click: (gd) => Plotly.downloadImage(gd, { format: "svg", filename: name }),
        },
      ],
    };
  }
  // Every font size of a figure times the text scale (the presenter view): layout.font
  // and the explicit ones (titles, ticks, colour bars, cell text, annotations).
  // Axis titles (long, vertical on the y axis) grow half as much, so that they stay
  // within the plot's height.
  function scaleFonts(obj, key, factor = textScale) {
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
  function scaled(layout) {
    if (textScale === 1) return layout;
    const out = scaleFonts(layout, "");
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
  function fitted(layout, width) {
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
  function scaledData(data) {
    return textScale === 1 ? data : data.map((t) => scaleFonts(t, ""));
  }
  let hidden = false; // the prefetch board
  function setHeight() {
    const h = hidden ? 0 : Math.ceil(root.getBoundingClientRect().height) + 4;
    if (h !== lastHeight) {
      lastHeight = h;
      send("streamlit:setFrameHeight", { height: h });
    }
  }

  let renders = 0;
  let drawnRev = null; // the revision (a digest of the arguments) last drawn
  function render(args) {
    drawnRev = args.rev || null;
    document.body.dataset.state = "drawing"; // read by the browser tests and the bench
    group = args.group || "";
    const scale = Number(args.text_scale) || 1;
    const rescale = scale !== textScale;
    textScale = scale;
    const figs = args.figures || [];
    const cols = args.columns && args.columns.length ? args.columns : [1];
    root.style.gridTemplateColumns = cols.map((w) => `minmax(0, ${w}fr)`).join(" ");
    const keep = new Set(figs.map((f) => f.key));
    for (const [k, c] of cells) {
      if (!keep.has(k)) {
        Plotly.purge(c.gd);
        c.cell.remove();
        cells.delete(k);
      }
    }
    const jobs = figs.map((f, i) => {
      let c = cells.get(f.key);
      if (!c) {
        const cell = document.createElement("div");
        cell.className = "cell";
        const gd = document.createElement("div");
        gd.className = "plot";
        gd.setAttribute("role", "img");
        cell.appendChild(gd);
        c = { cell, gd, spec: f, config: makeConfig(f), hooked: false };
        cells.set(f.key, c);
      }
      if (root.children[i] !== c.cell) root.insertBefore(c.cell, root.children[i] || null);
      if (rescale) c.config = makeConfig(f);
      restoreBars(c); // a hovered row's preview, in a chart that may not be redrawn
      clearHighlights(c);
      c.spec = f;
      c.cell.dataset.key = f.key;
      c.gd.setAttribute("aria-label", f.label || f.key);
      // an unchanged chart at an unchanged width (its axis titles fit it) is not redrawn
      const width = c.cell.clientWidth;
      const same = f.rev && f.rev === c.drawnFig && width === c.drawnWidth;
      if (same && !rescale) return Promise.resolve();
      c.drawnFig = f.rev || null;
      c.drawnWidth = width;
      const fig = f.figure || {};
      const lay = fitted(scaled(fig.layout || {}), width);
      return Plotly.react(c.gd, scaledData(fig.data || []), lay, c.config).then(() => {
        if (!c.hooked) hook(c);
      });
    });
    return Promise.all(jobs)
      .then(setHeight)
      .catch((e) => showError(e))
      .finally(() => {
        document.body.dataset.renders = String(++renders);
        if (!pending) document.body.dataset.state = "drawn";
      });
  }

  function flush() {
    clearTimeout(catchUp);
    if (!pending) return Promise.resolve();
    const args = pending;
    pending = null;
    return render(args);
  }
  function defer(args) {
    pending = args;
    document.body.dataset.state = "deferred";
    clearTimeout(catchUp);
    let wait = CATCH_UP_MS;
    try {
      wait = Number(window.parent.__attnvizCatchUpMs) || CATCH_UP_MS; // the browser tests' hook
    } catch (e) {
      /* not same-origin */
    }
    catchUp = setTimeout(flush, wait);
  }
  new IntersectionObserver(
    (entries) => {
      inView = entries[entries.length - 1].isIntersecting;
      if (inView && pending) flush();
    },
    { rootMargin: "120px" },
  ).observe(document.documentElement);

  function showError(e) {
    const el = document.createElement("p");
    el.className = "err";
    el.textContent = "The charts could not be drawn: " + (e && e.message ? e.message : e);
    root.appendChild(el);
    setHeight();
  }

  // ------------------------------------------------------------------ head switch
  // A hidden board (`prefetch` in its arguments, sent after the visible charts) brings the
  // other heads' figures of the boards drawn with `watch`: they are kept on the parent page,
  // per board, with the revision they belong to. When the watched widget (the page's head
  // picker) shows another value, such a board draws that head's figures at once, before
  // the rerun the widget starts: that rerun then brings the same revision, which is
  // skipped. The widget, a selectbox, is read from the parent page: it shows its value in its
  // input once its list is closed. If the page's markup differs, or nothing was prefetched,
  // the rerun redraws as before.
  let lastArgs = null;
  let switches = 0; // head switches drawn from the prefetched figures
  let watched = null; // the widget's element on the parent page
  let watcher = null;
  function store() {
    try {
      const p = window.parent;
      return p.__attnvizPrefetch || (p.__attnvizPrefetch = {});
    } catch (e) {
      return null; // not same-origin
    }
  }
  function widgetValue(el) {
    const box = el.querySelector(".react-aria-ComboBox");
    const input = el.querySelector('input[role="combobox"]');
    if (!input || (box && box.hasAttribute("data-open"))) return null;
    return input.value;
  }
  function onWidget() {
    const a = lastArgs;
    const s = store();
    const entry = a && s && watched ? s[a.name] : null;
    if (!entry || entry.current_rev !== a.rev) return; // nothing for what is shown now
    const v = widgetValue(watched);
    const target = v === String(entry.current) ? { figures: a.figures, rev: a.rev } : entry.values[v];
    if (!target || target.rev === drawnRev || (pending && pending.rev === target.rev)) return;
    switches += 1;
    document.body.dataset.switches = String(switches); // read by the browser tests
    handle(Object.assign({}, a, { figures: target.figures, rev: target.rev }), false);
  }
  function watch(args) {
    let el = null;
    try {
      el = args.watch ? window.parent.document.querySelector(`.st-key-${args.watch}`) : null;
    } catch (e) {
      el = null; // not same-origin
    }
    if (el === watched) return;
    if (watcher) watcher.disconnect();
    watched = el;
    watcher = null;
    if (!el) return;
    // In a task of its own: Streamlit sends the rerun right after the widget's update, and a
    // redraw before it would delay the rerun by its length.
    let queued = 0;
    watcher = new window.parent.MutationObserver(() => {
      clearTimeout(queued);
      queued = setTimeout(() => {
        try {
          onWidget();
        } catch (e) {
          /* a board being torn down */
        }
      }, 0);
    });
    watcher.observe(el, {
      subtree: true,
      attributes: true,
      attributeFilter: ["value", "data-open"],
    });
  }
  window.addEventListener("pagehide", () => watcher && watcher.disconnect());

  function handle(args, fromStreamlit) {
    if (fromStreamlit && args.prefetch) {
      // the hidden board: keeps the figures for the others, draws nothing, takes no height
      const s = store();
      if (s) Object.assign(s, args.prefetch.boards || {});
      hidden = true;
      setHeight();
      document.body.dataset.state = "drawn";
      return;
    }
    if (fromStreamlit) {
      lastArgs = args;
      watch(args);
    }
    if (args.rev && args.rev === drawnRev) {
      // the same arguments again (Streamlit re-sends them), or the figures a head switch
      // already drew: nothing to redraw
      if (pending) {
        pending = null;
        clearTimeout(catchUp);
        document.body.dataset.state = "drawn";
      }
      return;
    }
    if (renders > 0 && !inView) defer(args);
    else {
      pending = null;
      clearTimeout(catchUp);
      render(args);
    }
  }

  window.addEventListener("message", (ev) => {
    const d = ev.data;
    if (!d || d.type !== "streamlit:render") return;
    const args = d.args || {};
    try {
      handle(args, true);
    } catch (e) {
      showError(e);
    }
  });
  new ResizeObserver(setHeight).observe(root);
  send("streamlit:componentReady", { apiVersion: 1 });
})();
