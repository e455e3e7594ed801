// The values written in a heatmap's cells (issue 46/47), fitted to the cells plotly drew:
//   cellText     dropped when they would overlap (the hover, the table and the keyboard
//                still give them); on a slide grown to READABLE_PX where they then fit,
//                else dropped too: a value is readable or absent
// Pure functions of the figure's data and the plot's width; draw.js applies them before
// and after Plotly.react. Tested in Node: tests/js/fit.test.mjs.

import { estimateWidth, plain } from "./fit.js";

/** The number of columns of a heatmap trace's z (a list of rows or plotly's typed form). */
export function columnsOf(z) {
  if (!z) return 0;
  if (Array.isArray(z)) return Array.isArray(z[0]) ? z[0].length : z.length;
  const shape = typeof z.shape === "string" ? z.shape.split(",").map(Number) : z.shape;
  return shape && shape.length > 1 ? Number(shape[1]) : 0;
}

// Kept free between the values of two neighbouring cells: at least CELL_GAP px and a
// space's width (SPACE_EM of the type): closer, ".05.05.02" reads as one run (the measured
// width of a value is the browser's canvas estimate; plotly's SVG text can be wider).
export const CELL_GAP = 2;
export const SPACE_EM = 0.28;
// The smallest chart text that reads from the back of a hall on a 1080p slide.
export const READABLE_PX = 20;

/** `data` with the values written in heatmap cells dropped where a cell (the plot area's
 * width `plotW` over the heatmap's columns: plotly's own, after drawing) is narrower than
 * the widest value and a space between neighbours: plotly would draw them into each other
 * (".05.05.02" at 17 px cells). `minSize` (a slide: READABLE_PX): values in smaller type
 * are grown to it where they then fit, else dropped too: a value is readable or absent. */
export function cellText(data, plotW, measure = estimateWidth, minSize = 0) {
  if (!plotW || !data) return data;
  let out = data;
  data.forEach((t, i) => {
    if (!t || t.type !== "heatmap" || !t.texttemplate || !Array.isArray(t.text)) return;
    const n = columnsOf(t.z);
    if (!n) return;
    const own = (t.textfont && t.textfont.size) || 12;
    const size = Math.max(own, minSize);
    let widest = 0;
    for (const row of t.text) {
      for (const s of Array.isArray(row) ? row : [row]) {
        widest = Math.max(widest, measure(plain(s), size));
      }
    }
    const fits = plotW / n >= widest + Math.max(CELL_GAP, SPACE_EM * size);
    if (fits && size === own) return;
    if (out === data) out = data.slice();
    out[i] = fits
      ? Object.assign({}, t, { textfont: Object.assign({}, t.textfont, { size }) })
      : Object.assign({}, t, { texttemplate: "" });
  });
  return out;
}
