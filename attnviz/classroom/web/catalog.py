"""The chart board's catalog of a language over HTTP, fetched once per tab, not sent per rerun.

``GET /_attnviz/catalog/<code>.json?v=<version>``: the board's messages in ``code``
(:func:`attnviz.i18n.js_messages`, what ``attnviz/ui/board/js/i18n.js`` reads), UTF-8 JSON,
cached by the browser for a year when asked for by its version (the content's digest: a
new catalog is a new URL). Served by ``serve.py`` beside Streamlit's pages, by the server
itself (no CDN).

Why a route and not the component's data (issue 46): a board's data is sent again with
every rerun (Streamlit re-sends each element's arguments), so the catalog rode along with
every slider move (0.7 KB in English, 7.3 KB in Chinese); and the server cannot tell that
the browser already has it (a rerun overtaken by a faster one drops its queued deltas).
A URL the board fetches once per tab and language has neither problem.

:func:`served` says whether this process serves the route (``routes()`` was called, by
``serve.py``); a bare ``streamlit run app.py`` does not, and the board then gets the
messages inline, as before (:func:`attnviz.ui.lang.board_locale`). No Streamlit here.
"""

from __future__ import annotations

import functools
import hashlib
import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from attnviz import i18n

PATH = "/_attnviz/catalog"
_served = False


@functools.lru_cache(maxsize=16)
def body(code: str) -> tuple[bytes, str]:
    """The catalog of ``code`` as UTF-8 JSON and its version (a digest of it), once per
    process (the ``.po`` files are read once per process too)."""
    data = json.dumps(
        i18n.js_messages(code), ensure_ascii=False, separators=(",", ":"), sort_keys=True
    ).encode()
    return data, hashlib.sha256(data).hexdigest()[:12]


def url(code: str) -> str:
    """Where the board fetches the catalog of ``code`` (content-versioned)."""
    return f"{PATH}/{code}.json?v={body(code)[1]}"


def served() -> bool:
    """Whether this process serves :data:`PATH` (``serve.py`` called :func:`routes`)."""
    return _served


async def catalog(request: Request) -> Response:
    """``GET /_attnviz/catalog/<code>.json``: a language of the picker, else 404."""
    code = request.path_params["code"]
    headers = {"X-Content-Type-Options": "nosniff", "Vary": "Accept-Encoding"}
    if code not in i18n.available():  # read by the board's script only (i18n.js), no person
        msg = json.dumps({"error": "not_found", "catalog": code[:20]})
        headers["Cache-Control"] = "no-store"
        return Response(msg.encode(), 404, media_type="application/json", headers=headers)
    data, version = body(code)
    immutable = request.query_params.get("v") == version
    headers["Cache-Control"] = "public, max-age=31536000, immutable" if immutable else "no-cache"
    headers["ETag"] = f'"{version}"'
    if request.headers.get("if-none-match") == headers["ETag"]:
        return Response(status_code=304, headers=headers)
    return Response(data, media_type="application/json; charset=utf-8", headers=headers)


def routes() -> list[Route]:
    """The catalog's route, for ``st.App(..., routes=...)``; from then on the board is sent
    the catalog's URL instead of the catalog (:func:`served`)."""
    global _served
    _served = True
    return [Route(PATH + "/{code}.json", catalog, methods=["GET"])]
