"""The student's page of a live class: light routes served beside Streamlit's pages by the
same server (``serve.py``: ``st.App("app.py", routes=web.routes())``), with no session: any
replica answers any request.

- ``GET /join?class=CODE&student=ID``: the page: the class's questions (MathML made
  here), a nickname box, per question an answer box and **Check**; without a code, a box
  to type one.
- ``GET /join/static/<file>``: its script (in the page's language) and style sheet
  (content-versioned, a year).
- ``GET /join/api/CODE/state?since=V``: what every student sees (revealed answers, ended,
  the projector's question); waits up to 25 s for a change (:mod:`attnviz.classroom.web.hub`),
  else 204.
- ``GET /join/api/CODE/mine?student=ID``: this student's stored answers and verdicts (a
  reload, another replica).
- ``POST /join/api/CODE/hello`` ``{student, cid}``: the phone opened the page (counted on
  the projector's join screen).
- ``POST /join/api/CODE/answer`` ``{student, nickname, item, answer, cid}``: checked,
  stored once (a retried ``cid`` is answered from memory), the verdict.
- ``POST /join/api/CODE/predict`` ``{student, qid, choice, cid}``: a prediction for the
  projector's question.

Every store call runs in a worker thread, never on the event loop. Every error is a JSON
``{"error", "message"}`` whose message the page shows as it is.

Every route speaks the language of its ``lang=`` (the page's link; the script sends it with
each API call), else of the browser's Accept-Language (:mod:`attnviz.classroom.web.words`): the
page's texts, its ``<html lang dir>``, the script's messages, the verdicts and refusals.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import hashlib
import html
import json
import re
import secrets
import signal
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from attnviz import classroom, i18n
from attnviz.classroom import exercises
from attnviz.classroom.web import guard, hub, words
from attnviz.classroom.web.render import text_html
from attnviz.i18n import N_, _

STATIC = Path(__file__).parent / "static"
#: The page's style sheet, read once: name -> (bytes, media type, version); its script is
#: one per language (:func:`words.script_in`).
ASSETS = {
    name: (
        (STATIC / name).read_bytes(),
        media,
        hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12],
    )
    for name, media in (("student.css", "text/css"),)
}
SCRIPT = "student.js"
TEMPLATE = (STATIC / "student.html").read_text()
#: The page of a class: the template without the box for a class code (never shown there,
#: and never sent: a class page's bytes, issue 45).
CLASS_TEMPLATE = re.sub(r'<form id="join".*?</form>\n', "", TEMPLATE, count=1, flags=re.S)
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
STUDENT_ID = re.compile(r"[A-Za-z0-9]{8,32}")
CID_MAX = 64
#: Answered requests remembered for retries (their client ids), per process.
DONE_MAX = 50_000
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
STORE_DOWN = N_(
    "The class store is not answering right now. Your answer is kept on this device and "
    "sent again in a moment."
)
STORE_FULL = N_(
    "The class store is full (the server's disk): your answer is kept on this device and "
    "sent again in a moment. Tell the teacher."
)


class Server:
    """This process's store (on ``url``, default :func:`attnviz.classroom.default_url`,
    opened on first use), hub, rate limit and answered client ids."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url
        self.lock = threading.Lock()
        self._store: classroom.ClassStore | None = None
        self.hub = hub.Hub(lambda code: hub.load(self.store, code))
        self.limit = guard.RateLimit()
        self.done: OrderedDict[str, tuple[int, bytes]] = OrderedDict()

    @property
    def store(self) -> classroom.ClassStore:
        with self.lock:
            if self._store is None:
                url = self.url or classroom.default_url()
                self._store = classroom.ClassStore(url, grade=exercises.grade)
            return self._store

    def remember(self, cid: str, status: int, body: bytes) -> None:
        self.done[cid] = (status, body)
        while len(self.done) > DONE_MAX:
            self.done.popitem(last=False)


SERVER = Server()


# --------------------------------------------------------------------------- replies


def _reply(
    request: Request,
    body: bytes,
    media: str = "application/json",
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    """``body``, gzipped when the browser takes it and it is worth it (the same bytes are
    compressed once: :func:`gzipped` remembers them); never cached unless ``headers`` say
    so; the security headers on every reply."""
    out = {**HEADERS, "Cache-Control": "no-store", "Vary": "Accept-Encoding", **(headers or {})}
    if len(body) > 1024 and "gzip" in request.headers.get("accept-encoding", ""):
        body = gzipped(body)
        out["Content-Encoding"] = "gzip"
    return Response(body, status_code=status, media_type=media, headers=out)


@functools.lru_cache(maxsize=256)
def gzipped(body: bytes) -> bytes:
    """``body`` compressed, once per body: the page's files, and a class's state that every
    waiting phone gets at a reveal (a thousand phones, one compression)."""
    return gzip.compress(body, compresslevel=6, mtime=0)


def _error(request: Request, status: int, error: str, message: str, **extra) -> Response:
    body = json.dumps({"error": error, "message": message, **extra}).encode()
    headers = {}
    if extra.get("retry_after") is not None:
        headers["Retry-After"] = str(max(1, round(extra["retry_after"])))
    return _reply(request, body, status=status, headers=headers)


def _not_found(code: str) -> str:
    shown = code[:20] + ("…" if len(code) > 20 else "")
    return _(
        "There is no class with the code {code}: a wrong code, or the class ended more "
        "than 24 hours ago (classes expire then). A class code is {n} letters and digits."
    ).format(code=shown, n=classroom.CODE_LENGTH)


# --------------------------------------------------------------------------- the page


def _field(i: int, choices: tuple[str, ...] | None, placeholder: str) -> str:
    yours = html.escape(_("Your answer"))
    if choices:  # the values stay English (graded as such); the words are shown translated
        options = "".join(
            f'<label class="choice"><input type="radio" name="answer" value="{html.escape(c)}">'
            f" {html.escape(_(c))}</label>"
            for c in choices
        )
        return f'<fieldset><legend>{yours}</legend><div class="choices">{options}</div></fieldset>'
    return (
        f'<label for="a{i}">{yours}</label>'
        f'<input id="a{i}" name="answer" type="text" autocomplete="off" autocapitalize="off" '
        f'spellcheck="false" placeholder="{placeholder}">'
    )


@functools.lru_cache(maxsize=64)
def _questions_html(
    seed: int, count: int, lang: str = i18n.SOURCE, items: tuple[str, ...] = ()
) -> str:
    """The questions of a set (a lesson's ``items`` first) as cards in ``lang`` (made once
    per process, set and language)."""
    cards = []
    with i18n.use(lang):
        check = html.escape(_("Check"))

        # a lesson's questions marked as its (as the teacher's tally and slides mark them)
        def title(i: int, e: exercises.Exercise) -> str:
            if i < len(items):
                return _("{n}. {title} (lesson)").format(n=i + 1, title=e.title)
            return f"{i + 1}. {e.title}"

        for i, e in enumerate(exercises.of_class(seed, count, items)):
            placeholder = (
                "(4, 2)" if e.kind in exercises.SHAPE_KINDS else html.escape(_("a number"))
            )
            cards.append(
                f'<li class="card" id="q{i}" data-item="{i}">'
                f'<h2 id="q{i}-title">{html.escape(title(i, e))}</h2>'
                f'<div class="prompt">{text_html(e.prompt)}</div>'
                f'<form class="answer" data-item="{i}" aria-labelledby="q{i}-title" novalidate>'
                f'<div class="field">{_field(i, e.choices, placeholder)}</div>'
                f'<button type="submit">{check}</button></form>'
                '<div class="verdict" role="status" aria-live="polite"></div>'
                '<div class="revealed" aria-live="polite" hidden></div></li>'
            )
    return '<ol class="questions">' + "".join(cards) + "</ol>"


def _fill(**values: str) -> bytes:
    """The page template in the shown language with each ``{{name}}`` replaced by its value
    (already HTML), in one pass: a value is never read as a placeholder."""
    shown = bool(values.get("code"))
    lang = i18n.current()
    values = {
        **{f"{n.split('.')[1]}_v": v for n, (_, _, v) in ASSETS.items()},
        "class_hidden": "" if shown else "hidden",
        "join": classroom.JOIN_PATH,
        "lang": html.escape(i18n.html_lang(lang)),
        "dir": i18n.direction(lang),
        "js_v": words.script_in(lang)[1],
        # the page's language: the script of an unknown version (a replica with other
        # catalogs, a deploy under way) comes in it, not in the browser's
        "js_lang": html.escape(lang),
        "keep_lang": "",
        **words.page_texts(classroom.NICKNAME_MAX),
        **values,
    }
    template = CLASS_TEMPLATE if shown else TEMPLATE
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template).encode()


def _page(request: Request, **values: str) -> bytes:
    """:func:`_fill` with the links to the other languages (and, when the link chose the
    language, the code box keeps it)."""
    code, student = (html.unescape(values.get(k, "")) for k in ("code", "student"))
    asked = request.query_params.get("lang")
    keep = f'<input type="hidden" name="lang" value="{html.escape(i18n.current())}">'
    return _fill(
        languages=words.languages_html(classroom.JOIN_PATH, code, student),
        keep_lang=keep if asked else "",
        **values,
    )


async def page(request: Request) -> Response:
    """``GET /join``: the class page, or a box for a code (with why, for a wrong one), in
    the language of ``?lang=``, else of the browser (Accept-Language)."""
    with i18n.use(words.language(request)):
        return await _class_page(request)


async def _class_page(request: Request) -> Response:
    code = (request.query_params.get("class") or "").strip()
    student = request.query_params.get("student") or ""
    if not STUDENT_ID.fullmatch(student):
        student = secrets.token_hex(8)  # the script writes it into the link
    esc = html.escape
    kind, vary = "text/html; charset=utf-8", {"Vary": "Accept-Encoding, Accept-Language"}
    join = esc(_("Join a live class"))
    if not code:
        body = _page(request, title=join, code="", student="", problem="", main="")
        return _reply(request, body, kind, headers=vary)
    try:
        state = await SERVER.hub.current(classroom.normalize_code(code))
    except classroom.ClassNotFound:
        problem = f'<p class="problem" role="alert">{esc(_not_found(code))}</p>'
        body = _page(request, title=join, code="", student="", problem=problem, main="")
        return _reply(request, body, kind, status=404, headers=vary)
    except classroom.STORE_ERRORS as exc:
        said = _("The class store cannot be reached ({error}): reload this page in a moment.")
        problem = (
            f'<p class="problem" role="alert">{esc(said.format(error=type(exc).__name__))}</p>'
        )
        body = _page(request, title=join, code="", student="", problem=problem, main="")
        return _reply(request, body, kind, status=503, headers=vary)
    info = state.info
    body = _page(
        request,
        title=esc(_("Live class {code}").format(code=info.code)),
        code=esc(info.code),
        student=esc(student),
        problem="",
        main=_questions_html(info.seed, info.count, i18n.current(), info.items),
    )
    return _reply(request, body, kind, headers=vary)


async def asset(request: Request) -> Response:
    """``GET /join/static/<name>``: cached a year when asked for by its version (the
    script: the one of that version, whatever its language; else in the asker's)."""
    name, asked = request.path_params["name"], request.query_params.get("v")
    vary = {}
    if name == SCRIPT:
        lang, media = words.language(request), "text/javascript"
        got = words.script_of(asked, lang) if asked else None
        if got is None:  # an old or no version: the asker's language, asked again each time
            got, vary = words.script_in(lang), {"Vary": "Accept-Encoding, Accept-Language"}
        data, version = got
    elif name in ASSETS:
        data, media, version = ASSETS[name]
    else:
        return _error(request, 404, "not_found", "No such file.")
    cache = "public, max-age=31536000, immutable" if asked == version else "no-cache"
    headers = {"Cache-Control": cache, "ETag": f'"{version}"', **vary}
    return _reply(request, data, media, headers=headers)


# --------------------------------------------------------------------------- the API


def _code(request: Request) -> str:
    try:
        return classroom.normalize_code(request.path_params["code"])
    except ValueError:
        raise guard.Refused(404, _not_found(str(request.path_params["code"]))) from None


async def _said(request: Request, work: Callable[[], Awaitable[Response]]) -> Response:
    """``await work()`` in the page's language (:func:`words.language`), with what every
    route says the same way: a refusal, a class that is not there, a store that is down or
    full."""
    with i18n.use(words.language(request)):
        return await _said_in(request, work)


async def _said_in(request: Request, work: Callable[[], Awaitable[Response]]) -> Response:
    try:
        return await work()
    except guard.Refused as r:
        return _error(request, r.status, "refused", r.message, retry_after=r.retry_after)
    except classroom.ClassNotFound:
        return _error(request, 404, "not_found", _not_found(request.path_params["code"]))
    except classroom.STORE_ERRORS as exc:
        if "full" in str(exc).lower():  # SQLite's "database or disk is full", PostgreSQL's
            return _error(request, 503, "store_full", _(STORE_FULL))
        return _error(request, 503, "store_down", _(STORE_DOWN))


async def state(request: Request) -> Response:
    """``GET /join/api/CODE/state?since=V``: the class when its version is not V (at once,
    or when it changes within the wait), else 204."""

    async def work() -> Response:
        code = _code(request)
        since = request.query_params.get("since")
        lang = i18n.current()
        if not since:
            return _reply(request, (await SERVER.hub.current(code)).body_in(lang))
        got = await SERVER.hub.wait(code, since, hub.WAIT_S)
        if got is None:
            return Response(status_code=204, headers={**HEADERS, "Cache-Control": "no-store"})
        return _reply(request, got.body_in(lang))

    return await _said(request, work)


def _student(value: object) -> str:
    if not isinstance(value, str) or not STUDENT_ID.fullmatch(value):
        raise guard.Refused(400, _("This page's student id is missing or wrong: reload the page."))
    return value


def _verdict(e, right: bool) -> str:
    """What a check says, in the shown language."""
    if right:  # the explanation in a box of its own: a revealed card shows it once (CSS)
        said = _("Right: {answer}.").format(answer=e.answer_shown)
        explanation = f'<div class="explanation">{text_html(e.explanation)}</div>'
        return f"<p><strong>{html.escape(said)}</strong></p>" + explanation
    not_quite, hint = html.escape(_("Not quite.")), html.escape(_("Hint:"))
    return f"<p><strong>{not_quite}</strong> {hint} " + text_html(e.hint).removeprefix("<p>")


async def mine(request: Request) -> Response:
    """``GET /join/api/CODE/mine?student=ID``: this student's stored answers (with their
    verdicts) and prediction."""

    async def work() -> Response:
        code = _code(request)
        student = _student(request.query_params.get("student"))
        current = await SERVER.hub.current(code)
        stored = await asyncio.to_thread(SERVER.store.answers, code, student)
        q = json.loads(current.body).get("question")
        choice = None
        if q is not None:
            choice = await asyncio.to_thread(SERVER.store.my_choice, code, student, q["qid"])
        info = current.info
        items = exercises.of_class(info.seed, info.count, info.items)
        answers = {
            str(i): {"answer": a, "right": r, "verdict": _verdict(items[i], r)}
            for i, (a, r) in stored.items()
            if 0 <= i < len(items)
        }
        mine = {"qid": q["qid"], "choice": choice} if q is not None else None
        return _reply(request, json.dumps({"answers": answers, "choice": mine}).encode())

    return await _said(request, work)


async def _write(request: Request, handle) -> Response:
    """The steps every write shares: same origin, size, JSON, rate, a retried client id
    answered from memory; then ``handle(code, student, data)`` -> (status, body dict)."""

    async def work() -> Response:
        guard.same_origin(request)
        data = await guard.read_json(request)
        code = _code(request)
        student = _student(data.get("student"))
        cid = data.get("cid")
        if not isinstance(cid, str) or not 8 <= len(cid) <= CID_MAX:
            raise guard.Refused(400, _("The request has no id: reload the page."))
        key = f"{code}/{student}/{cid}"
        if key in SERVER.done:  # a retry of a request already answered: not stored again
            status, body = SERVER.done[key]
            return _reply(request, body, status=status)
        SERVER.limit.take(student)
        status, out = await handle(code, student, data)
        body = json.dumps(out).encode()
        SERVER.remember(key, status, body)
        return _reply(request, body, status=status)

    return await _said(request, work)


async def _answer(code: str, student: str, data: dict) -> tuple[int, dict]:
    item, text, nickname = data.get("item"), data.get("answer"), data.get("nickname") or None
    if not isinstance(text, str) or not text.strip():
        raise guard.Refused(400, _("Type an answer first."))
    try:
        right = await asyncio.to_thread(
            SERVER.store.submit, code, student, item, text, nickname=nickname
        )
        stored = True
    except classroom.ClassClosed:  # checked here, not stored: said on the page
        info = (await SERVER.hub.current(code)).info
        if not isinstance(item, int) or not 0 <= item < info.count:
            said = _("There is no question {item} in this class.").format(item=repr(item))
            raise guard.Refused(400, said) from None
        right = exercises.grade(info.seed, info.count, item, text, info.items)
        stored = False
    except classroom.ClassNotFound:
        raise
    except ValueError as exc:
        raise guard.Refused(400, words.refusal(str(exc))) from None
    info = (await SERVER.hub.current(code)).info
    e = exercises.of_class(info.seed, info.count, info.items)[item]
    out = {"item": item, "right": bool(right), "stored": stored, "verdict": _verdict(e, right)}
    if not stored:
        out["message"] = _(
            "The teacher has ended this class: your answer is checked here, but no longer sent."
        )
    return 200, out


async def _predict(code: str, student: str, data: dict) -> tuple[int, dict]:
    qid, choice = data.get("qid"), data.get("choice")
    try:
        await asyncio.to_thread(SERVER.store.answer_question, code, student, qid, choice)
    except classroom.ClassNotFound:
        raise
    except ValueError as exc:
        raise guard.Refused(409, words.refusal(str(exc))) from None
    return 200, {"qid": qid, "choice": choice, "stored": True}


async def _hello(code: str, student: str, data: dict) -> tuple[int, dict]:
    await asyncio.to_thread(SERVER.store.join, code, student)
    return 200, {"joined": True}


async def hello(request: Request) -> Response:
    """``POST /join/api/CODE/hello`` ``{student, cid}``: this phone opened the page (the
    projector counts the students in)."""
    return await _write(request, _hello)


async def answer(request: Request) -> Response:
    return await _write(request, _answer)


async def predict(request: Request) -> Response:
    return await _write(request, _predict)


@contextlib.asynccontextmanager
async def lifespan(_app: object) -> AsyncIterator[None]:
    """For ``st.App(..., lifespan=...)``: on SIGTERM or SIGINT, before the server waits
    for its open requests to end, the hub answers every waiting long poll (uvicorn's
    graceful shutdown would otherwise wait up to :data:`hub.WAIT_S` for each phone, and
    ``docker stop`` kills after 10 s). The handlers installed by the server are kept and
    called after."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    loop = asyncio.get_running_loop()

    def stop_waiting(signum: int, frame: object) -> None:
        loop.call_soon_threadsafe(SERVER.hub.stop)  # on the loop, not inside the handler
        handler = previous[signum]
        if callable(handler):
            handler(signum, frame)

    for sig in previous:
        with contextlib.suppress(ValueError):  # not the main thread: leave it to the server
            signal.signal(sig, stop_waiting)
    yield


def routes() -> list[Route]:
    """The student page's routes, for ``st.App(..., routes=...)``."""
    join = f"/{classroom.JOIN_PATH}"
    return [
        Route(join, page, methods=["GET"]),
        Route(f"{join}/static/{{name}}", asset, methods=["GET"]),
        Route(f"{join}/api/{{code}}/state", state, methods=["GET"]),
        Route(f"{join}/api/{{code}}/mine", mine, methods=["GET"]),
        Route(f"{join}/api/{{code}}/hello", hello, methods=["POST"]),
        Route(f"{join}/api/{{code}}/answer", answer, methods=["POST"]),
        Route(f"{join}/api/{{code}}/predict", predict, methods=["POST"]),
    ]
