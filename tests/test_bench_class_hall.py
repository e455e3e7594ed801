"""Smoke test of bench/class_hall.py (tiny runs, no timing assertions): simulated phones on
the live class's light page of a real server (``streamlit run serve.py``) join, answer,
long-poll and see both reveals; the store holds every acknowledged answer once, with its
nickname. The replicas run (two servers, PostgreSQL, HAProxy, one replica killed) loses
nothing either. Also: reading HAProxy's log for the requests the killed replica held."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import class_hall  # noqa: E402
import hall  # noqa: E402
from hall import INSTALL_HINT, pg_bindir  # noqa: E402


def _check(r: dict, phones: int, questions: int) -> None:
    """What every run must show, whatever the machine's load."""
    assert r["joined"] == phones, r
    assert r["errors"] == 0 and r["error_kinds"] == {}, r
    assert r["checks"] == phones * questions, r
    st = r["store"]
    assert st["acknowledged"] == st["rows"] == st["count_rows"] == phones * questions, st
    assert st["lost"] == st["unacknowledged_rows"] == 0, st
    assert st["wrong_answer"] == st["wrong_nickname"] == 0, st
    assert st["nicknames_match"] and st["tally_answered"] == phones * questions, st
    assert st["mine_mismatch"] == 0, st
    for reveal in (r["midclass"]["reveal"], r["reveal_end"]):
        assert reveal["missed"] == 0 and reveal["s"]["n"] == phones, reveal
    assert r["server_log_problems"] == [], r["server_log_problems"]


@pytest.mark.slow
def test_phones_on_one_server_lose_nothing_and_see_every_reveal(tmp_path):
    out = tmp_path / "hall.json"
    r = class_hall.main(
        ["--phones", "20", "--questions", "2", "--window", "3", "--ramp", "1"]
        + ["--idle", "1", "--baseline", "0", "--json", str(out)]
    )
    assert json.loads(out.read_text()) == r
    _check(r, 20, 2)
    assert r["replicas"] == 1 and "SQLite" in r["scenario"], r
    assert r["join_requests"] == 5 and 0 < r["join_bytes"]["max"] < 150_000, r
    assert r["requests"]["page"] == r["requests"]["static"] / 2 == 20, r["requests"]
    assert r["idle"]["phones"] == 20 and r["idle"]["server_cpu_s"] >= 0, r["idle"]
    assert "moved" not in r and "kill" not in r["midclass"], r


@pytest.mark.slow
@pytest.mark.replicas
def test_phones_on_replicas_lose_nothing_when_one_is_killed():
    if pg_bindir() is None:
        pytest.fail(f"PostgreSQL is not installed: {INSTALL_HINT}", False)
    if hall.haproxy_exe() is None:
        pytest.fail("haproxy is not installed (apt-get install haproxy)", False)
    r = class_hall.main(
        ["--replicas", "2", "--phones", "24", "--questions", "2", "--window", "6"]
        + ["--ramp", "1", "--idle", "1", "--baseline", "0"]
    )
    _check(r, 24, 2)
    assert r["replicas"] == 2 and "PostgreSQL" in r["scenario"], r
    kill = r["midclass"]["kill"]
    assert kill["acked_before"] >= 24, kill
    # every phone went on after the kill: its later answers are in the store (above)
    assert r["midclass"]["reveal"]["at_s"] >= kill["at_s"], r["midclass"]


@pytest.mark.slow
def test_haproxy_log_names_the_requests_the_killed_replica_held():
    phones = [class_hall.Phone(i, f"p{i}") for i in range(3)]
    for p in phones:
        p.sent = [100.0, 200.0]  # request 0 sent before the kill at 150, request 1 after
    line = (
        "127.0.0.1:5000 [27/Nov/2026:12:05:24.575] hall attnviz/attnviz3 0/0/0/172/172 200 917"
        ' - - --NN 50/50/28/13/{retries} 0/0 {{{tag}}} "{method} /join/api/ABCDEF/{path} HTTP/1.1"'
    )
    log = "\n".join(
        [
            line.format(retries="+1", tag="0.0", method="GET", path="state?since=x"),
            line.format(retries="+1", tag="1.1", method="POST", path="answer"),
            line.format(retries="0", tag="2.0", method="GET", path="state?since=x"),
            "[WARNING] Server attnviz/attnviz2 is DOWN",
        ]
    )
    got = class_hall.redispatched(log, 150.0, phones)
    assert got == {"held_and_sent_again": {"poll": 1}, "refused_and_sent_again": {"post": 1}}
    assert [p.redispatched for p in phones] == [True, False, False]
    assert phones[0].hit and not phones[2].hit


def test_the_bench_lines_go_into_the_loopback_copy_of_the_deploy_config(tmp_path, monkeypatch):
    monkeypatch.setattr(hall.tempfile, "mkdtemp", lambda prefix: str(tmp_path))
    proxy = hall.HAProxy([8001, 8002], bench=True)
    text = proxy.cfg.read_text()
    assert f"stats socket {tmp_path / 'stats.sock'}" in text
    assert f"capture request header {class_hall.TAG_HEADER} len 24" in text
    assert "server attnviz2 127.0.0.1:8002" in text
    assert f"bind 127.0.0.1:{proxy.port}" in text
    cookies = proxy.cookies()  # derived as haproxy derives them (tests/test_deploy.py)
    assert len(set(cookies)) == 2 and all(len(c) == 16 for c in cookies), cookies
