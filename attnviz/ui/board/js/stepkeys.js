// The presenter view's steps by the arrow keys (issue 25): ArrowRight / ArrowLeft press
// its Next / Previous buttons, as PageDown / PageUp (the buttons' Streamlit shortcuts, what
// presentation remotes send) do. Only when the focus is not in a control that uses the
// arrow keys itself: a text field, a slider, a select, radio buttons, tabs, a chart's
// keyboard cells (keys.js), a table or an equation that scrolls sideways; a key a control
// has already handled (defaultPrevented) or pressed with a modifier is left alone.
//
// Installed by a hidden board that `attnviz.ui.present.steps` draws under the step bar
// (data {step_keys: {next, prev}}: the buttons' widget keys); one listener per tab, active
// while such a board is on the page.

// Elements (and their insides) that move with the arrow keys themselves.
const OWN_ARROWS = [
  "input",
  "textarea",
  "select",
  "[contenteditable]:not([contenteditable='false'])",
  ...[
    "slider",
    "spinbutton",
    "combobox",
    "listbox",
    "option",
    "radio",
    "radiogroup",
    "tab",
    "tablist",
    "menu",
    "menubar",
    "menuitem",
    "grid",
    "gridcell",
    "tree",
    "treeitem",
    "application",
    "textbox",
    "scrollbar",
  ].map((r) => `[role="${r}"]`),
  ".js-plotly-plot",
].join(", ");

/** Whether the element with the focus uses the arrow keys itself. */
export function usesArrows(el) {
  if (!el || el.nodeType !== 1) return false;
  const doc = el.ownerDocument;
  if (el === doc.body || el === doc.documentElement) return false;
  if (el.closest(OWN_ARROWS)) return true;
  // a focusable region that scrolls sideways (a shown table, a wide equation)
  return el.scrollWidth > el.clientWidth + 1;
}

/** "next", "prev" or null: the step a key event asks for. */
export function stepOf(event) {
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return null;
  if (event.shiftKey) return null;
  if (event.key === "ArrowRight") return "next";
  if (event.key === "ArrowLeft") return "prev";
  return null;
}

let active = null; // {next, prev, keyClass}: the widget keys of the buttons on the page
const installed = new WeakSet();

function onKey(event) {
  if (!active) return;
  const which = stepOf(event);
  if (!which || usesArrows(event.target)) return;
  const doc = event.target && event.target.ownerDocument ? event.target.ownerDocument : document;
  const key = which === "next" ? active.next : active.prev;
  const button = doc.querySelector(`.${active.keyClass}${CSS.escape(key)} button`);
  if (!button || button.disabled) return;
  event.preventDefault();
  button.click();
}

/** Step with the arrow keys through the buttons of widget keys `spec.next` / `spec.prev`
 * (`dom.key_class` + a key: the class of a widget's element, from the board's data);
 * returns the function that stops it. */
export function stepKeys(doc, spec, dom) {
  if (!dom || !dom.key_class) return () => {};
  if (!installed.has(doc)) {
    doc.addEventListener("keydown", onKey);
    installed.add(doc);
  }
  const mine = { next: String(spec.next), prev: String(spec.prev), keyClass: dom.key_class };
  active = mine;
  return () => {
    if (active === mine) active = null;
  };
}
