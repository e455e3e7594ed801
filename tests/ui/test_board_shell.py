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


def test_a_right_to_left_page_runs_right_to_left_from_its_first_paint():
    """An Arabic page's <html> is lang="ar" data-dir="rtl" from the first byte, with the rules
    of board.css that it selects in its <head>: board.css itself comes with the first board,
    and until then the page showed left to right (1-3 s). Other languages: their lang only."""
    ar = shell.page_html("ar").decode()
    css = shell.rtl_css()
    assert '<html lang="ar" data-dir="rtl">' in ar
    assert ar.index(f"<style>{css}</style>") < ar.index("</head>")
    rules = [r.split("{")[0] for r in css.split("}") if r.strip()]
    selectors = [s.strip() for r in rules for s in r.split(",")]
    assert len(rules) >= 8 and all(s.startswith('html[data-dir="rtl"] ') for s in selectors)
    board = (STATIC / "board.css").read_text(encoding="utf-8")
    for rule in ('[data-testid="stSidebarContent"] { direction: rtl; }', ".attnviz-bar {"):
        assert rule in board and rule in css
    es = shell.page_html("es").decode()
    assert '<html lang="es">' in es and "<style>" not in es
    assert shell.page_html("zh_CN").decode().count('<html lang="zh-CN">') == 1
