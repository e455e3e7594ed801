"""A live class across replicas: three ``streamlit run serve.py`` replicas behind Debian's
haproxy with deploy/haproxy.cfg (bench/hall.py), sharing a throwaway PostgreSQL
(bench/hall.py) as deploy/compose.yaml's replicas share theirs
(``ATTNVIZ_DATABASE_URL``).

A teacher starts a class; three phones open the join link through HAProxy (the light page
``/join`` keeps no session: its requests go to any replica, no cookie) and answer question
1. A replica that is not the teacher's is killed (SIGKILL) while the phones are on the page
(their long polls on it are cut): each phone answers question 2 at once, every answer is
stored once, the teacher's reveal of question 3 reaches every phone, and the tally shows 3
students and 6 answers, none lost, none counted twice.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from class_helpers import Phone, press, start_class
from e2e_app import start_app_server, stop_app_server, unavailable
from test_replicas import ProxySession

from attnviz import classroom
from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from hall import (  # noqa: E402
    INSTALL_HINT,
    REPLICAS,
    SECRET_ENV,
    HAProxy,
    PgCluster,
    haproxy_exe,
    pg_bindir,
)

pytestmark = [pytest.mark.e2e, pytest.mark.replicas]

SEED = 9
LIVE_WAIT_MS = 40_000


@pytest.fixture(scope="module")
def hall():
    if not haproxy_exe():
        unavailable("haproxy is not installed (apt-get install haproxy)")
    if pg_bindir() is None:
        pytest.fail(f"PostgreSQL is not installed: {INSTALL_HINT}", False)
    pg = PgCluster(durable=False).start()
    env = {SECRET_ENV: os.urandom(16).hex(), classroom.DATABASE_URL_ENV: pg.url}
    replicas, proxy = [], None
    try:
        for _ in range(REPLICAS):
            replicas.append(start_app_server(extra_env=env))
        proxy = HAProxy([int(r.url.rsplit(":", 1)[1]) for r in replicas]).start()
        yield proxy, dict(zip(proxy.cookies(), replicas, strict=True)), pg
    finally:
        if proxy:
            proxy.stop()
        for r in replicas:
            stop_app_server(r)
        pg.stop()
    for r in replicas:
        out = r.output()
        r.log_path.unlink(missing_ok=True)
        assert "Traceback (most recent call last)" not in out, out


def test_a_class_survives_a_killed_replica(browser, hall):
    proxy, by_cookie, pg = hall
    items = exercises.generate(seed=SEED, count=8)
    any_replica = next(iter(by_cookie.values()))
    teacher = ProxySession(browser, proxy, any_replica)
    phones = [Phone(browser, proxy) for _ in range(3)]
    store = ClassStore(pg.url)
    try:
        code, key = start_class(teacher, SEED)
        for n, phone in enumerate(phones):
            phone.open(f"/join?class={code}")
            phone.page.get_by_label("Nickname (optional)").fill(f"p{n}")
            phone.answer(0, items[0].answer_text if n == 0 else "17")
            phone.verdict(0, "Right:" if n == 0 else "Not quite")
        ids = [phone.student() for phone in phones]
        assert len(set(ids)) == 3 and store.count_rows(code) == 3
        assert not any("SERVERID" in c["name"] for p in phones for c in p.context.cookies())

        # kill a replica that is not the teacher's, with the phones' long polls open
        victim = next(c for c in by_cookie if c != teacher.cookie())
        by_cookie[victim].proc.send_signal(signal.SIGKILL)
        by_cookie[victim].proc.wait(10)
        for n, phone in enumerate(phones):
            phone.answer(1, items[1].answer_text if n < 2 else "0.99")
        for n, phone in enumerate(phones):
            phone.verdict(1, "Right:" if n < 2 else "Not quite", timeout=LIVE_WAIT_MS)
            assert phone.student() == ids[n]  # the same student, in the same link
        assert store.count_rows(code) == 6
        assert {i: len(store.answers(code, i)) for i in ids} == {i: 2 for i in ids}
        assert sorted(store.nicknames(code, key)) == ["p0", "p1", "p2"]

        # the teacher's reveal reaches every phone, whichever replica it asks
        press(teacher, "class_reveal2")
        shown = f"Revealed by the teacher: the answer is {items[2].answer_text}"
        for phone in phones:
            phone.card(2).get_by_text(shown).wait_for(timeout=LIVE_WAIT_MS)
        teacher.page.get_by_text("3 students · 6 answers").wait_for(timeout=LIVE_WAIT_MS)
        tally = store.tally(code, key)
        assert (tally[0]["answered"], tally[0]["right"]) == (3, 1)
        assert (tally[1]["answered"], tally[1]["right"]) == (3, 2)
        for phone in phones:
            assert not phone.errors, phone.errors
        teacher.assert_healthy("a live class across replicas")
    finally:
        store.dispose()
        teacher.close()
        for phone in phones:
            phone.close()
