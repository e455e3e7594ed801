// fit.js, rtl.js and stepkeys.js (run by tests/ui/test_board_js.py: node --test tests/js/): each chart
// fitted to its room (issue 25), with plotly-like layouts made by hand; tests/ui/test_board_js.py
// also runs attnviz's own figures through them (dump_fit.mjs).
import assert from "node:assert/strict";
import test from "node:test";
import {
  estimateWidth,
  gridColumns,
  cellRatio,
  fillsSlide,
  fitGrid,
  isSquareMatrix,
  legendBelow,
  legendCorrection,
  presenterFill,
  thinTicks,
  turnNeed,
  tickDepth,
  wrapTitle,
} from "../../attnviz/ui/board/js/fit.js";
import { fitFigure } from "../../attnviz/ui/board/js/draw.js";
import { PDI, RLI, rtlFigure, rtlLines } from "../../attnviz/ui/board/js/rtl.js";
import { cellText, READABLE_PX } from "../../attnviz/ui/board/js/values.js";
import { stepOf } from "../../attnviz/ui/board/js/stepkeys.js";

test("gridColumns: side by side on a laptop, stacked on a phone, two a row between", () => {
  assert.equal(gridColumns([1, 1, 1], 980), "minmax(0, 1fr) minmax(0, 1fr) minmax(0, 1fr)");
  assert.equal(gridColumns([2, 1], 980), "minmax(0, 2fr) minmax(0, 1fr)");
  assert.equal(gridColumns([1, 1, 1], 358), "minmax(0, 1fr)"); // a phone: one per row
  assert.equal(gridColumns([1, 1, 1, 1], 736), "minmax(0, 1fr) minmax(0, 1fr)"); // 184 px each
  assert.equal(gridColumns([1, 1, 1], 736).split("minmax").length - 1, 3); // 245 px each
  assert.equal(gridColumns([1], 300), "minmax(0, 1fr)");
  assert.equal(gridColumns([1, 1], 0), "minmax(0, 1fr) minmax(0, 1fr)"); // not laid out yet
});

const TITLE = { text: "Weights A = softmax(S)", x: 0, xanchor: "left", font: { size: 16 } };

test("wrapTitle: a title wider than its chart wraps at spaces; the plot keeps its height", () => {
  const layout = { title: TITLE, height: 380, margin: { l: 60, r: 10, t: 60, b: 54 } };
  const width = 120;
  const out = wrapTitle(layout, width, estimateWidth);
  const lines = out.title.text.split("<br>");
  assert.ok(lines.length >= 2, out.title.text);
  assert.equal(lines.join(" "), TITLE.text); // nothing lost, nothing cut
  for (const l of lines) assert.ok(estimateWidth(l, 16) <= width - 8, l);
  const grow = out.margin.t - 60;
  assert.equal(grow, Math.ceil((lines.length - 1) * 16 * 1.3));
  assert.equal(out.height, 380 + grow); // the plot area: the same height
  assert.equal(layout.title.text, TITLE.text); // the figure itself is left as it was
  assert.equal(layout.margin.t, 60);
  assert.equal(wrapTitle(layout, 600, estimateWidth), layout); // it fits: unchanged
});

test("wrapTitle: the grey note line keeps its own size on every wrapped line", () => {
  const span = "<span style='font-size:13px;color:#555'>";
  const note = `${span}6-token blocks (mean) · grey = masked</span>`;
  const layout = { title: { text: `Scores<br>${note}`, font: { size: 16 } }, margin: { t: 60 } };
  const out = wrapTitle(layout, 150, estimateWidth);
  const lines = out.title.text.split("<br>");
  assert.equal(lines[0], "Scores");
  assert.ok(lines.length > 2);
  for (const l of lines.slice(1)) assert.ok(l.startsWith(span) && l.endsWith("</span>"), l);
  assert.equal(out.margin.t, 60 + Math.ceil((lines.length - 2) * 13 * 1.3));
});

test("wrapTitle: a word longer than the chart is cut into pieces that fit", () => {
  const out = wrapTitle({ title: { text: "Wwwwwwwwwwwwwwwwwwwwwwwwww", font: { size: 16 } } }, 100);
  for (const l of out.title.text.split("<br>")) assert.ok(estimateWidth(l, 16) <= 92, l);
  assert.equal(out.title.text.replaceAll("<br>", ""), "Wwwwwwwwwwwwwwwwwwwwwwwwww");
});

const NAMES = ["a·v of t5", "a·v of t4", "a·v of t0", "other 3 keys (Σa=0.1)", "output"];
const BARS = NAMES.map((name) => ({ type: "bar", name }));

test("legendBelow: a narrow chart's legend goes under the plot, the height grows", () => {
  const margin = { l: 77, r: 10, t: 60, b: 54 };
  const layout = { height: 320, margin, legend: { font: { size: 11 } } };
  const out = legendBelow(layout, BARS, 358, estimateWidth);
  assert.equal(out.legend.orientation, "h");
  assert.equal(out.legend.yref, "container");
  assert.equal(out.legend.y, 0);
  assert.equal(out.legend.font.size, 11);
  const grow = out.margin.b - 54;
  const row = 11 * 1.3 + 6; // 5 entries on 271 px of plot width: 2 a row, 3 rows
  assert.equal(grow, Math.ceil(3 * row + 12), grow);
  assert.equal(out.height, 320 + grow);
  assert.equal(layout.legend.orientation, undefined);
  // wide enough, one trace, heatmaps only, a legend the figure placed itself: unchanged
  assert.equal(legendBelow(layout, BARS, 900, estimateWidth), layout);
  assert.equal(legendBelow(layout, BARS.slice(0, 1), 358, estimateWidth), layout);
  assert.equal(legendBelow(layout, [{ type: "heatmap" }, { type: "heatmap" }], 358), layout);
  const inside = Object.assign({}, layout, { legend: { x: 0.7 } });
  assert.equal(legendBelow(inside, BARS, 358, estimateWidth), inside);
  const hidden = Object.assign({}, layout, { showlegend: false });
  assert.equal(legendBelow(hidden, BARS, 358, estimateWidth), hidden);
});

test("legendCorrection: the margin plotly's legend needs, or null when the estimate fit", () => {
  const base = { margin: { b: 54 }, height: 320 };
  const drawn = { margin: { b: 148 }, height: 414 };
  assert.deepEqual(legendCorrection(base, drawn, 143), { "margin.b": 209, height: 475 });
  assert.equal(legendCorrection(base, { margin: { b: 209 }, height: 475 }, 143), null);
});

const z6 = { dtype: "f4", bdata: "", shape: "6,6" };
const text6 = Array.from({ length: 6 }, () => Array(6).fill(".55"));
// a 6x6 heatmap with ".55" written in each cell at `size` px
const cells = (size) => ({ type: "heatmap", z: z6, text: text6, texttemplate: "%{text}",
  textfont: { size } });

test("cellText: values are dropped from cells too narrow for them, kept where they fit", () => {
  const heat = cells(12);
  const narrow = cellText([heat], 6 * 12, estimateWidth); // 12 px cells, ".55" is 20 px
  assert.equal(narrow[0].texttemplate, "");
  assert.equal(heat.texttemplate, "%{text}");
  const wide = [heat];
  // ".55" (20.2 px) and a space (3.4 px): kept in 24 px cells, dropped in 21 px ones, where
  // two neighbours' values would touch
  assert.equal(cellText(wide, 6 * 24, estimateWidth), wide);
  assert.equal(cellText(wide, 6 * 21, estimateWidth)[0].texttemplate, "");
  assert.equal(cellText(wide, 0, estimateWidth), wide); // not drawn yet
});

test("cellText on a slide: values below READABLE_PX grow to it where they fit, else go", () => {
  const heat = cells(17.4); // 12 px at the slide's text scale
  // 40 px cells: ".55" at 20 px is 33.6 px and a space 5.6: grown to 20 px, still written
  const grown = cellText([heat], 6 * 40, estimateWidth, READABLE_PX);
  assert.equal(grown[0].textfont.size, READABLE_PX);
  assert.equal(grown[0].texttemplate, "%{text}");
  // 35 px cells: it would fit at 17.4 px, not at 20: absent, never unreadable
  assert.equal(cellText([heat], 6 * 35, estimateWidth, READABLE_PX)[0].texttemplate, "");
  assert.equal(cellText([heat], 6 * 35, estimateWidth)[0], heat); // the normal view keeps it
  const big = cells(24); // already larger: kept as it is
  assert.equal(cellText([big], 6 * 50, estimateWidth, READABLE_PX)[0], big);
});

test("thinTicks: labels a head apart are not thinned as if a cell apart; turned where room", () => {
  // a grid of heads: 12 tiles of 13 units, one label a tile, cells 6 px: 78 px apart
  const grid = { tickmode: "array", tickvals: [...Array(12).keys()].map((h) => h * 13 + 6),
    ticktext: [...Array(12).keys()].map((h) => `H${h}`), tickfont: { size: 19 } };
  assert.equal(thinTicks(grid, 6, false, estimateWidth), grid);
  assert.equal(thinTicks(grid, 6, true, estimateWidth), grid);
  // 16 tokens in 38 px cells: "because" (74 px at 17.4 px) does not fit flat
  const words = ["[CLS]", "the", "animal", "because", "it", "was", "too", "tired"];
  const axis = { tickmode: "array", tickvals: [...words.keys()], ticktext: words,
    tickfont: { size: 17.4 } };
  const turned = thinTicks(axis, 38, false, estimateWidth, 120);
  assert.equal(turned.tickangle, -90);
  assert.deepEqual(turned.ticktext, words); // every token kept
  // no room under the plot for them turned: thinned, as before
  const thinned = thinTicks(axis, 38, false, estimateWidth, 40);
  assert.equal(thinned.tickangle, undefined);
  assert.ok(thinned.ticktext.length < words.length);
});

test("presenterFill: a slide's token labels turned upright, the bottom margin grown for them", () => {
  // MiniLM's 16 tokens on a 1920x1080 slide: flat, "because" needs more than a cell
  const words = ["[CLS]", "the", "animal", "didn", "'", "t", "cross", "the", "street",
    "because", "it", "was", "too", "tired", ".", "[SEP]"];
  const heat = cells(17);
  const layout = Object.assign(matrixLayout(16), {
    xaxis: { range: [-0.5, 15.5], tickmode: "array", tickvals: [...words.keys()],
      ticktext: words, tickfont: { size: 17.4 }, title: { text: "key j (column)" } },
  });
  const room = { width: 1280, height: 720 };
  assert.ok(turnNeed(layout.xaxis, 38) > 0);
  const [out] = presenterFill(layout, [heat], room);
  assert.equal(out.xaxis.tickangle, -90);
  assert.deepEqual(out.xaxis.ticktext, words); // every token keeps its label
  assert.ok(out.margin.b > 54, out.margin.b); // grown for the turned labels
  assert.equal(out.xaxis.title.standoff, 6); // the axis title under them, not across them
  assert.equal(out.xaxis.title.text, "key j (column)");
  assert.ok(out.height <= room.height, out.height); // still within the slide
  assert.equal(layout.margin.b, 54); // the figure itself untouched
  // labels that fit flat: nothing turned, the margin kept
  const short = Object.assign({}, layout, {
    xaxis: Object.assign({}, layout.xaxis, { ticktext: words.map((_, i) => String(i)) }),
  });
  const [flat] = presenterFill(short, [heat], room);
  assert.equal(flat.xaxis.tickangle, undefined);
  assert.equal(flat.margin.b, 54);
  assert.equal(turnNeed(short.xaxis, 38), 0);
});

function matrixLayout(n, height = 310) {
  const span = [-0.5, n - 0.5];
  return {
    height,
    margin: { l: 77, r: 10, t: 60, b: 54 },
    xaxis: { range: span },
    yaxis: { range: [n - 0.5, -0.5] },
  };
}

test("presenterFill: a square matrix gets square cells, as large as the screen allows", () => {
  const heat = cells(17);
  const layout = matrixLayout(6);
  assert.ok(isSquareMatrix(layout, [heat]));
  const [out, data] = presenterFill(layout, [heat], { width: 1080, height: 720 });
  const side = out.height - 60 - 54;
  assert.equal(side, 720 - 60 - 54); // the height limits it here
  assert.equal(out.yaxis.scaleanchor, "x");
  assert.equal(out.yaxis.scaleratio, 1);
  assert.equal(out.xaxis.constrain, "domain");
  assert.ok(out.width <= 1080 && out.width >= side + 77 + 10, out.width); // plot and colour bar
  assert.ok(data[0].textfont.size > 17 && data[0].textfont.size <= 28); // values grow with cells
  assert.equal(heat.textfont.size, 17);
  // a narrow chart: the width limits the side; no room below: the figure's own height
  const [thin] = presenterFill(layout, [heat], { width: 500, height: 900 });
  assert.ok(thin.height - 114 <= 500 - 87 - 60, thin.height);
  const [own] = presenterFill(layout, [heat], { width: 1800, height: 0 });
  assert.equal(own.height, 310);
  assert.equal(isSquareMatrix(layout, [heat, heat]), false);
  assert.equal(fillsSlide(layout, [{ type: "bar" }]), false);
  const bars = Object.assign({}, layout);
  assert.equal(presenterFill(bars, [{ type: "bar" }], { width: 1800, height: 700 })[0], bars);
});

test("presenterFill: a colour bar under the plot gives the width to the plot", () => {
  // issue 47: Compare's three matrices in a row, each bar beside its plot: 33% of 1080 px
  const heat = Object.assign(cells(17), { colorbar: { thickness: 12, tickfont: { size: 20 } } });
  const room = { width: 560, height: 900 };
  const [beside] = presenterFill(matrixLayout(6), [heat], room);
  const layout = Object.assign(matrixLayout(6), { meta: { colorbar: "under" } });
  const [out, data] = presenterFill(layout, [heat], room);
  const side = (o) => o.height - o.margin.t - o.margin.b;
  assert.equal(side(out), 560 - 77 - 10); // the width limits it, no bar beside the plot
  assert.ok(side(out) > side(beside) + 60, [side(out), side(beside)]);
  assert.ok(out.margin.b >= 54 + 12 + 32, out.margin.b); // the bar, its ticks, a gap
  const cb = data[0].colorbar;
  assert.equal(cb.orientation, "h");
  assert.deepEqual([cb.yref, cb.y, cb.yanchor], ["container", 0, "bottom"]);
  assert.equal(heat.colorbar.orientation, undefined); // the figure itself is not changed
  // without the figure's asking, a horizontal bar of its own stays as it is
  const own = Object.assign({}, heat, { colorbar: { orientation: "h", y: -0.3 } });
  assert.equal(presenterFill(matrixLayout(6), [own], room)[1][0].colorbar.y, -0.3);
});

test("presenterFill: a non-square matrix fills the room, its cells never thinner than 1:3", () => {
  const heat = { type: "heatmap", z: [[0, 0, 0, 0]] };
  // X at N=6, D=8 (6 rows, 8 columns) in a slide's chart column: nearly square cells
  const x = Object.assign({}, matrixLayout(6), { xaxis: { range: [-0.5, 7.5] } });
  const [lay] = presenterFill(x, [heat], { width: 1000, height: 760 });
  const plotH = lay.height - 60 - 54;
  assert.ok(plotH >= 0.45 * 1080 * 0.9, plotH); // fills the height below
  const cw = (lay.width - 77 - 10 - 70) / 8;
  const ch = plotH / 6;
  assert.ok(cw / ch >= 1 / 1.5 && cw / ch <= 1.5, [cw, ch]);
  assert.equal(lay.yaxis.scaleanchor, "x");
  assert.ok(Math.abs(lay.yaxis.scaleratio - ch / cw) < 0.05, lay.yaxis.scaleratio);
  // X at D=64: the width allows 13 px columns; the rows stretch to 3x, no more
  const wide = Object.assign({}, matrixLayout(6), { xaxis: { range: [-0.5, 63.5] } });
  const [w] = presenterFill(wide, [heat], { width: 1000, height: 760 });
  assert.ok(Math.abs(w.yaxis.scaleratio - 3) < 1e-6, w.yaxis.scaleratio);
  assert.ok(w.height - 114 < 760 - 114, w.height); // not the whole height: 1:3 at most
  assert.equal(cellRatio(6, 6), 1);
  assert.equal(cellRatio(6, 8), 1.5);
  assert.equal(cellRatio(6, 16), 16 / 6);
  assert.equal(cellRatio(6, 64), 3);
  assert.equal(cellRatio(4, 7, true), 1); // cross-attention's weights ask for square cells
  const cross = Object.assign({}, matrixLayout(7), {
    xaxis: { range: [-0.5, 3.5] },
    meta: { cells: "square" },
  });
  const [sq] = presenterFill(cross, [heat], { width: 1000, height: 760 });
  assert.equal(sq.yaxis.scaleratio, 1);
});

// small multiples of `count` heads of 6x6 cells, `cols` a row
function gridLayout(count, cols) {
  const grid = { rows: Math.ceil(count / cols), cols, count, n: 6, m: 6 };
  const out = { height: 320, margin: { l: 40, r: 10, t: 80, b: 30 }, meta: { grid },
    annotations: [] };
  const labels = { tickmode: "array", tickvals: [0, 1, 2, 3, 4, 5],
    ticktext: ["a", "b", "c", "d", "e", "f"], tickfont: { size: 13 } };
  for (let i = 0; i < count; i++) {
    const sfx = i === 0 ? "" : String(i + 1);
    out[`xaxis${sfx}`] = Object.assign({ domain: [0, 1] }, labels);
    out[`yaxis${sfx}`] = Object.assign({ domain: [0, 1] }, labels);
    out.annotations.push({ text: `head ${i}`, x: 0, y: 1 });
  }
  return out;
}

// a plot's px size from its domains in a figure of `width` x layout.height
function plotPx(lay, i, width) {
  const sfx = i === 0 ? "" : String(i + 1);
  const m = lay.margin;
  const W = (lay.width || width) - m.l - m.r - 86;
  const P = lay.height - m.t - m.b;
  const dx = lay[`xaxis${sfx}`].domain;
  const dy = lay[`yaxis${sfx}`].domain;
  return [(dx[1] - dx[0]) * W, (dy[1] - dy[0]) * P];
}

test("fitGrid: small multiples get square cells, as tall as the room allows", () => {
  const layout = gridLayout(4, 4);
  assert.ok(fillsSlide(layout, []));
  const [out] = presenterFill(layout, [], { width: 1760, height: 800 });
  assert.ok(out.height > 320 && out.height <= 800, out.height);
  for (let i = 0; i < 4; i++) {
    const [w, h] = plotPx(out, i, 1760);
    assert.ok(Math.abs(w - h) < 2 && w > 300, [i, w, h]); // square, side by side
  }
  assert.equal(out.annotations[3].y, 1);
  assert.equal(out.yaxis2.showticklabels, false); // labels left of the first column only
  // two rows of two, the height limits them: every plot square, inside the room
  const two = presenterFill(gridLayout(4, 2), [], { width: 1760, height: 700 })[0];
  assert.ok(two.height <= 700, two.height);
  const [w, h] = plotPx(two, 3, 1760);
  assert.ok(Math.abs(w - h) < 2, [w, h]);
});

test("fitGrid: the figure's own height is a floor, unless the page keeps room under it", () => {
  // two rows of two whose own height (740, as the Learned page's heads) is more than the room
  const layout = Object.assign(gridLayout(4, 2), { height: 740 });
  const kept = presenterFill(layout, [], { width: 1000, height: 600 })[0];
  assert.equal(kept.height, 740); // the own height wins: the slide scrolls to the chart
  // a lesson's question under the charts (room.below): the room wins, the question stays on screen
  const fitted = presenterFill(layout, [], { width: 1000, height: 600, below: 60 })[0];
  assert.ok(fitted.height <= 600, fitted.height);
  const [w, h] = plotPx(fitted, 3, 1000);
  assert.ok(Math.abs(w - h) < 2, [w, h]); // still square
});

test("fitGrid: plots that share their x labels have them under each column's last only", () => {
  // issue 47: a slide's heads in a layer a row; the upper row's labels and title repeated
  // the lower's and took the rows' gap, so the heads were smaller
  const layout = gridLayout(4, 2);
  for (const k of ["xaxis", "xaxis2", "xaxis3", "xaxis4"]) layout[k].title = { text: "key" };
  const room = { width: 1200, height: 800 };
  const apart = presenterFill(layout, [], room)[0];
  layout.meta.grid = Object.assign({}, layout.meta.grid, { shared_x: true });
  const [out] = presenterFill(layout, [], room);
  assert.equal(out.xaxis.showticklabels, false); // row 1: a plot under it
  assert.equal(out.xaxis.title.text, "");
  assert.equal(out.xaxis2.showticklabels, false);
  assert.notEqual(out.xaxis3.showticklabels, false); // row 2: the column's last
  assert.equal(out.xaxis3.title.text, "key");
  const [w, h] = plotPx(out, 0, 1200);
  const [w0] = plotPx(apart, 0, 1200);
  assert.ok(Math.abs(w - h) < 2 && w > w0 + 10, [w, h, w0]); // square, and larger
  assert.ok(out.height <= 800, out.height);
  // one column (a phone): every plot keeps its labels
  const one = fitGrid(layout, { width: 358, height: 0 }, 1);
  assert.ok([0, 1, 2, 3].every((i) => one[`xaxis${i ? i + 1 : ""}`].showticklabels !== false));
});

test("presenterFill: a chart that asks for the room's height gets it, others keep theirs", () => {
  const line = { height: 340, meta: { fill: "height" }, xaxis: {}, yaxis: {} };
  assert.ok(fillsSlide(line, [{ type: "scatter" }]));
  assert.equal(presenterFill(line, [], { width: 1200, height: 788 })[0].height, 788);
  assert.equal(presenterFill(line, [], { width: 1200, height: 0 })[0].height, 340);
  const plain = { height: 340, xaxis: {}, yaxis: {} };
  assert.ok(!fillsSlide(plain, [{ type: "scatter" }]));
  assert.equal(presenterFill(plain, [], { width: 1200, height: 788 })[0], plain);
});

test("fitGrid: a wide matrix (cross-attention's T x S) fills the row's height or width", () => {
  const wide = gridLayout(2, 2);
  wide.meta.grid = Object.assign({}, wide.meta.grid, { n: 4, m: 6 });
  const [out] = presenterFill(wide, [], { width: 1760, height: 500 });
  const [w, h] = plotPx(out, 0, 1760);
  assert.ok(Math.abs(w / h - 1.5) < 0.02, [w, h]); // square cells: 6 wide, 4 high
  // the height of the room is what limits it, and it is used (it was two thirds of it)
  const t = out.margin.t, b = out.margin.b;
  assert.ok(h >= 0.95 * (500 - t - b), [h, t, b]);
  assert.ok(out.height <= 500, out.height);
  // a wide room: the width limits it, and it is used (two plots and their gap)
  const [full] = presenterFill(wide, [], { width: 1760, height: 2000 });
  assert.ok(plotPx(full, 0, 1760)[0] >= 0.45 * (1760 - 40 - 10 - 86), plotPx(full, 0, 1760));
});

test("fitGrid: a phone gets one head a row, at full width, labels thinned out", () => {
  const out = fitGrid(gridLayout(4, 2), { width: 358, height: 0 }, 1);
  const tops = [0, 1, 2, 3].map((i) => out[`yaxis${i ? i + 1 : ""}`].domain[1]);
  assert.ok(tops[0] > tops[1] && tops[1] > tops[2] && tops[2] > tops[3], tops);
  assert.ok([0, 1, 2, 3].every((i) => out[`yaxis${i ? i + 1 : ""}`].showticklabels));
  const [w, h] = plotPx(out, 2, 358);
  assert.ok(Math.abs(w - h) < 2 && w > 150, [w, h]);
  // 32 labels on a 6-px pitch: every third or so
  const many = gridLayout(1, 1);
  many.meta.grid = Object.assign({}, many.meta.grid, { n: 32, m: 32 });
  many.xaxis = Object.assign({}, many.xaxis, { tickvals: [...Array(32).keys()],
    ticktext: [...Array(32).keys()].map(String) });
  many.yaxis = Object.assign({}, many.xaxis);
  const thin = fitGrid(many, { width: 358, height: 0 }, 1);
  assert.ok(thin.yaxis.tickvals.length < 32 && thin.yaxis.tickvals.length >= 8, thin.yaxis);
  assert.deepEqual(thin.yaxis.tickvals.slice(0, 2), [0, thin.yaxis.tickvals[1]]);
});

test("fitGrid: a phone's stacked heads get their shared colour bar across the top", () => {
  // issue 47: beside four stacked heads, one colour bar stretched over all of them
  const layout = gridLayout(4, 2);
  const title = { text: "w" };
  layout.coloraxis = { colorbar: { thickness: 12, tickfont: { size: 14 }, title } };
  const out = fitGrid(layout, { width: 358, height: 0 }, 1);
  const bar = out.coloraxis.colorbar;
  assert.equal(bar.orientation, "h");
  assert.ok(bar.y > 1 && bar.yanchor === "bottom", bar); // above the first plot and its title
  assert.ok(out.margin.t > layout.margin.t, out.margin); // room made for it at the top
  // the plots take the width the bar beside them took: wider than without a colour axis
  const beside = fitGrid(gridLayout(4, 2), { width: 358, height: 0 }, 1);
  const dx = (lay) => lay.xaxis.domain[1] - lay.xaxis.domain[0];
  const side = (lay, reserve) => dx(lay) * ((lay.width || 358) - 40 - 10 - reserve);
  assert.ok(side(out, 0) > side(beside, 86) + 60, [side(out, 0), side(beside, 86)]);
  // two columns (a laptop): the bar stays beside the plots
  const wide = fitGrid(layout, { width: 980, height: 0 });
  assert.equal(wide.coloraxis, layout.coloraxis);
});

test("fitGrid: slanted labels get their depth under each row, and are not thinned for it", () => {
  const words = ["yellow", "fish", "grey", "cow", "green", "bird", "black", "mouse"];
  const slanted = { tickmode: "array", tickvals: [...words.keys()], ticktext: words,
    tickfont: { size: 20 }, tickangle: -45 };
  const level = Object.assign({}, slanted, { tickangle: 0 });
  // 40-px cells: level words (~67 px) every other one, slanted ones all of them
  assert.equal(thinTicks(level, 40, false).ticktext.length, 4);
  assert.equal(thinTicks(slanted, 40, false).ticktext.length, 8);
  assert.ok(tickDepth(slanted) > 2 * tickDepth(level), [tickDepth(slanted), tickDepth(level)]);
  const layout = gridLayout(2, 1);
  layout.meta.grid = Object.assign({}, layout.meta.grid, { n: 8, m: 8 });
  layout.xaxis = Object.assign({}, slanted, { title: { text: "source word" } });
  const out = fitGrid(layout, { width: 358, height: 0 }, 1);
  assert.ok(out.margin.b >= tickDepth(slanted), out.margin);
  // between the rows: the words, the axis title and the next head's title
  const P = out.height - out.margin.t - out.margin.b;
  const gap = (out.yaxis.domain[0] - out.yaxis2.domain[1]) * P;
  assert.ok(gap >= tickDepth(slanted) + 12 * 1.2 + 12 * 1.4, gap);
});

test("fitFigure: a touch screen's drag scrolls the page; a presenter's matrix is square", () => {
  const fig = { layout: matrixLayout(6), data: [{ type: "heatmap", z: z6 }] };
  const [touch] = fitFigure(fig, 1, { width: 358, height: 0 }, { touch: true });
  assert.equal(touch.dragmode, false);
  const [mouse] = fitFigure(fig, 1, { width: 358, height: 0 }, {});
  assert.equal(mouse.dragmode, undefined);
  assert.equal(mouse.yaxis.scaleanchor, undefined); // square cells only on a slide
  const [slide] = fitFigure(fig, 1.45, { width: 1080, height: 700 }, { present: true });
  assert.equal(slide.yaxis.scaleanchor, "x");
});

test("stepOf: the arrow keys step, unless handled already or pressed with a modifier", () => {
  const key = (k, extra = {}) => Object.assign({ key: k, defaultPrevented: false }, extra);
  assert.equal(stepOf(key("ArrowRight")), "next");
  assert.equal(stepOf(key("ArrowLeft")), "prev");
  assert.equal(stepOf(key("ArrowDown")), null); // scrolls the page
  assert.equal(stepOf(key("ArrowRight", { defaultPrevented: true })), null); // a chart's cells
  for (const m of ["altKey", "ctrlKey", "metaKey", "shiftKey"]) {
    assert.equal(stepOf(key("ArrowRight", { [m]: true })), null, m);
  }
});

test("rtlLines: each line with Arabic letters in a right-to-left isolate, the others as they are", () => {
  const note = "<span style='font-size:13px'>رمادي = مُخفى</span>";
  assert.equal(rtlLines("الأوزان A = softmax(S)"), `${RLI}الأوزان A = softmax(S)${PDI}`);
  assert.equal(
    rtlLines(`Weights A = softmax(S)<br>${note}`),
    `Weights A = softmax(S)<br><span style='font-size:13px'>${RLI}رمادي = مُخفى${PDI}</span>`,
  );
  assert.equal(rtlLines("Weights A = softmax(S)"), "Weights A = softmax(S)"); // no Arabic: as is
  assert.equal(rtlLines(rtlLines("الأوزان")), `${RLI}الأوزان${PDI}`); // once
  assert.equal(rtlLines(undefined), undefined);
});

test("rtlFigure: titles, axis and colour-bar titles, annotations and legend names; the figure untouched", () => {
  const layout = {
    title: { text: "الدرجات S", x: 1 },
    xaxis: { title: { text: "المفتاح j" } },
    yaxis2: { title: "t0" },
    coloraxis: { colorbar: { title: { text: "الوزن" } } },
    annotations: [{ text: "الرأس 0" }, { text: "H1" }],
  };
  const hover = "الاستعلام %{y}<br>الوزن %{z:.2f}<extra></extra>";
  const data = [
    { name: "صحيحة", colorbar: { title: { text: "الدرجة" } }, hovertemplate: hover },
    { name: "t1", z: [[1]] },
  ];
  const before = JSON.stringify([layout, data]);
  const [lay, dat] = rtlFigure(layout, data);
  const iso = (s) => RLI + s + PDI;
  assert.equal(lay.title.text, iso("الدرجات S"));
  assert.equal(lay.title.x, 1);
  assert.equal(lay.xaxis.title.text, iso("المفتاح j"));
  assert.equal(lay.yaxis2.title, "t0");
  assert.equal(lay.coloraxis.colorbar.title.text, iso("الوزن"));
  assert.deepEqual(lay.annotations.map((a) => a.text), [iso("الرأس 0"), "H1"]);
  assert.deepEqual([dat[0].name, dat[0].colorbar.title.text, dat[1].name], [iso("صحيحة"), iso("الدرجة"), "t1"]);
  assert.equal(dat[0].hovertemplate, `${iso("الاستعلام %{y}")}<br>${iso("الوزن %{z:.2f}")}<extra></extra>`);
  assert.equal(dat[1], data[1]); // nothing to change: the same trace
  assert.equal(JSON.stringify([layout, data]), before);
});

test("wrapTitle: a right-to-left line cut in two keeps its isolate on each part", () => {
  const text = `${RLI}${"كلمة ".repeat(30).trim()}${PDI}`;
  const out = wrapTitle({ title: { text, font: { size: 16 } }, margin: { t: 50 } }, 300, estimateWidth);
  const lines = out.title.text.split("<br>");
  assert.ok(lines.length > 1, out.title.text);
  for (const line of lines) assert.ok(line.startsWith(RLI) && line.endsWith(PDI), line);
});
