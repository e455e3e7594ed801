// A right-to-left language's words in a chart (Arabic): plotly draws its SVG text left to
// right, so "الأوزان A = softmax(S)" stood with its Arabic word at the left, and a number or a
// bracket at the wrong end of its line. Each line holding right-to-left letters goes in one
// right-to-left isolate (RLI ... PDI): it reads from the right, as the page's prose, its
// formulas kept left to right by their own isolates (attnviz.i18n.isolate). draw.js applies
// rtlFigure before fitting (fit.js's wrapTitle keeps the isolate on each wrapped line). Pure
// functions, new objects; tested in Node: tests/js/fit.test.mjs.

const RTL_LETTER = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/;
export const RLI = "\u2067";
export const PDI = "\u2069";

/** `text` (plotly's: lines split by <br>, a line maybe one <span>) with each line that
 * holds right-to-left letters in a right-to-left isolate; other lines and text as they are. */
export function rtlLines(text) {
  if (typeof text !== "string" || !RTL_LETTER.test(text)) return text;
  return text
    .split(/(<br\s*\/?>)/i)
    .map((part) => {
      if (!RTL_LETTER.test(part) || part.startsWith(RLI)) return part;
      const m = part.match(/^(<span[^>]*>)([\s\S]*)(<\/span>)$/i);
      return m ? m[1] + RLI + m[2] + PDI + m[3] : RLI + part + PDI;
    })
    .join("");
}

const titled = (t) =>
  typeof t === "string"
    ? rtlLines(t)
    : t && typeof t.text === "string" && RTL_LETTER.test(t.text)
      ? Object.assign({}, t, { text: rtlLines(t.text) })
      : t;

/** [layout, data] with the words of a right-to-left language read from the right (rtlLines):
 * the title, the axes' and colour bars' titles, the annotations, the legend's names and the
 * hover labels; new objects where something changed, the figure itself untouched. */
export function rtlFigure(layout, data) {
  const lay = Object.assign({}, layout);
  if (lay.title) lay.title = titled(lay.title);
  for (const k of Object.keys(lay)) {
    const v = lay[k];
    if (/^[xy]axis\d*$/.test(k) && v && v.title) lay[k] = Object.assign({}, v, { title: titled(v.title) });
    if (/^coloraxis\d*$/.test(k) && v && v.colorbar && v.colorbar.title) {
      const colorbar = Object.assign({}, v.colorbar, { title: titled(v.colorbar.title) });
      lay[k] = Object.assign({}, v, { colorbar });
    }
  }
  if (Array.isArray(lay.annotations)) {
    lay.annotations = lay.annotations.map((a) =>
      a && typeof a.text === "string" ? Object.assign({}, a, { text: rtlLines(a.text) }) : a,
    );
  }
  const dat = (data || []).map((t) => {
    let out = t;
    if (t && typeof t.name === "string" && RTL_LETTER.test(t.name)) out = Object.assign({}, out, { name: rtlLines(t.name) });
    if (t && t.colorbar && t.colorbar.title) {
      out = Object.assign({}, out, { colorbar: Object.assign({}, t.colorbar, { title: titled(t.colorbar.title) }) });
    }
    const hover = t && t.hovertemplate;
    if (typeof hover === "string" && RTL_LETTER.test(hover)) {
      const extra = hover.indexOf("<extra>"); // plotly's side box: its own text, left as it is
      const main = extra < 0 ? hover : hover.slice(0, extra);
      out = Object.assign({}, out, { hovertemplate: rtlLines(main) + (extra < 0 ? "" : hover.slice(extra)) });
    }
    return out;
  });
  return [lay, dat];
}
