// Head switch in the browser.
//
// A hidden board (`prefetch` in its data, sent after the visible charts) brings the other
// heads' figures of the boards drawn with `watch`: they are kept in `store` below (one per
// tab: this module's instance), per board, with the revision they belong to. When the
// watched widget (the page's head picker, a selectbox with key `watch`) shows another
// value, such a board draws that head's figures at once, before the rerun the widget
// starts: that rerun then brings the same revision, which the board skips.
//
// The widget's markup is not named here: its selectors come with the board's data (`dom`,
// attnviz.ui.streamlit_private.BOARD_DOM, checked against Streamlit's front end by
// tests/ui/test_streamlit_private.py): the widget's element (`key_class` + its key) and its
// combobox input, whose value is the shown option once its list (`combobox`, attribute
// `combobox_open` while open) is closed. If nothing matches, or nothing was prefetched, a
// head change simply redraws on its rerun, as any other change.

const store = new Map(); // board name -> {current, current_rev, values: {head: {figures, rev}}}

/** Keep the prefetched heads of a hidden board (replacing the boards it names). */
export function keep(prefetch) {
  for (const [name, entry] of Object.entries((prefetch && prefetch.boards) || {})) {
    store.set(name, entry);
  }
}

/** The element of the widget of key `key` (null: none, or no selectors in `dom`). */
export function widgetElement(key, dom) {
  if (!key || !dom || !dom.key_class) return null;
  return document.querySelector(`.${dom.key_class}${CSS.escape(key)}`);
}

function widgetValue(el, dom) {
  if (!dom || !dom.combobox_input) return null;
  const box = dom.combobox ? el.querySelector(dom.combobox) : null;
  const input = el.querySelector(dom.combobox_input);
  if (!input || (box && dom.combobox_open && box.hasAttribute(dom.combobox_open))) return null;
  return input.value;
}

/** The data to draw now for board `args.name` if its watched widget shows another head
 * whose figures were prefetched (null: nothing to do). */
export function switchTarget(args, el) {
  const entry = args && el ? store.get(args.name) : null;
  if (!entry || entry.current_rev !== args.rev) return null; // nothing for what is shown
  const v = widgetValue(el, args.dom);
  if (v === null) return null;
  if (v === String(entry.current)) return { figures: args.figures, rev: args.rev };
  return entry.values[v] || null;
}

/** Watch the widget `key` for `board` (calls `board.onWidget()` in a task of its own, so
 * that the rerun Streamlit sends right after the widget's update is not delayed); `dom`:
 * the selectors of the board's data. Returns the function that stops watching. */
export function watch(key, board, dom) {
  const el = widgetElement(key, dom);
  if (!el) return null;
  let queued = 0;
  const observer = new MutationObserver(() => {
    clearTimeout(queued);
    queued = setTimeout(() => {
      try {
        board.onWidget(el);
      } catch (e) {
        board.fail(e);
      }
    }, 0);
  });
  observer.observe(el, {
    subtree: true,
    attributes: true,
    attributeFilter: ["value", dom.combobox_open || "value"],
  });
  return { el, stop: () => observer.disconnect() };
}
