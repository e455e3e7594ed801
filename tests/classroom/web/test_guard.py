"""attnviz.classroom.web.guard: same origin, body size, the rate per student."""

from __future__ import annotations

import asyncio

import pytest
from starlette.requests import Request

from attnviz.classroom.web import guard


def request(headers: dict[str, str], body: bytes = b"") -> Request:
    chunks = [body]

    async def receive():
        return {"type": "http.request", "body": chunks.pop() if chunks else b"", "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/join/api/X/answer",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    return Request(scope, receive)


JSON = {"content-type": "application/json", "host": "10.0.0.5:8501"}


def test_the_page_itself_may_write():
    guard.same_origin(request({**JSON, "origin": "http://10.0.0.5:8501"}))
    guard.same_origin(request({**JSON, "sec-fetch-site": "same-origin"}))
    guard.same_origin(request(JSON))  # a client that sends neither: JSON still needs CORS


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"content-type": "text/plain", "host": "h"}, 415),  # a form or a beacon elsewhere
        ({"content-type": "application/x-www-form-urlencoded", "host": "h"}, 415),
        ({**JSON, "origin": "http://evil.example"}, 403),
        ({**JSON, "origin": "http://10.0.0.5:8502"}, 403),  # another port is another origin
        ({**JSON, "sec-fetch-site": "cross-site"}, 403),
        ({**JSON, "sec-fetch-site": "same-site"}, 403),
    ],
)
def test_another_site_may_not(headers, status):
    with pytest.raises(guard.Refused) as got:
        guard.same_origin(request(headers))
    assert got.value.status == status and got.value.message


def test_a_body_is_read_up_to_its_limit():
    ok = asyncio.run(guard.read_json(request(JSON, b'{"a": 1}')))
    assert ok == {"a": 1}
    for body, status in [(b"x" * (guard.BODY_MAX + 1), 413), (b"[1]", 400), (b"{nope", 400)]:
        with pytest.raises(guard.Refused) as got:
            asyncio.run(guard.read_json(request(JSON, body)))
        assert got.value.status == status
    lying = request({**JSON, "content-length": str(10**9)}, b"{}")
    with pytest.raises(guard.Refused) as got:
        asyncio.run(guard.read_json(lying))
    assert got.value.status == 413


def test_the_rate_is_per_student_with_a_burst():
    limit = guard.RateLimit(burst=3, per_second=1.0)
    for _ in range(3):
        limit.take("ada", now=100.0)
    with pytest.raises(guard.Refused) as got:
        limit.take("ada", now=100.0)
    assert got.value.status == 429 and got.value.retry_after == pytest.approx(1.0)
    limit.take("bob", now=100.0)  # another student of the same hall is not slowed
    limit.take("ada", now=101.0)  # a second later: one more
    with pytest.raises(guard.Refused):
        limit.take("ada", now=101.0)


def test_the_rate_limit_forgets_the_oldest_students(monkeypatch):
    monkeypatch.setattr(guard, "STUDENTS_MAX", 5)
    limit = guard.RateLimit(burst=1, per_second=0.001)
    for i in range(10):
        limit.take(f"s{i}", now=0.0)
    assert len(limit.buckets) == 5 and "s9" in limit.buckets and "s0" not in limit.buckets
