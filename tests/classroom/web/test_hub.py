"""attnviz.classroom.web.hub: one class's state shared by every phone, and the long poll."""

from __future__ import annotations

import asyncio
import json

import pytest

from attnviz import classroom, i18n
from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore
from attnviz.classroom.web import hub

SEED, COUNT = 5, 8


@pytest.fixture
def store(tmp_path):
    s = ClassStore(f"sqlite:///{tmp_path / 'classes.db'}")
    yield s
    s.dispose()


def test_the_state_shows_an_answer_only_once_revealed(store):
    code, key = store.create(SEED, COUNT)
    before = hub.load(store, code)
    body = json.loads(before.body)
    assert body["revealed"] == {} and body["closed"] is False and body["question"] is None
    items = exercises.generate(seed=SEED, count=COUNT)
    store.reveal(code, key, 2)
    after = hub.load(store, code)
    assert after.version != before.version
    shown = json.loads(after.body)["revealed"]
    assert list(shown) == ["2"] and shown["2"]["answer"] == items[2].answer_text
    assert "<math" in shown["2"]["html"] or "<p>" in shown["2"]["html"]
    assert key not in after.body.decode()
    store.close(code, key)
    assert json.loads(hub.load(store, code).body)["closed"] is True
    assert hub.load(store, code).version == hub.load(store, code).version  # stable


def test_a_view_questions_answer_is_not_sent_before_its_reveal(store):
    code, key = store.create(SEED, COUNT)
    store.ask(
        code, key, page="playground", link="http://h/x", view="v", kind="top_key",
        prompt="Which key?", choices=("0", "1", "2"), answer=2, detail={"query": 1},
    )  # fmt: skip
    q = json.loads(hub.load(store, code).body)["question"]
    assert q["choices"] == ["0", "1", "2"] and q["answer"] is None and q["revealed"] is False
    store.reveal_question(code, key, q["qid"])
    q = json.loads(hub.load(store, code).body)["question"]
    assert q["answer"] == 2 and q["revealed"] is True


class Fake:
    """A store read that counts its calls and whose version the test changes."""

    def __init__(self) -> None:
        self.version = "a"
        self.reads = 0
        self.fail: Exception | None = None

    def __call__(self, code: str) -> hub.ClassState:
        self.reads += 1
        if self.fail is not None:
            raise self.fail
        info = classroom.ClassInfo(code, SEED, COUNT, 0.0, False, frozenset())
        return hub.ClassState(self.version, False, self.version.encode(), info)


def test_waiters_wake_on_a_change_and_the_store_is_read_once_per_period_for_all():
    fake = Fake()

    async def main():
        h = hub.Hub(fake, period=0.05, linger=0.2)
        first = await h.wait("AAAAAA", None, 1.0)
        assert first.version == "a"
        waiters = [asyncio.create_task(h.wait("AAAAAA", "a", 5.0)) for _ in range(200)]
        await asyncio.sleep(0.3)
        assert not any(w.done() for w in waiters)
        reads = fake.reads
        fake.version = "b"
        got = await asyncio.wait_for(asyncio.gather(*waiters), 1.0)
        assert {s.version for s in got} == {"b"}
        return reads

    reads = asyncio.run(main())
    # ~0.35 s at 0.05 s: about 7 reads for 200 waiters, not 200 x 7
    assert reads < 20, reads


def test_no_change_answers_none_after_the_wait():
    fake = Fake()

    async def main():
        h = hub.Hub(fake, period=0.05, linger=0.1)
        await h.wait("AAAAAA", None, 1.0)
        return await h.wait("AAAAAA", "a", 0.2)

    assert asyncio.run(main()) is None


def test_a_stopping_hub_answers_every_waiter_at_once_and_every_later_poll():
    fake = Fake()

    async def main():
        h = hub.Hub(fake, period=0.05, linger=0.2)
        await h.wait("AAAAAA", None, 1.0)
        waiters = [asyncio.create_task(h.wait("AAAAAA", "a", 60.0)) for _ in range(5)]
        await asyncio.sleep(0.1)
        assert not any(w.done() for w in waiters)
        h.stop()
        # a 60-s wait ends now: were it not answered, wait_for would raise TimeoutError
        got = await asyncio.wait_for(asyncio.gather(*waiters), 5.0)
        later = await asyncio.wait_for(h.wait("AAAAAA", "a", 60.0), 5.0)
        return got, later

    got, later = asyncio.run(main())
    assert got == [None] * 5 and later is None


def test_a_store_error_reaches_the_waiters_and_the_watch_recovers():
    fake = Fake()

    async def main():
        h = hub.Hub(fake, period=0.05, linger=0.5)
        await h.wait("AAAAAA", None, 1.0)
        fake.fail = OSError("disk gone")
        with pytest.raises(OSError):
            await h.wait("AAAAAA", "a", 2.0)
        fake.fail, fake.version = None, "c"
        await asyncio.sleep(0.2)
        return await h.wait("AAAAAA", "a", 2.0)

    assert asyncio.run(main()).version == "c"


def test_a_class_that_is_gone_is_said_and_not_watched_on():
    fake = Fake()
    fake.fail = classroom.ClassNotFound("no such class")

    async def main():
        h = hub.Hub(fake, period=0.05)
        with pytest.raises(classroom.ClassNotFound):
            await h.wait("AAAAAA", None, 1.0)
        await asyncio.sleep(0.1)
        return h.watches

    assert asyncio.run(main()) == {}


def test_an_idle_watch_stops_reading():
    fake = Fake()

    async def main():
        h = hub.Hub(fake, period=0.02, linger=0.1)
        await h.wait("AAAAAA", None, 1.0)
        for _ in range(250):  # the watch ends LINGER after its last waiter (a loaded CPU: later)
            if not h.watches:
                break
            await asyncio.sleep(0.02)
        reads = fake.reads
        await asyncio.sleep(0.2)
        return reads, fake.reads, h.watches

    before, after, watches = asyncio.run(main())
    assert before == after and watches == {}


def test_the_state_is_worded_once_per_language_with_one_version(store):
    code, key = store.create(SEED, COUNT)
    items = exercises.generate(seed=SEED, count=COUNT)
    for item in range(COUNT):
        store.reveal(code, key, item)
    state = hub.load(store, code)
    assert state.body_in("en") is state.body
    spanish = state.body_in("es")
    assert state.body_in("es") is spanish  # the same bytes for every phone (one gzip)
    english, shown = json.loads(state.body), json.loads(spanish)
    assert shown["v"] == english["v"] == state.version and shown["closed"] is False
    for i, e in enumerate(items):
        # a choice by its Spanish label ("baja" for "fall"), a number with a decimal comma
        want = (
            i18n.gettext_for("es", e.answer_text) if e.choices else e.answer_text.replace(".", ",")
        )
        assert shown["revealed"][str(i)]["answer"] == want
        assert english["revealed"][str(i)]["answer"] == e.answer_text
