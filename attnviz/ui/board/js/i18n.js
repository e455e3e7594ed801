// The board's words in the shown language: the catalog Python hands to the preload board
// (ui.board.preload_plotly: {lang, dir, separators, plural, messages} or, served by
// serve.py, {lang, dir, separators, plural, catalog: its URL}), read by every chart module
// through _() and ngettext(), as attnviz.i18n does in Python (docs/translating.md).
// A catalog's URL is fetched once per tab (content-versioned: the browser's cache keeps it
// across page loads) instead of riding along with every rerun (issue 46); the language
// changes when its catalog has come, all at once (its plural categories index its
// messages), and ready() says when: a board draws after it. A missing catalog leaves the
// board's English. A message missing from the catalog is its English. Placeholders are
// named: fill them with fill(_("{n} rows"), {n: 4}).

let locale = { lang: "en", dir: "ltr", separators: ".,", plural: ["one", "other"], messages: {} };
let rules = null;
let wanted = null; // the last locale asked for (its catalog's URL, if any)
let loading = Promise.resolve();
const catalogs = new Map(); // URL -> Promise of its messages (once per tab)
const listeners = new Set();

function apply(loc, messages) {
  const before = locale.lang;
  locale = Object.assign({}, locale, loc, { messages: messages || {} });
  delete locale.catalog;
  rules = null;
  if (locale.lang !== before) {
    for (const fn of listeners) {
      try {
        fn(locale.lang);
      } catch (e) {
        console.warn(e);
      }
    }
  }
}

/** `fn(lang)` whenever the shown language changes (its catalog in use); returns its remover. */
export function onLocale(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function fetchCatalog(url) {
  if (!catalogs.has(url)) {
    const p = fetch(url, { credentials: "same-origin" }).then((r) => {
      if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
      return r.json();
    });
    p.catch(() => catalogs.delete(url)); // asked again on the next rerun
    catalogs.set(url, p);
  }
  return catalogs.get(url);
}

/** Take the shown language (the preload board's `locale`); returns ready(). */
export function setLocale(loc) {
  if (!loc) return loading;
  const key = JSON.stringify(Object.assign({}, loc, { messages: undefined }));
  if (key === wanted && !loc.messages) return loading; // every rerun sends it again
  wanted = key;
  if (!loc.catalog) {
    apply(loc, loc.messages);
    loading = Promise.resolve();
    return loading;
  }
  loading = fetchCatalog(loc.catalog).then(
    (messages) => {
      if (wanted === key) apply(loc, messages);
    },
    (e) => {
      console.warn("attnviz: the board's catalog could not be loaded; its English stays", e);
      if (wanted === key) {
        apply(loc, {});
        wanted = null; // fetched again with the next rerun
      }
    },
  );
  return loading;
}

/** Resolves when the language last set is in use (its catalog fetched). */
export function ready() {
  return loading;
}

export function lang() {
  return locale.lang;
}

/** "rtl" for a language written right to left, else "ltr". */
export function dir() {
  return locale.dir;
}

export function separators() {
  return locale.separators;
}

/** `message` in the shown language. */
export function _(message) {
  const t = locale.messages[message];
  return typeof t === "string" && t ? t : Array.isArray(t) && t[0] ? t[0] : message;
}

/** `message` itself, marked for the catalog: translated where it is shown, by `_`. */
export function N_(message) {
  return message;
}

/** The form of `singular`/`plural` for a count `n` by the language's plural rules. */
export function ngettext(singular, plural, n) {
  const t = locale.messages[singular];
  if (!Array.isArray(t) || !t.length) return n === 1 ? singular : plural;
  if (!rules) rules = new Intl.PluralRules(locale.lang.replace("_", "-"));
  const i = locale.plural.indexOf(rules.select(n));
  return t[i >= 0 && i < t.length ? i : t.length - 1] || (n === 1 ? singular : plural);
}

/** `{name}` placeholders of `text` filled from `values`. */
export function fill(text, values) {
  return String(text).replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
}

/** `x.toFixed(digits)` with the shown language's decimal sign. */
export function fmtNum(x, digits) {
  const s = Number(x).toFixed(digits);
  const dec = locale.separators[0];
  return dec === "." ? s : s.replace(".", dec);
}
