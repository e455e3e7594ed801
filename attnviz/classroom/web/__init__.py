"""The live class's light pages: what a student's phone opens, served by the same server as
Streamlit's pages but without a Streamlit session (Starlette routes, ``serve.py``).

No Streamlit and no plotly here: :mod:`~attnviz.classroom.web.student` (the routes),
:mod:`~attnviz.classroom.web.hub` (one class's state shared by every phone, the long poll),
:mod:`~attnviz.classroom.web.guard` (same origin, sizes, rates),
:mod:`~attnviz.classroom.web.render` and
:mod:`~attnviz.classroom.web.mathml` (the exercises' text and formulas as HTML and MathML),
:mod:`~attnviz.classroom.web.words` (the page's words in its language), and the page's own files in
``static/``. Beside them, :mod:`~attnviz.classroom.web.catalog`: the chart board's catalog
of a language, fetched by the board once per tab (issue 46).
"""

from starlette.routing import Route

from attnviz.classroom.web import catalog, student
from attnviz.classroom.web.student import lifespan


def routes() -> list[Route]:
    """Every route of ``serve.py`` beside Streamlit's pages: the student page's and the
    board's catalogs."""
    return [*student.routes(), *catalog.routes()]


__all__ = ["lifespan", "routes"]
