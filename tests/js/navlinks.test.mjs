// navlinks.js (run by tests/ui/test_board_js.py: node --test tests/js/): which clicks on an
// in-app link are followed within the session, and that one is followed by pushState and a
// popstate event (the way Streamlit's front end hears of a new URL), not by the browser.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  LIVE_ID,
  PROGRESS,
  announcement,
  inPlace,
  keepProgress,
  keyLink,
  progressUrl,
  safePath,
  watchAnnouncements,
  watchNavLinks,
} from "../../attnviz/ui/board/js/navlinks.js";

const location = { href: "http://h:8501/playground?N=4", origin: "http://h:8501" };
const link = (href, target = "_self") => ({ getAttribute: () => href, target });
const click = (more = {}) => ({ button: 0, defaultPrevented: false, ...more });

test("a plain click on a same-origin link is followed in place", () => {
  assert.equal(inPlace(click(), link("./masking?N=6&lesson=intro&stop=2"), location), true);
});

test("a new tab, another origin, another target or another button is left to the browser", () => {
  const a = link("./masking?N=6");
  assert.equal(inPlace(click({ ctrlKey: true }), a, location), false);
  assert.equal(inPlace(click({ metaKey: true }), a, location), false);
  assert.equal(inPlace(click({ shiftKey: true }), a, location), false);
  assert.equal(inPlace(click({ button: 1 }), a, location), false);
  assert.equal(inPlace(click({ defaultPrevented: true }), a, location), false);
  assert.equal(inPlace(click(), link("https://example.com/x"), location), false);
  assert.equal(inPlace(click(), link("./masking", "_blank"), location), false);
  assert.equal(inPlace(click(), null, location), false);
});

test("a followed link pushes its address and tells the page by popstate", () => {
  const calls = [];
  const handlers = {};
  const win = {
    location,
    history: { pushState: (s, t, url) => calls.push(["push", url]) },
    dispatchEvent: (e) => calls.push(["event", e.type]),
    PopStateEvent: class {
      constructor(type) {
        this.type = type;
      }
    },
    scrollTo: () => calls.push(["scroll"]),
  };
  const doc = { defaultView: win, addEventListener: (type, fn) => (handlers[type] = fn) };
  watchNavLinks(doc);
  watchNavLinks(doc); // once per document
  const a = link("./masking?N=6&stop=2");
  let prevented = false;
  handlers.click({
    ...click(),
    target: { closest: () => a },
    preventDefault: () => (prevented = true),
  });
  assert.equal(prevented, true);
  assert.deepEqual(calls, [["push", "/masking?N=6&stop=2"], ["event", "popstate"], ["scroll"]]);
});

test("PageDown follows the lesson's link only when no enabled button answers PageDown", () => {
  const next = { key: "PageDown" };
  const doc = (buttons) => ({
    querySelector: (sel) => (sel.includes('data-attnviz-key="PageDown"') ? next : null),
    querySelectorAll: () => buttons.map((t) => ({ textContent: t })),
  });
  const dom = { shortcut_button: "button:not([disabled])" };
  assert.equal(keyLink(doc([]), "PageDown", dom), next); // the page's last step: Next disabled
  assert.equal(keyLink(doc(["Next→PageDown"]), "PageDown", dom), null); // its steps go first
  assert.equal(keyLink(doc(["Previous PageUp"]), "PageDown", dom), next);
  assert.equal(keyLink(doc([]), "PageUp", dom), null); // no link marked PageUp
  assert.equal(keyLink(doc([]), "ArrowRight", dom), null);
});

/** A page whose tour bar names `said.text` (none: no tour), with a body and an observer. */
function tourPage(said) {
  const made = {};
  const observers = [];
  const win = {
    MutationObserver: class {
      constructor(fn) {
        this.fn = fn;
        observers.push(this);
      }
      observe() {}
    },
    setTimeout: (fn) => fn(),
  };
  const doc = {
    defaultView: win,
    querySelector: () =>
      said.text === null ? null : { getAttribute: () => said.text },
    getElementById: (id) => made[id] || null,
    createElement: () => ({ setAttribute(k, v) { this[k] = v; }, textContent: "" }),
    body: { appendChild: (e) => (made[e.id] = e) },
  };
  const mutate = () => observers.forEach((o) => o.fn([]));
  return { doc, made, mutate };
}

test("the stop named on the page is said only when it changes", () => {
  const said = { text: "Stop 2 of 12: Queries" };
  const { doc } = tourPage(said);
  assert.equal(announcement(doc, ""), "Stop 2 of 12: Queries");
  assert.equal(announcement(doc, "Stop 2 of 12: Queries"), null);
  said.text = null;
  assert.equal(announcement(doc, "Stop 2 of 12: Queries"), null); // no tour on this page
});

test("Next writes the new stop into one polite live region", () => {
  const said = { text: "Stop 2 of 12: Queries" };
  const { doc, made, mutate } = tourPage(said);
  watchAnnouncements(doc);
  const live = made[LIVE_ID];
  assert.equal(live.role, "status");
  assert.equal(live["aria-live"], "polite");
  assert.equal(live.textContent, ""); // the page just opened is read as a page
  mutate(); // a rerun of the same stop: nothing new to say
  assert.equal(live.textContent, "");
  said.text = "Stop 3 of 12: Scores";
  mutate();
  assert.equal(live.textContent, "Stop 3 of 12: Scores");
  said.text = null; // a page switch on its way: the old bar gone, the new not yet there
  mutate();
  assert.equal(live.textContent, "Stop 3 of 12: Scores");
});

test("a tour's progress is its address without a class's keys", () => {
  const at = { pathname: "/masking", search: "?N=6&lesson=intro&stop=4&class=ABC&teacher=k&answered=3-1" };
  assert.equal(progressUrl(at), "/masking?N=6&lesson=intro&stop=4&answered=3-1");
  assert.equal(progressUrl({ pathname: "/", search: "" }), "/");
  assert.equal(safePath("/masking?stop=2"), "/masking?stop=2");
  for (const bad of ["//evil.example/x", "/\\evil", "https://evil.example", "javascript:x", null]) {
    assert.equal(safePath(bad), null, String(bad));
  }
});

test("the bar's lesson saves its progress; the Lessons page's resume link shows it", () => {
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const bar = { getAttribute: () => "intro" };
  const at = { pathname: "/step_by_step", search: "?lesson=intro&stop=3&teacher=k" };
  const tourPage = { querySelector: () => bar, querySelectorAll: () => [] };
  keepProgress(tourPage, storage, at);
  assert.equal(store.get(PROGRESS + "intro"), "/step_by_step?lesson=intro&stop=3");
  const link = (slug) => ({
    hidden: true,
    href: "./step_by_step?lesson=" + slug + "&stop=1",
    getAttribute(name) {
      return name === "data-attnviz-resume" ? slug : this.href;
    },
    setAttribute(name, v) {
      this.href = v;
    },
  });
  const intro = link("intro");
  const other = link("learned_heads");
  const lessonsPage = { querySelector: () => null, querySelectorAll: () => [intro, other] };
  // a page switch to the Lessons page: its address comes before Streamlit replaces the old
  // page's elements, the tour's bar still there for a moment: nothing saved under it
  keepProgress(tourPage, storage, { pathname: "/lessons", search: "" });
  assert.equal(store.get(PROGRESS + "intro"), "/step_by_step?lesson=intro&stop=3");
  keepProgress(tourPage, storage, { pathname: "/", search: "?lesson=learned_heads&stop=2" });
  assert.equal(store.get(PROGRESS + "intro"), "/step_by_step?lesson=intro&stop=3");
  keepProgress(lessonsPage, storage, { pathname: "/lessons", search: "" });
  assert.equal(intro.hidden, false);
  assert.equal(intro.href, "/step_by_step?lesson=intro&stop=3");
  assert.equal(other.hidden, true); // nothing kept for it: the link stays hidden
  assert.equal(store.size, 1); // the Lessons page saves nothing
  const refusing = { getItem: () => { throw new Error("denied"); }, setItem: () => {} };
  keepProgress(tourPage, refusing, at); // no storage: nothing happens, nothing thrown
});
