"""The pages' HTML: Streamlit's ``index.html`` that asks for plotly.js and the board at once.

A first visit's charts wait for plotly.js (0.4 MB), which the board asks for when React
mounts its first board: ~0.9 s after the page's first content, once Streamlit's lazily
loaded chunks have arrived (docs/benchmarks.md, "Where the time goes"); and for the
board's modules, fetched one import level after another from then on. ``serve.py`` serves
each page's URL (``/``, ``/<slug>``) with Streamlit's own ``index.html`` and, in its head,
the board's modules preloaded (:func:`preload_links`) and one inline script,
:data:`EARLY_JS`: it starts plotly.js's download as the document loads, unless the tab's
IndexedDB already holds that version (a second tab, a later visit: no second download),
and runs it as it arrives, while Streamlit's own chunks still load; it leaves the promises
of its text and its run in ``window.__attnvizEarlyPlotly``, which ``js/plotly_loader.js``
takes instead of fetching (and keeps the text in IndexedDB). Everything else of the page
is Streamlit's, unchanged; a bare ``streamlit run app.py`` serves Streamlit's file as it
is, and the board fetches plotly.js itself, as before. No web framework here: ``serve.py``
makes the routes (starlette stays with the server and the class's light pages).
"""

from __future__ import annotations

import functools
import json
import re

from attnviz import i18n
from attnviz.ui import pages, streamlit_private
from attnviz.ui.board import CSS, NAME, PLOTLY, STATIC

#: Run as the document is parsed: plotly.js asked for (and run) unless IndexedDB has this
#: version.
#: Its URL is relative to the page (Streamlit's own assets are, so a base URL path works),
#: its key the one ``plotly_loader.js`` stores it under (path and query).
EARLY_JS = """<script>
(function () {
  var u = new URL(%(src)s, location.href), key = u.pathname + u.search;
  function run(text) {
    if (text === null) return false;
    return new Promise(function (done) {
      var s = document.createElement("script");
      var b = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
      s.src = b; s.async = true; s.dataset.attnviz = "plotly"; s.dataset.url = u.href;
      s.onload = function () { URL.revokeObjectURL(b); done(true); };
      s.onerror = function () { URL.revokeObjectURL(b); s.remove(); done(false); };
      document.head.appendChild(s);
    });
  }
  function go() {
    var text = fetch(u.href).then(function (r) { return r.ok ? r.text() : null; })
      .catch(function () { return null; });
    window.__attnvizEarlyPlotly = { key: key, text: text, ran: text.then(run) };
  }
  try {
    var req = indexedDB.open("attnviz-board", 1);
    req.onupgradeneeded = function () { req.result.createObjectStore("files"); };
    req.onsuccess = function () {
      var db = req.result;
      try {
        var got = db.transaction("files", "readonly").objectStore("files").count(key);
        got.onsuccess = function () { db.close(); if (!got.result) go(); };
        got.onerror = function () { db.close(); go(); };
      } catch (e) { db.close(); go(); }
    };
    req.onerror = go;
    req.onblocked = go;
  } catch (e) { go(); }
})();
</script>
"""


#: Board modules never loaded by the app itself (the browser tests' example chart module).
NOT_PRELOADED = ("example_module.js",)


def board_dir() -> str:
    """Where Streamlit serves the board's files, relative to a page (components v2)."""
    return f"./_stcore/bidi-components/{NAME}/"


def preload_links() -> str:
    """``<link rel="modulepreload">`` for every module of the board (not its style sheet:
    the component asks for it in a way a preload does not match, so it came twice): the
    browser fetches and compiles them with Streamlit's own modules, at the document's
    start, instead of one import level after another once React mounts the first board
    (board.js, then its imports, then theirs: five round trips, ~450 ms of a first visit
    on this machine). Streamlit's own lazily loaded chunks (its widgets, the component
    host: 47 files) are not: preloaded too, they delayed the page's first content by ~300
    ms (bench/page_switch.py --first-visit: 0.84x against 0.75x)."""
    names = sorted(p.name for p in STATIC.glob("*.js") if p.name not in NOT_PRELOADED)
    links = [f'<link rel="modulepreload" href="{board_dir()}{n}">' for n in names]
    return "\n".join(links) + "\n"


def plotly_path() -> str:
    """plotly.js's URL relative to a page: where Streamlit serves the board's files
    (components v2: ``_stcore/bidi-components/<component>/``) and its versioned name."""
    return board_dir() + PLOTLY["src"]


def rtl_css() -> str:
    """``board.css``'s right-to-left rules (``html[data-dir="rtl"] ...``), comments left out."""
    text = re.sub(r"/\*.*?\*/", "", (STATIC / CSS).read_text(encoding="utf-8"), flags=re.S)
    return "".join(re.findall(r'html\[data-dir="rtl"\][^{}]*\{[^{}]*\}', text))


@functools.cache
def page_html(lang: str = i18n.SOURCE) -> bytes:
    """Streamlit's ``index.html`` with :data:`EARLY_JS` at the end of its ``<head>`` (run as
    the head is parsed, before Streamlit's module scripts, which wait for the document), in
    the language ``lang`` the request asked for: ``<html lang>`` from the first byte (the
    board sets it again), and in a right-to-left language ``data-dir="rtl"`` and the rules
    of ``board.css`` it selects, so that the first paint already runs right to left
    (``board.css`` itself comes with the first board: Arabic pages showed left to right for
    1-3 s)."""
    html = streamlit_private.index_html()
    script = EARLY_JS % {"src": json.dumps(plotly_path())}
    head = preload_links() + script
    attrs = f'lang="{i18n.html_lang(lang)}"'
    if i18n.direction(lang) == "rtl":
        attrs += ' data-dir="rtl"'
        head += f"<style>{rtl_css()}</style>\n"
    html = html.replace('<html lang="en">', f"<html {attrs}>", 1)
    end = html.index("</head>")
    return (html[:end] + head + html[end:]).encode()


def paths() -> list[str]:
    """Every page's URL path (the default page's is ``/``): ``serve.py`` answers each with
    :func:`page_html`, no-cache as Streamlit answers its own ``index.html``."""
    return ["/", *(f"/{p.slug}" for p in pages.PAGES)]
