// draw.js's quickTicks (run by tests/ui/test_board_js.py: node --test tests/js/): tick labels
// drawn without plotly measuring each one on every redraw (the head change's cost).
import assert from "node:assert/strict";
import test from "node:test";
import { quickTicks } from "../../attnviz/ui/board/js/draw.js";

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
