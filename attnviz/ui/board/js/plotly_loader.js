// plotly.js, loaded once per browser tab and shared by every board of every page.
//
// The file is plotly.js with the trace types attnviz draws, vendored beside this module
// (attnviz/ui/board/js/vendor/plotly-attnviz-<version>.min.js, the version the installed plotly
// Python package expects; see attnviz/ui/board/assets.py), at a content-versioned URL
// (?v=<digest>). A page switch in Streamlit keeps the document, so
// this module (an ES module: one instance per tab) and window.Plotly stay: the second
// board, and every board of the next page, reuse the promise below and fetch nothing.
//
// Across tabs and visits: Streamlit serves component files with `Cache-Control: public`
// and no max-age nor validator, so the browser's HTTP cache would download the 0.4 MB
// again in every new tab. The text is therefore also kept in IndexedDB (works on plain
// http, unlike the Cache API), under its content-versioned URL: a new tab reads it from
// there; a new plotly (new digest, new URL) is fetched once and replaces it. Without
// IndexedDB (private windows of some browsers) the script is fetched as before. Behind
// deploy/haproxy.cfg the URL also gets a one-year immutable max-age.
//
// A first visit: served by serve.py, the page's HTML starts the download as the document
// loads and runs plotly.js as it arrives (attnviz/ui/board/shell.py), ~0.9 s before this
// module runs; load() then finds window.Plotly and keeps the text in IndexedDB.

const DB = "attnviz-board";
const STORE = "files";
let loading = null;
// where plotly.js came from (tests, bench): "early" (the page's inline script fetched and
// ran it), "indexeddb", "network"
export const stats = { source: null, ms: 0 };

function openDb() {
  return new Promise((resolve) => {
    let req;
    try {
      req = indexedDB.open(DB, 1);
    } catch (e) {
      resolve(null);
      return;
    }
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => resolve(null);
    req.onblocked = () => resolve(null);
  });
}

function idb(db, mode, fn) {
  return new Promise((resolve) => {
    try {
      const tx = db.transaction(STORE, mode);
      const req = fn(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req ? req.result : null);
      tx.onerror = () => resolve(null);
      tx.onabort = () => resolve(null);
    } catch (e) {
      resolve(null);
    }
  });
}

async function cachedText(key) {
  const db = await openDb();
  if (!db) return { db: null, text: null };
  const text = await idb(db, "readonly", (s) => s.get(key));
  return { db, text: typeof text === "string" ? text : null };
}

function keep(db, key, text) {
  if (!db) return;
  // only the current version: older ones are dropped
  idb(db, "readwrite", (s) => {
    s.clear();
    return s.put(text, key);
  });
}

function run(src, url) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.async = true;
    script.dataset.attnviz = "plotly";
    script.dataset.url = url;
    script.onload = () => resolve();
    script.onerror = () => {
      script.remove();
      reject(new Error(`plotly.js could not be loaded from ${url}`));
    };
    document.head.appendChild(script);
  });
}

/** What the page's inline script started as the document loaded (attnviz/ui/board/shell.py:
 * window.__attnvizEarlyPlotly, under the same key): the promises of plotly.js's text and of
 * its run, or null (none, another version). Taken once. */
function takeEarly(key) {
  const got = window.__attnvizEarlyPlotly;
  if (!got || got.key !== key) return null;
  window.__attnvizEarlyPlotly = null;
  return got;
}

/** Resolves to window.Plotly if the early script's run gave it (in `version`), keeping its
 * text in IndexedDB for the next tab; null where it did not (then the loader fetches). */
async function fromEarly(got, key, version) {
  let text = null;
  let ran = false;
  try {
    [text, ran] = await Promise.all([got.text, got.ran]);
  } catch (e) {
    return null;
  }
  const P = window.Plotly;
  if (!ran || typeof text !== "string" || !P || (version && P.version !== version)) return null;
  keep(await openDb(), key, text);
  return P;
}

async function load(url, version) {
  const t0 = performance.now();
  const key = new URL(url).pathname + new URL(url).search; // same server, any host name
  const got = takeEarly(key);
  if (got) {
    const P = await fromEarly(got, key, version);
    if (P) {
      stats.source = "early";
      stats.ms = performance.now() - t0;
      return P;
    }
  }
  const { db, text } = await cachedText(key);
  if (text) {
    const blob = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    try {
      await run(blob, url);
      stats.source = "indexeddb";
    } finally {
      URL.revokeObjectURL(blob);
    }
  } else {
    let body = null;
    if (db) {
      const res = await fetch(url);
      if (!res.ok) throw new Error(`plotly.js could not be loaded from ${url}: ${res.status}`);
      body = await res.text();
    }
    if (body !== null) {
      const blob = URL.createObjectURL(new Blob([body], { type: "text/javascript" }));
      try {
        await run(blob, url);
      } finally {
        URL.revokeObjectURL(blob);
      }
    } else {
      await run(url, url); // no IndexedDB: the browser's HTTP cache only
    }
    stats.source = "network";
    const P = window.Plotly;
    if (body !== null && P && (!version || P.version === version)) keep(db, key, body);
  }
  stats.ms = performance.now() - t0;
  const P = window.Plotly;
  if (!P) throw new Error(`expected window.Plotly after loading ${url}, found none`);
  if (version && P.version !== version)
    throw new Error(`expected plotly.js v${version} from ${url}, got v${P.version}`);
  return P;
}

/** Resolves to window.Plotly, loading `spec.src` (relative to this module) the first time;
 * `spec.version`: the plotly.js version it must be (ui/board.py's PLOTLY). */
export function loadPlotly(spec) {
  const { src, version } = spec || {};
  const early = window.__attnvizEarlyPlotly; // its text still to be kept: through load()
  if (!early && window.Plotly && (!version || window.Plotly.version === version)) {
    return Promise.resolve(window.Plotly);
  }
  if (!loading) {
    loading = load(new URL(src, import.meta.url).href, version).catch((e) => {
      loading = null; // a later board may try again (e.g. the server was restarting)
      throw e;
    });
  }
  return loading;
}
