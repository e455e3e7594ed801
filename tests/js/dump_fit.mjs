// Reads {figures: [plotly figure JSON], room: {width, height}, scale, opts, plot_width?}
// (stdin) and prints what attnviz/ui/board/js/draw.js's fitFigure draws of each (and, with the
// plot area's width plotly gave it, values.js's cellText): [{layout, data}] (used by
// tests/ui/test_board_js.py on attnviz's own figures).
import { fitFigure } from "../../attnviz/ui/board/js/draw.js";
import { cellText } from "../../attnviz/ui/board/js/values.js";

let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (text += d));
process.stdin.on("end", () => {
  const { figures, room, scale, opts, plot_width } = JSON.parse(text);
  const out = figures.map((f) => {
    const [layout, fitted] = fitFigure(f, scale || 1, room, opts || {});
    const data = plot_width ? cellText(fitted, plot_width) : fitted;
    return { layout, data: data.map((t) => ({ type: t.type, texttemplate: t.texttemplate })) };
  });
  process.stdout.write(JSON.stringify(out));
});
