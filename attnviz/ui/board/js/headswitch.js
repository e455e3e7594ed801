// Head switch in the browser.
//
// A hidden board (`prefetch` in its data, sent after the visible charts) brings the other
// heads' figures of the boards drawn with `watch`: they are kept in `store` below (one per
// tab: this module's instance), per board, with the revision they belong to. When the
// watched widget (the page's head picker, a selectbox with key `watch`) shows another
// value, such a board draws that head's figures at once, before the rerun the widget
// starts: that rerun then brings the same revision, which the board skips.
//
// The one place the board reads Streamlit's markup: the selectbox's element
// (`.st-key-<key>`, Streamlit's documented key class) and its combobox input, whose value
// is the shown option once its list is closed. If that markup changes, or nothing was
// prefetched, a head change simply redraws on its rerun, as any other change.

const store = new Map(); // board name -> {current, current_rev, values: {head: {figures, rev}}}

/** Keep the prefetched heads of a hidden board (replacing the boards it names). */
export function keep(prefetch) {
  for (const [name, entry] of Object.entries((prefetch && prefetch.boards) || {})) {
    store.set(name, entry);
  }
}

function widgetValue(el) {
  const box = el.querySelector(".react-aria-ComboBox");
  const input = el.querySelector('input[role="combobox"]');
  if (!input || (box && box.hasAttribute("data-open"))) return null;
  return input.value;
}

/** The data to draw now for board `args.name` if its watched widget shows another head
 * whose figures were prefetched (null: nothing to do). */
export function switchTarget(args, el) {
  const entry = args && el ? store.get(args.name) : null;
  if (!entry || entry.current_rev !== args.rev) return null; // nothing for what is shown
  const v = widgetValue(el);
  if (v === null) return null;
  if (v === String(entry.current)) return { figures: args.figures, rev: args.rev };
  return entry.values[v] || null;
}

/** Watch the widget `key` for `board` (calls `board.onWidget()` in a task of its own, so
 * that the rerun Streamlit sends right after the widget's update is not delayed). Returns
 * the function that stops watching. */
export function watch(key, board) {
  const el = key ? document.querySelector(`.st-key-${CSS.escape(key)}`) : null;
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
    attributeFilter: ["value", "data-open"],
  });
  return { el, stop: () => observer.disconnect() };
}
