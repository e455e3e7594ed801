// Reads a plotly figure (JSON, stdin) and prints what attnviz/ui/board/js/table.js and keys.js make
// of it: {tables, grid, announcements: {"r,c": text, "r,c,p": text in panel p}} (used by
// tests/ui/test_board_js.py).
import { chartTables } from "../../attnviz/ui/board/js/table.js";
import { announcement, chartGrids } from "../../attnviz/ui/board/js/keys.js";

let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (text += d));
process.stdin.on("end", () => {
  const { figure, link, cells } = JSON.parse(text);
  const grids = chartGrids(figure, link);
  const grid = grids[0] || null;
  const announcements = {};
  for (const [r, c, p] of cells || [])
    announcements[p == null ? `${r},${c}` : `${r},${c},${p}`] = announcement(grids[p || 0], {
      row: r,
      col: c,
    });
  const out = { tables: chartTables(figure, link), grid, announcements };
  process.stdout.write(
    JSON.stringify(out, (k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v)),
  );
});
