// In-app links that move within the session (a lesson's Back / Next, its summary's stops:
// attnviz.ui.tour): a click on `a[data-attnviz-nav]` with a same-origin address goes there
// as the browser's back and forward buttons do (history.pushState, then a popstate event):
// Streamlit's front end reads the new URL and asks the server for that page and its
// settings, with plotly.js, the board and the session already there. A page switch, not a
// new visit. Any other click (a modifier key: a new tab; another origin) is left to the
// browser, and so is a link while this module has not loaded: the plain href still works.
//
// On a slide (the presenter view), PageDown / PageUp (what presentation remotes send) follow
// the link marked data-attnviz-key="PageDown" / "PageUp" (a lesson's Next / Back) when no
// enabled button of the page answers that key (a page's own steps first: Streamlit's step
// buttons carry the shortcut, and the last step's Next is disabled).
//
// A stop change is said to a screen reader: the tour's bar names its stop in
// data-attnviz-announce ("Stop 3 of 12: Scores ..."); when that text changes (Next, Back, a
// PageDown across pages), it is written into one polite live region of the document, made
// here once per tab outside Streamlit's elements (a live region must be in the page before
// its text changes to be read; Streamlit's own elements are replaced on a page switch).
//
// A tour's progress is kept in the browser's storage too (localStorage, per lesson: the
// stop's address, with the answers, without a teacher's class key): the bar names its lesson
// (data-attnviz-lesson) and the address is saved as it changes; the Lessons page's hidden
// "Resume where you left off" link of that lesson (data-attnviz-resume) is shown with it.
// Without storage (a private window, refused) the link holds the progress, as before.
//
// Installed once per tab by the board (board.js, with watchWide; `dom`: Streamlit's markup
// named in attnviz/ui/streamlit_private.py, BOARD_DOM).

const installed = new WeakSet();
/** The element naming the tour's stop, and the live region's id. */
export const ANNOUNCE = "[data-attnviz-announce]";
export const LIVE_ID = "attnviz-lesson-live";
/** The storage key of a lesson's progress; the link parameters never saved (a live class's). */
export const PROGRESS = "attnviz-lesson:";
const NOT_SAVED = ["class", "teacher", "student"];

/** Whether a click on `a` may be handled in place (a plain left click, same origin). */
export function inPlace(event, a, location) {
  if (!a || event.defaultPrevented || event.button !== 0) return false;
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return false;
  if (a.target && a.target !== "_self") return false;
  const url = new URL(a.getAttribute("href"), location.href);
  return url.origin === location.origin;
}

/** Go to in-app link `a` within the session (pushState, then popstate). */
function follow(win, a) {
  const url = new URL(a.getAttribute("href"), win.location.href);
  win.history.pushState(null, "", url.pathname + url.search + url.hash);
  win.dispatchEvent(new win.PopStateEvent("popstate"));
  win.scrollTo(0, 0);
}

/** The link a key should follow: one marked with that key, unless an enabled button with a
 * keyboard shortcut for the same key is on the page (it goes first). */
export function keyLink(doc, key, dom) {
  if (key !== "PageDown" && key !== "PageUp") return null;
  const a = doc.querySelector(`a[data-attnviz-nav][data-attnviz-key="${key}"]`);
  if (!a) return null;
  const selector = dom && dom.shortcut_button;
  const buttons = selector ? [...doc.querySelectorAll(selector)] : [];
  return buttons.some((b) => (b.textContent || "").includes(key)) ? null : a;
}

/** What the live region should say now: the stop named on the page if it is not `last`
 * (the text said before), else null (nothing new; no tour on the page). */
export function announcement(doc, last) {
  const el = doc.querySelector(ANNOUNCE);
  const text = el ? (el.getAttribute("data-attnviz-announce") || "").trim() : "";
  return text && text !== last ? text : null;
}

/** The address to save for the tour on the page at `location` (its path and link, without
 * a class's parameters). */
export function progressUrl(location) {
  const params = new URLSearchParams(location.search);
  NOT_SAVED.forEach((k) => params.delete(k));
  const query = params.toString();
  return location.pathname + (query ? `?${query}` : "");
}

/** A saved address that may be followed: a path of this site (not "//host", not a scheme). */
export function safePath(value) {
  return typeof value === "string" && /^\/(?![\/\\])/.test(value) ? value : null;
}

/** Save the progress of the tour on the page (if any) in `storage`; show the Lessons page's
 * resume links of the lessons with saved progress. Storage errors leave things as they are. */
export function keepProgress(doc, storage, location) {
  try {
    const bar = doc.querySelector("[data-attnviz-lesson]");
    const slug = bar && bar.getAttribute("data-attnviz-lesson");
    // only the address of that lesson's tour: a page switch changes the address before
    // Streamlit replaces the old page's elements, and the old bar, still there for a moment
    // under the Lessons page's address, saved "/lessons" as the lesson's progress
    if (slug && new URLSearchParams(location.search).get("lesson") === slug) {
      const key = PROGRESS + slug;
      const url = progressUrl(location);
      if (storage.getItem(key) !== url) storage.setItem(key, url);
    }
    for (const a of doc.querySelectorAll("a[data-attnviz-resume][hidden]")) {
      const url = safePath(storage.getItem(PROGRESS + a.getAttribute("data-attnviz-resume")));
      if (!url) continue;
      a.setAttribute("href", url);
      a.hidden = false;
    }
  } catch (e) {
    /* no storage: the link alone holds the progress */
  }
}

/** The document's live region for a lesson's stops (made once; sr-only, board.css). */
function liveRegion(doc) {
  let live = doc.getElementById(LIVE_ID);
  if (!live) {
    live = doc.createElement("div");
    live.id = LIVE_ID;
    live.className = "attnviz-sr-only";
    live.setAttribute("role", "status");
    live.setAttribute("aria-live", "polite");
    live.setAttribute("aria-atomic", "true");
    doc.body.appendChild(live);
  }
  return live;
}

/** Say each new stop of a lesson in the live region, once (a rerun of the same stop says
 * nothing; a stop already on the page when this module starts is not said), and keep the
 * tour's progress (keepProgress). */
export function watchAnnouncements(doc) {
  const win = doc.defaultView;
  if (!doc.body || !win || !win.MutationObserver) return;
  const live = liveRegion(doc);
  let last = announcement(doc, null) || "";
  let pending = false;
  const storage = (() => {
    try {
      return win.localStorage;
    } catch (e) {
      return null; // refused (a sandbox, a policy)
    }
  })();
  const check = () => {
    pending = false;
    if (storage) keepProgress(doc, storage, win.location);
    const text = announcement(doc, last);
    if (text === null) return;
    last = text;
    live.textContent = text;
  };
  check();
  // Streamlit's runs change the page a lot: one look per 100 ms at most
  new win.MutationObserver(() => {
    if (!pending) {
      pending = true;
      win.setTimeout(check, 100);
    }
  }).observe(doc.body, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["data-attnviz-announce"],
  });
}

/** Listen on `doc` for clicks on in-app links and their keys (once per document), and say
 * each new stop of a lesson (watchAnnouncements). */
export function watchNavLinks(doc, dom) {
  if (!doc || installed.has(doc)) return;
  installed.add(doc);
  const win = doc.defaultView;
  watchAnnouncements(doc);
  doc.addEventListener("click", (event) => {
    const a = event.target && event.target.closest ? event.target.closest("a[data-attnviz-nav]") : null;
    if (!inPlace(event, a, win.location)) return;
    event.preventDefault();
    follow(win, a);
  });
  doc.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const a = keyLink(doc, event.key, dom);
    if (!a) return;
    event.preventDefault();
    follow(win, a);
  });
}
