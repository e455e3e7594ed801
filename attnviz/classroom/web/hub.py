"""What every student of a class sees (its revealed answers, whether it ended, the question
on the projector), read from the store once per process and shared by all the phones.

A phone asks ``state?since=<version>`` and the answer waits (a long poll) until the
version changes or :data:`WAIT_S` pass. While any phone waits on a class, one task per
class and process reads the class from the store every :data:`PERIOD_S` seconds and wakes
the waiters when it changed: the store sees one read per class per period whatever the
number of phones, and an idle phone costs one request per :data:`WAIT_S` seconds.

The state is the same for every phone but its words: its version is language-free, and
its body is made once per language that asks (:meth:`ClassState.body_in`), so a reveal is
still one body (one compression) per language, not one per phone.

A reveal made on another replica is seen here at the next read, so it reaches every phone
within ``PERIOD_S`` plus one request's time.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from attnviz import classroom, i18n
from attnviz.classroom import exercises
from attnviz.classroom.web.render import text_html

#: Seconds between two reads of a watched class.
PERIOD_S = 0.5
#: Seconds a state request waits for a change before it answers "no change" (204).
WAIT_S = 25.0
#: Seconds a class's watcher lives on after its last waiter left.
LINGER_S = 30.0


@functools.lru_cache(maxsize=1024)
def revealed_html(
    seed: int, count: int, item: int, lang: str = i18n.SOURCE, items: tuple[str, ...] = ()
) -> dict[str, str]:
    """A revealed question's answer and explanation in ``lang`` (``items``: a lesson's)."""
    with i18n.use(lang):
        e = exercises.of_class(seed, count, items)[item]
        return {"answer": e.answer_shown, "html": text_html(e.explanation)}


@dataclass(frozen=True)
class ClassState:
    """One class as the phones see it: ``body`` is the JSON a state request answers in
    English, :meth:`body_in` in another language (made at its first request)."""

    version: str
    closed: bool
    body: bytes
    info: classroom.ClassInfo
    question: dict | None = None
    bodies: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    def body_in(self, lang: str) -> bytes:
        """The body in ``lang``, made once per language (the same bytes for each phone)."""
        if lang == i18n.SOURCE:
            return self.body
        got = self.bodies.get(lang)
        if got is None:
            got = self.bodies[lang] = _body(self.version, self.info, self.question, lang)
        return got


def _question(q: classroom.ViewQuestion | None) -> dict | None:
    if q is None:
        return None
    return {
        "qid": q.qid,
        "prompt": q.prompt,
        "choices": list(q.choices),
        "revealed": q.revealed,
        "answer": q.answer if q.revealed else None,  # never before the reveal
        "link": q.link if q.link.startswith(("http://", "https://")) else None,
    }


def _state(info: classroom.ClassInfo, question: dict | None, lang: str) -> dict:
    return {
        "code": info.code,
        "closed": info.closed,
        "revealed": {
            str(i): revealed_html(info.seed, info.count, i, lang, info.items)
            for i in sorted(info.revealed)
        },
        "question": question,  # as the teacher's page wrote it (stored so in the class)
    }


def _body(version: str, info: classroom.ClassInfo, question: dict | None, lang: str) -> bytes:
    state = _state(info, question, lang)
    return json.dumps({"v": version, **state}, separators=(",", ":")).encode()


def load(store: classroom.ClassStore, code: str) -> ClassState:
    """The class ``code`` from the store (ClassNotFound, or a store error, as raised)."""
    info = store.info(code)
    question = _question(store.question(info.code))
    state = _state(info, question, i18n.SOURCE)
    text = json.dumps(state, sort_keys=True, separators=(",", ":"))
    version = hashlib.sha256(text.encode()).hexdigest()[:16]
    body = json.dumps({"v": version, **state}, separators=(",", ":")).encode()
    return ClassState(version, info.closed, body, info, question)


@dataclass
class _Watch:
    state: ClassState | None = None
    error: BaseException | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    waiters: int = 0
    last_used: float = 0.0
    task: asyncio.Task | None = None


class Hub:
    """The classes watched by this process (see the module docstring). ``read(code)`` is a
    blocking store read; it runs in a worker thread, never on the event loop."""

    def __init__(
        self,
        read: Callable[[str], ClassState],
        period: float = PERIOD_S,
        linger: float = LINGER_S,
    ) -> None:
        self.read = read
        self.period = period
        self.linger = linger
        self.watches: dict[str, _Watch] = {}
        self.stopping = False

    def stop(self) -> None:
        """The server is stopping: every waiting phone is answered now (no change) instead
        of holding the shutdown for up to :data:`WAIT_S`; its next poll finds the server
        gone, and the page says it is reconnecting."""
        self.stopping = True
        for w in list(self.watches.values()):
            self._wake(w)

    async def _read(self, code: str) -> ClassState:
        return await asyncio.to_thread(self.read, code)

    async def current(self, code: str) -> ClassState:
        """The class's state, at most ``period`` old (a fresh read when not watched)."""
        w = self.watches.get(code)
        if w is not None and w.task is not None and not w.task.done() and w.state is not None:
            w.last_used = time.monotonic()
            return w.state
        return await self._read(code)

    async def wait(self, code: str, since: str | None, timeout: float) -> ClassState | None:
        """The class's state once its version differs from ``since`` (at once if it
        does), or None after ``timeout`` seconds without a change."""
        w = self._watch(code)
        w.waiters += 1
        try:
            deadline = time.monotonic() + timeout
            while True:
                if w.error is not None:
                    raise w.error
                if w.state is not None and w.state.version != since:
                    return w.state
                left = deadline - time.monotonic()
                if left <= 0 or self.stopping:
                    return None
                event = w.changed
                try:
                    await asyncio.wait_for(event.wait(), left)
                except TimeoutError:
                    return None
        finally:
            w.waiters -= 1
            w.last_used = time.monotonic()

    def _watch(self, code: str) -> _Watch:
        w = self.watches.get(code)
        if w is None or w.task is None or w.task.done():
            w = self.watches[code] = w or _Watch()
            w.error = None
            w.task = asyncio.get_running_loop().create_task(self._follow(code, w))
        return w

    def _wake(self, w: _Watch) -> None:
        event, w.changed = w.changed, asyncio.Event()
        event.set()

    async def _follow(self, code: str, w: _Watch) -> None:
        """Read the class every period while phones wait on it (or did lately)."""
        while True:
            try:
                state = await self._read(code)
            except Exception as exc:  # noqa: BLE001 - said to every waiter, then retried
                w.error = exc
                self._wake(w)
                if isinstance(exc, classroom.ClassNotFound):
                    self.watches.pop(code, None)
                    return
            else:
                w.error = None
                if w.state is None or state.version != w.state.version:
                    w.state = state
                    self._wake(w)
            idle = time.monotonic() - w.last_used
            if w.waiters == 0 and idle > self.linger:
                self.watches.pop(code, None)
                return
            await asyncio.sleep(self.period)
