"""attnviz served: Streamlit's pages (``app.py``) and the live class's light student page
(``attnviz.classroom.web``: ``/join``, no Streamlit session) in one ASGI app; each page's URL
answers with Streamlit's page that asks for plotly.js at once (``attnviz.ui.board.shell``).
``streamlit run serve.py`` finds ``app`` and serves it (``scripts/run.sh``, the image and the
``attnviz`` command do).
"""

import threading
from pathlib import Path

import streamlit as st
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from attnviz.classroom import web
from attnviz.classroom.web import words
from attnviz.engine import fast_exp
from attnviz.ui import sockets
from attnviz.ui.board import shell

# numba's exp loop loaded (or compiled) while the server starts, not in a first visit
threading.Thread(target=fast_exp.warm, name="attnviz-warm-exp", daemon=True).start()


async def page(request: Request) -> HTMLResponse:
    """A page's URL: Streamlit's page, asking for plotly.js at once, in the language the app
    will show (``?lang=``, else Accept-Language); no-cache, as Streamlit's."""
    lang = words.language(request)  # as the class's light pages pick it
    return HTMLResponse(shell.page_html(lang), headers={"Cache-Control": "no-cache"})


pages = [Route(path, page, methods=["GET", "HEAD"]) for path in shell.paths()]
# lifespan: every connection sends a small message at once (attnviz.ui.sockets), and a
# stopping server answers the phones' waiting long polls at once (attnviz.classroom.web)
app = st.App(
    Path(__file__).with_name("app.py"),
    routes=[*web.routes(), *pages],
    lifespan=sockets.lifespan(web.lifespan),
)
