// Wide equations and tables scroll sideways and say so (issue 25). On a phone a KaTeX
// display wider than its column (an exercise's "Q = [...]   K = [...]") scrolls inside its
// own box, with nothing to show that K goes on past the edge; a Markdown table (a model
// page's six head scores) made the whole page scroll sideways. Each such box (and each
// table shown under a chart, table.js) gets:
// - shadows at the sides that hide more (drawn by the background: they move with the
//   scroll) and a thin scroll bar that stays visible;
// - a keyboard stop (tabindex 0, a region named "Equation, scrolls sideways" or "Table,
//   scrolls sideways"), so that the arrow keys scroll it (WCAG 2.1.1; axe-core's
//   scrollable-region-focusable).
// A box that fits again loses all of it. Watched once per tab from board.js: the page
// changes (a rerun, a page switch) and the window's width. A Markdown table's box is found
// by the selector the board's data brings (`dom.table_box`, streamlit_private.BOARD_DOM);
// its sideways scrolling in the main column is that module's CSS too. The shadows and the
// scroll bar are board.css's (class WIDE, "attnviz-scrolls").

import { _, onLocale } from "./i18n.js";

export const WIDE = "attnviz-scrolls";
// A box only this much wider than its column is a glyph's overhang (KaTeX's displays are a
// few px wider at any size), not hidden content: axe-core's scrollable-region rule
// ignores up to 13 px too.
const OVERHANG_PX = 12;

/** Mark (or unmark) every display equation and Markdown table under `root` by whether it
 * is wider than its box (by more than OVERHANG_PX); returns how many are marked. */
export function markWide(root, tableBox = null) {
  let count = 0;
  const selector = tableBox ? `.katex-display, ${tableBox}` : ".katex-display";
  for (const el of root.querySelectorAll(selector)) {
    const wide = el.scrollWidth - el.clientWidth > OVERHANG_PX;
    const marked = el.classList.contains(WIDE);
    if (wide) {
      // named again each time: the shown language may have changed since it was marked
      const equation = el.classList.contains("katex-display");
      const label = equation ? _("Equation, scrolls sideways") : _("Table, scrolls sideways");
      if (el.getAttribute("aria-label") !== label) el.setAttribute("aria-label", label);
    }
    if (wide && !marked) {
      el.classList.add(WIDE);
      el.tabIndex = 0;
      el.setAttribute("role", "region");
    } else if (!wide && marked) {
      el.classList.remove(WIDE);
      el.removeAttribute("tabindex");
      el.removeAttribute("role");
      el.removeAttribute("aria-label");
    }
    if (wide) count += 1;
  }
  return count;
}

const watched = new WeakSet();

/** Keep `doc`'s wide equations marked while the page changes (debounced); `dom.table_box`
 * (the board's data): a Markdown table's box, marked too. */
export function watchWide(doc, dom) {
  if (watched.has(doc) || !doc.body) return;
  watched.add(doc);
  const tableBox = (dom && dom.table_box) || null;
  let timer = 0;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => markWide(doc, tableBox), 150);
  };
  new MutationObserver(soon).observe(doc.body, { childList: true, subtree: true });
  (doc.defaultView || globalThis).addEventListener("resize", soon);
  onLocale(soon); // named in the new language once its catalog has come (i18n.js)
  soon();
}
