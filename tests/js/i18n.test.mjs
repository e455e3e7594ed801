// i18n.js (run by tests/ui/test_board_js.py: node --test tests/js/): the board's catalog
// fetched by its URL once per tab, taken all at once when it has come (its plural categories
// index its messages), a switch of language, a failed fetch (the board's English stays, asked
// again), and the inline catalog of a server without the route. One module instance: the
// tests run in order and each sets the language it needs.
import assert from "node:assert/strict";
import { test } from "node:test";

import { _, lang, ngettext, onLocale, ready, separators, setLocale } from "../../attnviz/ui/board/js/i18n.js";

const CATALOGS = {
  "/_attnviz/catalog/es.json?v=1": { Rows: "Filas", "{n} row": ["{n} fila", "{n} filas"] },
  "/_attnviz/catalog/ar.json?v=2": { Rows: "صفوف" },
};
const asked = [];
let failing = false;
globalThis.fetch = async (url) => {
  asked.push(url);
  if (failing || !(url in CATALOGS)) return { ok: false, status: 404, json: async () => ({}) };
  return { ok: true, status: 200, json: async () => CATALOGS[url] };
};
const es = { lang: "es", dir: "ltr", separators: ",.", plural: ["one", "many", "other"] };
const ar = { lang: "ar", dir: "rtl", separators: ".,", plural: ["zero", "one", "two", "few", "many", "other"] };

test("a catalog's URL is fetched, and the language changes only when it has come", async () => {
  const heard = [];
  const stop = onLocale((l) => heard.push(l));
  const p = setLocale({ ...es, catalog: "/_attnviz/catalog/es.json?v=1" });
  assert.equal(_("Rows"), "Rows"); // not yet: still English, its separators too
  assert.equal(separators(), ".,");
  await p;
  await ready();
  assert.equal(lang(), "es");
  assert.equal(_("Rows"), "Filas");
  assert.equal(separators(), ",.");
  assert.equal(ngettext("{n} row", "{n} rows", 1), "{n} fila");
  assert.equal(ngettext("{n} row", "{n} rows", 5), "{n} filas");
  assert.deepEqual(heard, ["es"]);
  stop();
});

test("every rerun sends the same locale again: fetched once per tab", async () => {
  const before = asked.length;
  for (let i = 0; i < 5; i++) await setLocale({ ...es, catalog: "/_attnviz/catalog/es.json?v=1" });
  assert.equal(asked.length, before);
  assert.equal(_("Rows"), "Filas");
});

test("a switch of language fetches the new catalog; back again needs no fetch", async () => {
  await setLocale({ ...ar, catalog: "/_attnviz/catalog/ar.json?v=2" });
  assert.equal(lang(), "ar");
  assert.equal(_("Rows"), "صفوف");
  assert.equal(_("{n} row"), "{n} row"); // missing from this catalog: its English
  const before = asked.length;
  await setLocale({ ...es, catalog: "/_attnviz/catalog/es.json?v=1" });
  assert.equal(asked.length, before);
  assert.equal(_("Rows"), "Filas");
});

test("the later of two quick switches wins, whichever catalog comes first", async () => {
  const first = setLocale({ ...ar, catalog: "/_attnviz/catalog/ar.json?v=2" });
  const second = setLocale({ ...es, catalog: "/_attnviz/catalog/es.json?v=1" });
  await Promise.all([first, second]);
  assert.equal(lang(), "es");
  assert.equal(_("Rows"), "Filas");
});

test("a catalog that cannot be fetched leaves the English, and is asked for again", async () => {
  failing = true;
  const warn = console.warn;
  console.warn = () => {};
  try {
    await setLocale({ ...ar, catalog: "/_attnviz/catalog/ar.json?v=3" });
    assert.equal(lang(), "ar");
    assert.equal(_("Rows"), "Rows");
    failing = false;
    CATALOGS["/_attnviz/catalog/ar.json?v=3"] = { Rows: "صفوف" };
    const before = asked.length;
    await setLocale({ ...ar, catalog: "/_attnviz/catalog/ar.json?v=3" }); // the next rerun
    assert.equal(asked.length, before + 1);
    assert.equal(_("Rows"), "صفوف");
  } finally {
    console.warn = warn;
  }
});

test("an inline catalog (a server without the route) is taken at once", () => {
  setLocale({ ...es, messages: { Rows: "Filas (inline)" } });
  assert.equal(_("Rows"), "Filas (inline)");
  setLocale({ lang: "en", dir: "ltr", separators: ".,", plural: ["one", "other"], messages: {} });
  assert.equal(lang(), "en");
  assert.equal(_("Rows"), "Rows");
});
