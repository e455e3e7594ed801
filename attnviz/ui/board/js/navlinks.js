// In-app links that move within the session (a lesson's Back / Next, its summary's stops:
// attnviz.ui.tour): a click on `a[data-attnviz-nav]` with a same-origin address goes there
// as the browser's back and forward buttons do (history.pushState, then a popstate event):
// Streamlit's front end reads the new URL and asks the server for that page and its
// settings, with plotly.js, the board and the session already there. A page switch, not a
// new visit. Any other click (a modifier key: a new tab; another origin) is left to the
// browser, and so is a link while this module has not loaded: the plain href still works.
//
// Installed once per tab by the board (board.js, with watchWide).

const installed = new WeakSet();

/** Whether a click on `a` may be handled in place (a plain left click, same origin). */
export function inPlace(event, a, location) {
  if (!a || event.defaultPrevented || event.button !== 0) return false;
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return false;
  if (a.target && a.target !== "_self") return false;
  const url = new URL(a.getAttribute("href"), location.href);
  return url.origin === location.origin;
}

/** Listen on `doc` for clicks on in-app links (once per document). */
export function watchNavLinks(doc) {
  if (!doc || installed.has(doc)) return;
  installed.add(doc);
  const win = doc.defaultView;
  doc.addEventListener("click", (event) => {
    const a = event.target && event.target.closest ? event.target.closest("a[data-attnviz-nav]") : null;
    if (!inPlace(event, a, win.location)) return;
    event.preventDefault();
    const url = new URL(a.getAttribute("href"), win.location.href);
    win.history.pushState(null, "", url.pathname + url.search + url.hash);
    win.dispatchEvent(new win.PopStateEvent("popstate"));
    win.scrollTo(0, 0);
  });
}
