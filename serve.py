"""attnviz served: Streamlit's pages (``app.py``) and the live class's light student page
(``attnviz.classroom.web``: ``/join``, no Streamlit session) in one ASGI app. ``streamlit run
serve.py``
finds ``app`` and serves it (``scripts/run.sh``, the image and the ``attnviz`` command do).
"""

import threading
from pathlib import Path

import streamlit as st

from attnviz.classroom import web
from attnviz.engine import fast_exp

# numba's exp loop loaded (or compiled) while the server starts, not in a first visit
threading.Thread(target=fast_exp.warm, name="attnviz-warm-exp", daemon=True).start()

# lifespan: a stopping server answers the phones' waiting long polls at once (attnviz.classroom.web)
app = st.App(Path(__file__).with_name("app.py"), routes=web.routes(), lifespan=web.lifespan)
