// Reads a plotly figure (JSON, stdin) and prints what attnviz/ui/board/js/table.js and keys.js make
// of it: {tables, grid, grids, announcements: {"r,c": text, "r,c,p": text in panel p}} (used by
// tests/ui/test_board_js.py). A list of {figure, link, cells} in: a list of those out.
import { chartTables } from "../../attnviz/ui/board/js/table.js";
import { announcement, chartGrids } from "../../attnviz/ui/board/js/keys.js";

function dump({ figure, link, cells }) {
  const grids = chartGrids(figure, link);
  const grid = grids[0] || null;
  const announcements = {};
  for (const [r, c, p] of cells || [])
    announcements[p == null ? `${r},${c}` : `${r},${c},${p}`] = announcement(grids[p || 0], {
      row: r,
      col: c,
    });
  return { tables: chartTables(figure, link), grid, grids, announcements };
}

let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (text += d));
process.stdin.on("end", () => {
  const payload = JSON.parse(text);
  const out = Array.isArray(payload) ? payload.map(dump) : dump(payload);
  process.stdout.write(
    JSON.stringify(out, (k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v)),
  );
});
