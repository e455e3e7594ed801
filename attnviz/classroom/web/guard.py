"""What the student routes check before they do anything: Streamlit's XSRF check does not
cover routes of our own, so each one is safe by construction.

- :func:`same_origin`: a write comes from the page itself: ``Content-Type:
  application/json`` (a form on another site cannot send it without a CORS preflight,
  which nothing here answers), and ``Origin`` and ``Sec-Fetch-Site``, when the browser
  sends them, name this server.
- :func:`read_json`: at most :data:`BODY_MAX` bytes, a JSON object.
- :class:`RateLimit`: a token bucket per student id (a lecture hall shares one address
  behind its NAT, so never per address).
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

from starlette.requests import Request

from attnviz.i18n import _

#: The largest request body a student route reads (an answer is 64 characters at most).
BODY_MAX = 2048
#: Writes a student may make in a burst, and per second after it.
BURST = 20
PER_SECOND = 2.0
#: Student ids remembered by the rate limit (the oldest forgotten first).
STUDENTS_MAX = 20_000


class Refused(Exception):
    """A request refused: ``status`` and a sentence for the student's page (in the
    request's language: the routes set it before these checks run)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


def same_origin(request: Request) -> None:
    """Refuse (403) a write that does not come from a page of this server."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused(415, _("This address takes JSON sent by the class page only."))
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise Refused(403, _("This request came from another site: refused."))
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host", ""):
        raise Refused(403, _("This request came from another site: refused."))


def _too_large() -> str:
    return _("The request is too large (at most {n} bytes).").format(n=BODY_MAX)


async def read_json(request: Request) -> dict:
    """The body as a JSON object (413 when longer than BODY_MAX, 400 when not JSON)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > BODY_MAX):
        raise Refused(413, _too_large())
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_MAX:
            raise Refused(413, _too_large())
    try:
        data = json.loads(body)
    except ValueError:
        raise Refused(400, _("The request is not JSON.")) from None
    if not isinstance(data, dict):
        raise Refused(400, _("The request is not a JSON object."))
    return data


class RateLimit:
    """A token bucket per key: ``burst`` at once, then ``per_second``."""

    def __init__(self, burst: int = BURST, per_second: float = PER_SECOND) -> None:
        self.burst = burst
        self.per_second = per_second
        self.buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)

    def take(self, key: str, now: float | None = None) -> None:
        """Take one token for ``key``, or refuse (429) with the seconds to wait."""
        now = time.monotonic() if now is None else now
        tokens, when = self.buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - when) * self.per_second)
        if len(self.buckets) >= STUDENTS_MAX:  # dicts keep insertion order: oldest first
            self.buckets.pop(next(iter(self.buckets)))
        if tokens < 1:
            self.buckets[key] = (tokens, now)
            wait = (1 - tokens) / self.per_second
            said = _("Too many answers at once: wait a moment.")
            raise Refused(429, said, retry_after=wait)
        self.buckets[key] = (tokens - 1, now)
