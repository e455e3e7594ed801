"""The pages' HTML: Streamlit's ``index.html`` that asks for plotly.js at once.

A first visit's charts wait for plotly.js (0.4 MB), which the board asks for when React
mounts its first board: ~0.9 s after the page's first content, once Streamlit's lazily
loaded chunks have arrived (docs/benchmarks.md, "Where the time goes"). ``serve.py`` serves
each page's URL (``/``, ``/<slug>``) with Streamlit's own ``index.html`` and one inline
script more, :data:`EARLY_JS`: it starts plotly.js's download as the document loads, unless
the tab's IndexedDB already holds that version (a second tab, a later visit: no second
download), and leaves the promise of its text in ``window.__attnvizEarlyPlotly``, which
``js/plotly_loader.js`` takes instead of fetching. Everything else of the page is
Streamlit's, unchanged; a bare ``streamlit run app.py`` serves Streamlit's file as it is
and the board fetches plotly.js itself, as before. No web framework here: ``serve.py`` makes
the routes (starlette stays with the server and the class's light pages).
"""

from __future__ import annotations

import functools
import json

from attnviz.ui import pages, streamlit_private
from attnviz.ui.board import NAME, PLOTLY

#: Run as the document is parsed: plotly.js asked for unless IndexedDB has this version.
#: Its URL is relative to the page (Streamlit's own assets are, so a base URL path works),
#: its key the one ``plotly_loader.js`` stores it under (path and query).
EARLY_JS = """<script>
(function () {
  var u = new URL(%(src)s, location.href), key = u.pathname + u.search;
  function go() {
    window.__attnvizEarlyPlotly = { key: key, text: fetch(u.href).then(function (r) {
      return r.ok ? r.text() : null; }).catch(function () { return null; }) };
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


def plotly_path() -> str:
    """plotly.js's URL relative to a page: where Streamlit serves the board's files
    (components v2: ``_stcore/bidi-components/<component>/``) and its versioned name."""
    return f"./_stcore/bidi-components/{NAME}/{PLOTLY['src']}"


@functools.cache
def page_html() -> bytes:
    """Streamlit's ``index.html`` with :data:`EARLY_JS` at the end of its ``<head>`` (run as
    the head is parsed, before Streamlit's module scripts, which wait for the document)."""
    html = streamlit_private.index_html()
    script = EARLY_JS % {"src": json.dumps(plotly_path())}
    end = html.index("</head>")
    return (html[:end] + script + html[end:]).encode()


def paths() -> list[str]:
    """Every page's URL path (the default page's is ``/``): ``serve.py`` answers each with
    :func:`page_html`, no-cache as Streamlit answers its own ``index.html``."""
    return ["/", *(f"/{p.slug}" for p in pages.PAGES)]
