// attnviz/ui/board/js/figure.js, the one reader of a figure (run by tests/ui/test_board_js.py:
// node --test tests/js/). Figures written by hand in the shapes attnviz.viz builds.
import assert from "node:assert/strict";
import test from "node:test";
import {
  attentionCells,
  decode,
  isHeatmap,
  isWeights,
  nounOf,
  readBars,
  readHeatmap,
  readHeatmaps,
  tiles,
  tokenNames,
} from "../../attnviz/ui/board/js/figure.js";
import { chartTables } from "../../attnviz/ui/board/js/table.js";
import { chartGrids } from "../../attnviz/ui/board/js/keys.js";

/** plotly's base64 form of a float64 matrix, as plotly.py sends numpy arrays (a 1-D array:
 * shape "n"). */
function f8(rows) {
  const flat = Float64Array.from(rows.flat());
  const bdata = Buffer.from(flat.buffer).toString("base64");
  return { dtype: "f8", bdata, shape: `${rows.length},${rows[0].length}` };
}

const W = [
  [1, 0, 0],
  [0.25, 0.75, 0],
  [0.2, 0.3, 0.5],
];

/** A weights heatmap as viz.heatmaps.attention_figure builds it. */
const weights = (extra = {}) => ({
  data: [{ type: "heatmap", z: f8(W), colorbar: { title: { text: "weight" } } }],
  layout: {
    title: { text: "Weights A = softmax(S)<br><span>grey = masked</span>" },
    xaxis: { title: { text: "key j" }, tickvals: [0, 1, 2], ticktext: ["the", "cat", "sat"] },
    yaxis: {
      title: { text: "query i (row)" },
      tickvals: [0, 1, 2],
      ticktext: ["the", "cat", "sat"],
    },
    meta: { role: "weights", axes: { xaxis: { noun: "key" }, yaxis: { noun: "query" } } },
    ...extra,
  },
});

test("decode: base64 matrices, typed arrays, nested arrays; an unknown dtype is an error", () => {
  assert.deepEqual(decode(f8(W)), W);
  assert.deepEqual(decode(Float32Array.from([0.5, 2])), [0.5, 2]);
  assert.deepEqual(decode([[1, 2], [3, 4]]), [[1, 2], [3, 4]]);
  assert.equal(decode(null), null);
  assert.throws(() => decode({ dtype: "c16", bdata: "AAAA" }), /unknown dtype c16/);
});

test("a weights heatmap: its nouns from layout.meta.axes, its tokens, its values", () => {
  const fig = weights();
  assert.equal(isHeatmap(fig), true);
  const [h] = readHeatmaps(fig);
  assert.equal(h.rowNoun, "query");
  assert.equal(h.colNoun, "key");
  assert.deepEqual(h.rowNames, ["the", "cat", "sat"]);
  assert.deepEqual(h.z, W);
  assert.equal(h.valueName, "weight");
  assert.equal(h.weights, true);
  assert.equal(h.panel, null); // a figure of one heatmap
  assert.equal(h.pooled, false);
  assert.deepEqual([h.rows, h.cols, h.xs, h.ys], [3, 3, [0, 1, 2], [0, 1, 2]]);
});

test("which values are weights: the colour bar's name says, never the title or the range", () => {
  assert.equal(isWeights("weight"), true);
  assert.equal(isWeights("max weight"), true);
  assert.equal(isWeights("score"), false);
  assert.equal(isWeights("B − A"), false); // Compare's difference (its role is "weights")
  // the difference of two weights charts: role "weights", range 0..1, title about weights
  const diff = weights();
  diff.data[0].colorbar = { title: { text: "B − A" } };
  Object.assign(diff.data[0], { zmin: 0, zmax: 1 });
  const [d] = readHeatmaps(diff);
  assert.equal(d.valueName, "B − A");
  assert.equal(d.weights, false);
  // no colour bar title: a "value", whatever the title says
  const bare = weights();
  delete bare.data[0].colorbar;
  assert.equal(readHeatmaps(bare)[0].valueName, "value");
  assert.equal(readHeatmaps(bare)[0].weights, false);
  // a shared colour axis' colour bar names the values of its traces
  const shared = weights({ coloraxis: { colorbar: { title: { text: "weight" } } } });
  shared.data[0] = { type: "heatmap", z: f8(W), coloraxis: "coloraxis" };
  assert.equal(readHeatmaps(shared)[0].weights, true);
});

test("the table and the keyboard read the same figure alike", () => {
  for (const link of [null, { kind: "attn", orient: "columns" }]) {
    const fig = weights();
    delete fig.layout.meta.axes; // untitled: the nouns come from the link's orientation
    delete fig.layout.xaxis.title;
    delete fig.layout.yaxis.title;
    const [table] = chartTables(fig, link);
    const [grid] = chartGrids(fig, link);
    for (const k of ["rowNoun", "colNoun", "valueName", "weights", "colNames"])
      assert.deepEqual(table[k], grid[k], k);
    assert.deepEqual(table.rows.map((r) => r.name), grid.rowNames);
    const want = link ? ["key", "query"] : ["row", "column"];
    assert.deepEqual([grid.rowNoun, grid.colNoun], want);
  }
});

test("an axis's noun: the one its builder sent, else its title whole, else the fallback", () => {
  const layout = {
    xaxis2: { title: { text: "<b>key</b> j (column)" } },
    yaxis: { title: "row" },
    meta: { axes: { yaxis2: { noun: "head" } } },
  };
  assert.equal(nounOf(layout, "x2", "x", "?"), "key j (column)");
  assert.equal(nounOf(layout, "y2", "y", "?"), "head");
  assert.equal(nounOf(layout, undefined, "y", "?"), "row");
  assert.equal(nounOf(layout, "x3", "x", "?"), "?");
});

test("cell names: tick labels, tokens t0.., indices, blocks of a pooled axis", () => {
  const ticks = { tickvals: [0, 2], ticktext: ["<i>a</i>", "b"] };
  assert.deepEqual(tokenNames(ticks, 3, 0, 1, true), ["a", "t1", "b"]);
  assert.deepEqual(tokenNames({}, 3, 0, 1, false), ["0", "1", "2"]);
  assert.deepEqual(tokenNames({}, 2, 0, 4, true), ["t0–t3", "t4–t7"]);
  // a heatmap drawn in 2-token blocks: its cells named by their blocks, said pooled
  const fig = weights();
  Object.assign(fig.data[0], { x0: 0, dx: 2, y0: 0, dy: 2 });
  fig.layout.xaxis = {};
  fig.layout.yaxis = {};
  const [h] = readHeatmaps(fig);
  assert.equal(h.pooled, true);
  assert.deepEqual(h.colNames, ["t0–t1", "t2–t3", "t4–t5"]);
  assert.deepEqual(h.xs, [0, 2, 4]);
});

test("a trace's own x / y place its cells (heads 1..12), when one per cell", () => {
  const trace = { type: "heatmap", z: [[1, 2, 3]], x: [1, 2, 3], y: [4] };
  const h = readHeatmap(trace, { meta: { axes: { xaxis: { noun: "head" } } } });
  assert.deepEqual(h.xs, [1, 2, 3]);
  assert.deepEqual(h.colNames, ["1", "2", "3"]);
  assert.equal(h.rowNoun, "row");
  // x of the wrong length is not taken: the cells sit at x0 + i dx
  const odd = readHeatmap({ ...trace, x: [5, 6] }, {});
  assert.deepEqual(odd.xs, [0, 1, 2]);
});

test("panels: one per head (the link's heads) or per named trace; untitled axes shared", () => {
  const trace = (name, xaxis, yaxis) => ({ type: "heatmap", z: W, name, xaxis, yaxis });
  const layout = {
    xaxis: { title: { text: "key" } },
    yaxis: { title: { text: "query" } },
  };
  const fig = { data: [trace("a"), trace("b", "x2", "y2")], layout };
  const byName = readHeatmaps(fig);
  assert.deepEqual(
    byName.map((h) => [h.panel, h.rowNoun, h.colNoun, h.xaxis]),
    [
      ["a", "query", "key", "x"],
      ["b", "query", "key", "x2"],
    ],
  );
  const byHead = readHeatmaps(fig, { kind: "attn", heads: [3, 5] });
  assert.deepEqual(
    byHead.map((h) => h.panel),
    ["head 3", "head 5"],
  );
  const unnamed = readHeatmaps({ data: [trace(""), trace("")], layout });
  assert.deepEqual(
    unnamed.map((h) => h.panel),
    ["panel 1", "panel 2"],
  );
  assert.equal(isHeatmap({ data: [{ type: "bar", y: [1] }] }), false);
});

test("tiles: the grid of every head read as one head's weights per tile", () => {
  // 2 layers x 2 heads of 2 x 2 weights, one cell of gap between tiles
  const z = [
    [1, 0, null, 0.5, 0.5],
    [0.4, 0.6, null, 0.9, 0.1],
    [null, null, null, null, null],
    [0, 1, null, 1, 0],
    [0.3, 0.7, null, 0.2, 0.8],
  ];
  const spec = { rows: 2, cols: 2, size: 2, gap: 1, row: "layer", col: "head" };
  const fig = { data: [{ type: "heatmap", z }], layout: { meta: { tiles: spec } } };
  const t = tiles(fig);
  assert.deepEqual(
    t.tiles.map((x) => [x.name, x.x0, x.y0]),
    [
      ["layer 0, head 0", 0, 0],
      ["layer 0, head 1", 3, 0],
      ["layer 1, head 0", 0, 3],
      ["layer 1, head 1", 3, 3],
    ],
  );
  // a band of layers (the decoder's slide) names the model's own layers, from first_row
  const band = { ...fig, layout: { meta: { tiles: { ...spec, first_row: 12 } } } };
  assert.deepEqual(
    tiles(band).tiles.map((x) => x.name),
    ["layer 12, head 0", "layer 12, head 1", "layer 13, head 0", "layer 13, head 1"],
  );
  assert.deepEqual(t.tiles[3].z, [
    [1, 0],
    [0.2, 0.8],
  ]);
  assert.deepEqual(
    [t.rowNoun, t.colNoun, t.valueName, t.weights],
    ["query", "key", "weight", true],
  );
  assert.deepEqual(t.names, ["t0", "t1"]);
  // data smaller than the spec says: not tiled
  assert.equal(tiles({ ...fig, data: [{ type: "heatmap", z: z.slice(0, 3) }] }), null);
});

test("bars: vertical or horizontal, named by tick labels, tokens or their own text", () => {
  const vertical = {
    data: [{ type: "bar", x: [0, 1, 2], y: { ...f8([[0.2, 0.3, 0.5]]), shape: "3" } }],
    layout: { meta: { axes: { xaxis: { noun: "key" }, yaxis: { noun: "weight" } } } },
  };
  const v = readBars(vertical);
  assert.equal(v.across, false);
  assert.deepEqual(v.names, ["t0", "t1", "t2"]);
  assert.deepEqual([v.itemNoun, v.valueName, v.weights], ["key", "weight", true]);
  assert.deepEqual(v.series, [{ name: "weight", values: [0.2, 0.3, 0.5] }]);
  const tally = {
    data: [
      { type: "bar", orientation: "h", name: "Right", y: ["1. a", "2. b"], x: [12, 0] },
      { type: "bar", orientation: "h", name: "Wrong", y: ["1. a", "2. b"], x: [3, 0] },
    ],
    layout: { meta: { axes: { xaxis: { noun: "students" } } } },
  };
  const h = readBars(tally);
  assert.equal(h.across, true);
  assert.deepEqual(h.names, ["1. a", "2. b"]);
  assert.deepEqual([h.itemNoun, h.valueName, h.weights], ["", "students", false]);
  assert.deepEqual(
    h.series.map((s) => [s.name, s.values]),
    [
      ["Right", [12, 0]],
      ["Wrong", [3, 0]],
    ],
  );
  assert.equal(readBars(weights()), null);
});

test("an attention chart's link: selects or not, the cell arithmetic it carries", () => {
  assert.equal(attentionCells(null), null);
  assert.equal(attentionCells({ kind: "tokens", arithmetic: {} }), null);
  assert.deepEqual(attentionCells({ kind: "attn", head: 0 }), { selects: true, arithmetic: null });
  const data = { scale: 0.5, heads: {} };
  assert.deepEqual(attentionCells({ kind: "attn", select: false, arithmetic: data }), {
    selects: false,
    arithmetic: data,
  });
});
