"""The pages' HTML (attnviz/ui/board/shell.py): Streamlit's index.html, plus the script that
asks for plotly.js as the document loads, served at every page's URL by serve.py."""

from __future__ import annotations

import re

from attnviz.ui import pages, streamlit_private
from attnviz.ui.board import PLOTLY, STATIC, shell


def test_every_page_url_gets_streamlit_page_with_the_early_script():
    assert shell.paths() == ["/", *(f"/{p.slug}" for p in pages.PAGES)]
    html = shell.page_html().decode()
    script = shell.EARLY_JS % {"src": f'"{shell.plotly_path()}"'}
    added = shell.preload_links() + script
    # Streamlit's page whole, the board's preloads and the early script its only addition,
    # inside its <head>
    assert html.replace(added, "") == streamlit_private.index_html()
    assert html.index("<head>") < html.index(added) < html.index("</head>")
    assert re.search(r'<script type="module"[^>]*src="\./static/js/index\.', html)


def test_the_early_url_is_the_one_the_board_loads_and_its_key_the_loaders():
    path = shell.plotly_path()
    # the board's modules live at _stcore/bidi-components/<component>/ (components v2) and
    # load plotly.js at PLOTLY["src"], relative to themselves (js/plotly_loader.js)
    assert path == f"./_stcore/bidi-components/attnviz.board/{PLOTLY['src']}"
    assert re.fullmatch(r"vendor/plotly-[\w.-]+\.min\.js\?v=[0-9a-f]+", PLOTLY["src"])
    # the IndexedDB key and the early promise's key: path and query, as plotly_loader.js
    assert "key = u.pathname + u.search" in shell.EARLY_JS
    loader = shell.__file__.rsplit("/", 1)[0] + "/js/plotly_loader.js"
    with open(loader, encoding="utf-8") as f:
        js = f.read()
    assert "new URL(url).pathname + new URL(url).search" in js
    assert "indexedDB.open(DB, 1)" in js and 'const DB = "attnviz-board"' in js
    assert 'indexedDB.open("attnviz-board", 1)' in shell.EARLY_JS
    assert "window.__attnvizEarlyPlotly" in js


def test_every_board_module_the_app_loads_is_preloaded_from_where_streamlit_serves_it():
    links = re.findall(r'<link rel="modulepreload" href="([^"]+)">', shell.preload_links())
    modules = {p.name for p in STATIC.glob("*.js")} - set(shell.NOT_PRELOADED)
    assert {"board.js", "fit.js", "draw.js", "figure.js", "plotly_loader.js"} <= modules
    assert sorted(links) == sorted(f"./_stcore/bidi-components/attnviz.board/{m}" for m in modules)
    assert not any("example_module" in x for x in links)  # the browser tests' own module
