"""A live class across replicas: three ``streamlit run app.py`` replicas behind Debian's haproxy
with deploy/haproxy.cfg (bench/hall.py), sharing a throwaway PostgreSQL (bench/pgcluster.py)
as deploy/compose.yaml's replicas share theirs (``ATTNVIZ_DATABASE_URL``).

A teacher starts a class; three students join through HAProxy and answer question 1. The
replica holding the first student is killed (SIGKILL): that student's page reconnects to a
live replica, keeps its student id (in the link) and its answer, and answers question 2.
The teacher's tally (on whichever replica) then shows 3 students and every answer, none
lost, none counted twice.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from class_helpers import answer, params, start_class
from e2e_app import start_app_server, stop_app_server, unavailable
from test_replicas import ProxySession, wait_until

from attnviz import classroom, exercises
from attnviz.classroom import ClassStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from hall import REPLICAS, SECRET_ENV, HAProxy, haproxy_exe  # noqa: E402
from pgcluster import INSTALL_HINT, PgCluster, pg_bindir  # noqa: E402

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
    students = [ProxySession(browser, proxy, any_replica) for _ in range(3)]
    store = ClassStore(pg.url)
    try:
        code, key = start_class(teacher, SEED)
        for n, s in enumerate(students):
            s.open(f"/exercises?class={code}")
            answer(s, 0, items[0].answer_text if n == 0 else "17")
        ids = [params(s)["student"] for s in students]
        assert len(set(ids)) == 3 and store.count_rows(code) == 3

        # kill the replica of the first student
        victim = students[0].cookie()
        assert victim in by_cookie
        by_cookie[victim].proc.send_signal(signal.SIGKILL)
        by_cookie[victim].proc.wait(10)
        moved = students[0]
        wait_until(lambda: moved.cookie() not in (None, victim), 60, "a new cookie")
        moved.page.wait_for_function(
            "() => document.querySelector('[data-testid=\"stApp\"]')"
            ".getAttribute('data-test-connection-state') === 'CONNECTED'"
        )
        time.sleep(1)
        moved.wait_for_run()
        # the same student, with the answer it gave before the crash
        assert params(moved)["student"] == ids[0]
        moved.page.get_by_text(f"Right: {items[0].answer_text}.").wait_for(timeout=LIVE_WAIT_MS)
        for n, s in enumerate(students):
            answer(s, 1, items[1].answer_text if n < 2 else "0.99")
        assert store.count_rows(code) == 6
        assert {s: len(a) for s, a in ((i, store.answers(code, i)) for i in ids)} == {
            i: 2 for i in ids
        }

        # the teacher's tally is complete (reload: the teacher may have moved too)
        if teacher.cookie() == victim:
            wait_until(lambda: teacher.cookie() not in (None, victim), 60, "the teacher's cookie")
        teacher.page.get_by_text("3 students · 6 answers").wait_for(timeout=LIVE_WAIT_MS)
        tally = store.tally(code, key)
        assert (tally[0]["answered"], tally[0]["right"]) == (3, 1)
        assert (tally[1]["answered"], tally[1]["right"]) == (3, 2)
        moved.screenshot("class_replicas_moved_student", full=False)
        for s in [teacher, *students]:
            s.assert_healthy("a live class across replicas")
    finally:
        store.dispose()
        for s in [teacher, *students]:
            s.close()
