// draw.js's quickTicks, fitted and scaled (run by tests/ui/test_board_js.py: node --test
// tests/js/): tick labels
// drawn without plotly measuring each one on every redraw (the head change's cost).
import assert from "node:assert/strict";
import test from "node:test";
import { axisParts, chartLabel, fitted, quickTicks, scaled, SLIDE_MIN_PX, styled } from "../../attnviz/ui/board/js/draw.js";
import { setLocale } from "../../attnviz/ui/board/js/i18n.js";

test("quickTicks: every axis and colour bar draws its tick labels without measuring", () => {
  const layout = { xaxis: { title: "key" }, yaxis2: { range: [0, 1] }, height: 300 };
  const data = [{ type: "heatmap", z: [[1]], colorbar: { title: "w" } }, { type: "bar" }];
  const [lay, dat] = quickTicks(layout, data);
  assert.equal(lay.xaxis.ticklabeloverflow, "allow");
  assert.equal(lay.yaxis.ticklabeloverflow, "allow"); // the default axes too
  assert.equal(lay.yaxis2.ticklabeloverflow, "allow");
  assert.equal(lay.xaxis.title, "key");
  assert.equal(lay.height, 300);
  assert.equal(dat[0].colorbar.ticklabeloverflow, "allow");
  assert.equal(dat[0].colorbar.title, "w");
  assert.equal(dat[1].colorbar, undefined); // no colour bar made up
  // the figure itself is left as it was
  assert.equal(layout.xaxis.ticklabeloverflow, undefined);
  assert.equal(data[0].colorbar.ticklabeloverflow, undefined);
});

test("quickTicks: a figure's own setting is kept", () => {
  const [lay, dat] = quickTicks({ xaxis: { ticklabeloverflow: "hide past domain" } }, [
    { colorbar: { ticklabeloverflow: "hide past div" } },
  ]);
  assert.equal(lay.xaxis.ticklabeloverflow, "hide past domain");
  assert.equal(dat[0].colorbar.ticklabeloverflow, "hide past div");
});

// an axis title in parts, as attnviz.viz.style.AxisTitle.meta() sends it, and its forms
const QUERY_COLUMNS = {
  noun: "query",
  head: "query i (column)",
  rests: ["columns = tokens (UDL book)", "columns = tokens", ""],
  forms: [
    "query i (column) — columns = tokens (UDL book)",
    "query i (column) — columns = tokens",
    "query i (column)",
  ],
};
const QUERY_ROWS = {
  noun: "query",
  head: "query i (row)",
  rests: ["rows = tokens (PyTorch)", "rows = tokens", ""],
  forms: ["query i (row) — rows = tokens (PyTorch)", "query i (row) — rows = tokens", "query i (row)"],
  lines: ["query i (row)<br>rows = tokens (PyTorch)", "query i (row)<br>rows = tokens", "query i (row)"],
};

test("axisParts: the forms and two-line forms joined from the head and its rests", () => {
  const layout = { meta: { axes: { yaxis: QUERY_ROWS, xaxis: { noun: "key", head: "key j", rests: [""] } } } };
  assert.deepEqual(axisParts(layout, "yaxis"), { noun: "query", forms: QUERY_ROWS.forms, lines: QUERY_ROWS.lines });
  assert.deepEqual(axisParts(layout, "xaxis").forms, ["key j"]);
  assert.equal(axisParts(layout, "xaxis2"), null);
  assert.equal(axisParts({ meta: { axes: { xaxis: { noun: "key" } } } }, "xaxis"), null);
});

test("fitted: a wide x title takes the longest of its builder's forms that fits", () => {
  const layout = {
    xaxis: { title: { text: QUERY_COLUMNS.forms[0] } },
    meta: { axes: { xaxis: QUERY_COLUMNS } },
  };
  assert.equal(fitted(layout, 1000), layout); // fits: unchanged
  assert.equal(fitted(layout, 300).xaxis.title.text, QUERY_COLUMNS.forms[1]);
  assert.equal(fitted(layout, 100).xaxis.title.text, QUERY_COLUMNS.forms[2]);
  assert.equal(layout.xaxis.title.text, QUERY_COLUMNS.forms[0]); // the figure is kept
});

test("fitted and scaled read no title: one without parts stays as it is", () => {
  const text = "query i (column) — columns = tokens (UDL book)";
  const layout = { xaxis: { title: { text } }, yaxis: { title: { text } } };
  assert.equal(fitted(layout, 100).xaxis.title.text, text);
  assert.equal(scaled(layout, 1.5).yaxis.title.text, text);
});

test("scaled: a y title at a larger size goes on the two lines of the form shown", () => {
  const layout = {
    yaxis: { title: { text: QUERY_ROWS.forms[1] } },
    margin: { l: 80 },
    meta: { axes: { yaxis: QUERY_ROWS } },
  };
  const out = scaled(layout, 1.5);
  assert.equal(out.yaxis.title.text, QUERY_ROWS.lines[1]);
  assert.ok(out.margin.l > 80); // room for the second line
  assert.equal(scaled(layout, 1), layout);
});

test("scaled: on a slide no chart text under SLIDE_MIN_PX, the title's note line too", () => {
  const layout = {
    font: { size: 12 },
    title: { text: "S<br><span style='font-size:13px;color:#555'>grey = masked</span>",
             font: { size: 16 } },
    xaxis: { tickfont: { size: 13 }, title: { text: "key", font: { size: 14 } } },
    annotations: [{ text: "head 0", font: { size: 12 } }],
  };
  const out = scaled(layout, 1.45);
  assert.equal(SLIDE_MIN_PX, 20);
  assert.equal(out.font.size, 20); // 17.4 grown to 20
  assert.equal(out.xaxis.tickfont.size, 20); // 18.85
  assert.equal(out.xaxis.title.font.size, 20); // axis titles grow half as much: 17.15
  assert.equal(out.annotations[0].font.size, 20);
  assert.ok(Math.abs(out.title.font.size - 23.2) < 1e-9); // above the floor: scaled
  assert.match(out.title.text, /font-size:20px/);
  assert.ok(out.margin.t > 100); // room for the note line at its new size
  // the normal view: as the figure says
  assert.equal(scaled(layout, 1), layout);
});

test("scaled: a fixed margin's token-label part grows with the slide's text, numbers' not", () => {
  const layout = {
    margin: { l: 92, r: 10, t: 60, b: 54 },
    xaxis: { automargin: false, tickmode: "linear" }, // feature numbers: short labels
    yaxis: { automargin: false, tickmode: "array", tickvals: [0, 1], ticktext: ["because", "it"] },
  };
  const out = scaled(layout, 1.45);
  assert.equal(out.margin.l, Math.ceil(92 + (92 - 34) * 0.45)); // "because" at 17.4 px
  assert.equal(out.margin.b, 54);
  assert.equal(scaled(layout, 1), layout);
});

test("chartLabel: a chart's accessible name from its title, in the shown language", async () => {
  assert.equal(chartLabel({ key: "w", title: "Weights A" }), "Chart: Weights A");
  assert.equal(chartLabel({ key: "w", title: "" }), "chart"); // never the code's key
  const ar = { lang: "ar", dir: "rtl", separators: ".,", plural: ["other"] };
  await setLocale({ ...ar, messages: { "Chart: {title}": "الرسم: {title}" } });
  assert.equal(chartLabel({ key: "w", title: "الأوزان A" }), "الرسم: الأوزان A");
  await setLocale({ lang: "en", dir: "ltr", separators: ".,", plural: ["one", "other"], messages: {} });
});

// A fake board root whose style sheet applies after `after` animation frames (never: -1).
function lateStyle(after) {
  let frames = 0;
  let now = 0;
  const win = {
    getComputedStyle: () => ({ display: after >= 0 && frames >= after ? "grid" : "block" }),
    performance: { now: () => now },
    requestAnimationFrame: (fn) => setTimeout(() => { frames += 1; now += 16; fn(); }, 0),
  };
  return { ownerDocument: { defaultView: win }, frames: () => frames };
}

test("styled: a board draws once its style sheet makes it a grid, not before", async () => {
  const root = lateStyle(3);
  assert.equal(await styled(root), true);
  assert.equal(root.frames(), 3); // waited for the sheet, no frame more
  const ready = lateStyle(0);
  assert.equal(await styled(ready), true);
  assert.equal(ready.frames(), 0); // already styled: at once
});

test("styled: without its style sheet a board still draws, after the wait", async () => {
  const root = lateStyle(-1);
  assert.equal(await styled(root, 100), false);
  assert.ok(root.frames() >= 100 / 16 && root.frames() <= 100 / 16 + 2, root.frames());
  const next = lateStyle(-1); // the sheet never came once: the next board does not wait
  assert.equal(await styled(next, 100), false);
  assert.equal(next.frames(), 0);
});
