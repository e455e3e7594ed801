// Reads {views: [{data, cells: [[head, query, key], ...]}], numbers: [[v, decimals], ...]}
// (JSON, stdin) and prints what attnviz/ui/board/js/cell.js makes of it: per cell its arithmetic,
// steps and heading; per number its text (used by tests/ui/test_cell_js.py).
import { arithmetic, heading, pickHead, plain, steps } from "../../attnviz/ui/board/js/cell.js";

const finite = (k, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v);

let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (text += d));
process.stdin.on("end", () => {
  const { views, numbers, picks } = JSON.parse(text);
  const out = {
    views: (views || []).map(({ data, cells }) =>
      cells.map(([h, q, k]) => {
        const c = arithmetic(data, h, q, k);
        return c && { cell: c, steps: steps(c), heading: heading(c, data.labels, data.title, undefined, data.key_labels) };
      }),
    ),
    numbers: (numbers || []).map(([v, d]) => plain(v, d)),
    picks: (picks || []).map(([data, sel]) => pickHead(data, sel)),
  };
  process.stdout.write(JSON.stringify(out, finite));
});
