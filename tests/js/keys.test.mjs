// Pure logic of attnviz/ui/board/js/keys.js (run by tests/ui/test_board_js.py: node --test tests/js/).
import assert from "node:assert/strict";
import test from "node:test";
import {
  PAGE,
  announcement,
  chartGrids,
  coordinates,
  nextCell,
  nextPanel,
  spoken,
  cellAt,
} from "../../attnviz/ui/board/js/keys.js";

test("arrows move one cell and stop at the edges", () => {
  assert.deepEqual(nextCell("ArrowRight", { row: 2, col: 3 }, 6, 6), { row: 2, col: 4 });
  assert.deepEqual(nextCell("ArrowLeft", { row: 2, col: 0 }, 6, 6), { row: 2, col: 0 });
  assert.deepEqual(nextCell("ArrowDown", { row: 5, col: 1 }, 6, 6), { row: 5, col: 1 });
  assert.deepEqual(nextCell("ArrowUp", { row: 2, col: 1 }, 6, 6), { row: 1, col: 1 });
});

test("Home / End: the row's ends; with Ctrl: the chart's", () => {
  assert.deepEqual(nextCell("Home", { row: 3, col: 4 }, 6, 8), { row: 3, col: 0 });
  assert.deepEqual(nextCell("End", { row: 3, col: 4 }, 6, 8), { row: 3, col: 7 });
  assert.deepEqual(nextCell("Home", { row: 3, col: 4 }, 6, 8, true), { row: 0, col: 0 });
  assert.deepEqual(nextCell("End", { row: 3, col: 4 }, 6, 8, true), { row: 5, col: 7 });
});

test("PageUp / PageDown jump PAGE rows, clamped", () => {
  assert.equal(PAGE, 5);
  assert.deepEqual(nextCell("PageDown", { row: 1, col: 2 }, 20, 20), { row: 6, col: 2 });
  assert.deepEqual(nextCell("PageDown", { row: 18, col: 2 }, 20, 20), { row: 19, col: 2 });
  assert.deepEqual(nextCell("PageUp", { row: 3, col: 2 }, 20, 20), { row: 0, col: 2 });
});

test("other keys are not taken (Tab, letters)", () => {
  assert.equal(nextCell("Tab", { row: 0, col: 0 }, 6, 6), null);
  assert.equal(nextCell("a", { row: 0, col: 0 }, 6, 6), null);
  assert.equal(nextCell("ArrowUp", { row: 0, col: 0 }, 0, 0), null);
});

test("spoken numbers", () => {
  assert.equal(spoken(0.2349), "0.23");
  assert.equal(spoken(0.0012345), "0.0012");
  assert.equal(spoken(-1.5), "−1.50");
  assert.equal(spoken(0.99999, true), "1");
  assert.equal(spoken(0.5, true), "0.5");
  assert.equal(spoken(NaN), "masked");
});

const weights = (orient) => {
  const z = [
    [0.5, 0.25, 0.25],
    [0.1, 0.2, 0.7],
  ];
  const g = {
    kind: "heatmap",
    z,
    rows: 2,
    cols: 3,
    valueName: "weight",
    weights: true,
    pooled: false,
    x0: 0,
    dx: 1,
    y0: 0,
    dy: 1,
    rowNoun: "query",
    colNoun: "key",
    rowNames: ["t0", "t1"],
    colNames: ["t0", "t1", "t2"],
  };
  if (orient === "columns") {
    const zt = z[0].map((_, c) => z.map((r) => r[c]));
    return {
      ...g,
      z: zt,
      rows: 3,
      cols: 2,
      rowNoun: "key",
      colNoun: "query",
      rowNames: ["t0", "t1", "t2"],
      colNames: ["t0", "t1"],
    };
  }
  return g;
};

test("announcement: query first, the weight, the row's sum", () => {
  assert.equal(
    announcement(weights("rows"), { row: 1, col: 2 }),
    "query t1, key t2, weight 0.70, row sums to 1",
  );
  // transposed (UDL book layout): the same cell, its column sums to 1
  assert.equal(
    announcement(weights("columns"), { row: 2, col: 1 }),
    "query t1, key t2, weight 0.70, column sums to 1",
  );
  assert.deepEqual(coordinates(weights("columns"), { row: 2, col: 1 }), {
    x: 1,
    y: 2,
    query: 1,
    key: 2,
  });
});

test("announcement: masked cells and scores (no sum)", () => {
  const g = weights("rows");
  g.z = [
    [1, NaN, NaN],
    [0.4, 0.6, NaN],
  ];
  assert.equal(
    announcement(g, { row: 0, col: 2 }),
    "query t0, key t2, masked (weight 0), row sums to 1",
  );
  const s = { ...weights("rows"), valueName: "score", weights: false };
  assert.equal(announcement(s, { row: 0, col: 0 }), "query t0, key t0, score 0.50");
});

test("] / [ move to the next / previous panel, clamped; one panel takes no key", () => {
  assert.equal(nextPanel("]", 0, 2), 1);
  assert.equal(nextPanel("]", 1, 2), 1);
  assert.equal(nextPanel("[", 1, 2), 0);
  assert.equal(nextPanel("[", 0, 6), 0);
  assert.equal(nextPanel("]", 0, 1), null);
  assert.equal(nextPanel("ArrowRight", 0, 2), null);
  // tiles laid out 12 a row (the grid of every head): } / { a layer down / up, or stay
  assert.equal(nextPanel("}", 3, 72, 12), 15);
  assert.equal(nextPanel("}", 63, 72, 12), 63);
  assert.equal(nextPanel("{", 15, 72, 12), 3);
  assert.equal(nextPanel("{", 3, 72, 12), 3);
  assert.equal(nextPanel("}", 0, 2), null); // no rows of panels: not taken
  const g = { ...weights("rows"), panel: "head 1" };
  assert.equal(
    announcement(g, { row: 1, col: 2 }),
    "head 1: query t1, key t2, weight 0.70, row sums to 1",
  );
  // a trace's own x (heads 1..12): the cell's data coordinate is its x, not its index
  const h = { ...weights("rows"), xs: [1, 2, 3], ys: [1, 2] };
  assert.deepEqual(coordinates(h, { row: 1, col: 2 }), { x: 3, y: 2, query: 2, key: 3 });
});

test("chartGrids: an axis's noun is the one its builder sent, not read from its title", () => {
  const figure = {
    data: [{ type: "heatmap", z: [[0.5, 0.5], [0.2, 0.8]] }],
    layout: {
      title: { text: "Weights" },
      xaxis: { title: { text: "key j (column)" } },
      yaxis: { title: { text: "row of the matrix (whatever it says)" } },
      meta: { axes: { yaxis: { noun: "query", head: "q", rests: [""] } } },
    },
  };
  const [grid] = chartGrids(figure);
  assert.equal(grid.rowNoun, "query");
  assert.equal(grid.colNoun, "key j (column)"); // no noun sent: the title whole, not taken apart
});

test("cellAt: the cell under a point of the plot (a tap), null outside the cells", () => {
  const grid = { rows: 6, cols: 6, x0: 0, dx: 1, y0: 0, dy: 1 };
  assert.deepEqual(cellAt(grid, 3.2, 0.9), { row: 1, col: 3 });
  assert.deepEqual(cellAt(grid, -0.4, 5.4), { row: 5, col: 0 });
  assert.equal(cellAt(grid, 6.6, 1), null);
  // a pooled axis: blocks of 4 tokens starting at token 0, 4, 8
  const pooled = { rows: 3, cols: 3, xs: [0, 4, 8], ys: [0, 4, 8], dx: 4, dy: 4 };
  assert.deepEqual(cellAt(pooled, 5.5, 9), { row: 2, col: 1 });
});
