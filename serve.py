"""attnviz served: Streamlit's pages (``app.py``) and the live class's light student page
(``attnviz.web``: ``/join``, no Streamlit session) in one ASGI app. ``streamlit run serve.py``
finds ``app`` and serves it (``scripts/run.sh``, the image and the ``attnviz`` command do).
"""

from pathlib import Path

import streamlit as st

from attnviz import web

# lifespan: a stopping server answers the phones' waiting long polls at once (attnviz.web)
app = st.App(Path(__file__).with_name("app.py"), routes=web.routes(), lifespan=web.lifespan)
