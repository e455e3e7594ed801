// The board's words in the shown language: the catalog Python hands to the preload board
// (ui.board.preload_plotly: {lang, dir, separators, plural, messages}), read by every chart
// module through _() and ngettext(), as attnviz.i18n does in Python (docs/translating.md).
// A message missing from the catalog is its English. Placeholders are named: fill them
// with fill(_("{n} rows"), {n: 4}).

let locale = { lang: "en", dir: "ltr", separators: ".,", plural: ["one", "other"], messages: {} };
let rules = null;

/** Take the catalog of the shown language (the preload board's `locale`). */
export function setLocale(loc) {
  if (!loc) return;
  locale = Object.assign({}, locale, loc);
  rules = null;
}

export function lang() {
  return locale.lang;
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
