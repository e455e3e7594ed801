"""Smoke test of bench/live_class.py (tiny runs, no timing assertions): the SQLite part and the
replicas part (a throwaway PostgreSQL, a replica process killed halfway) report what they
count, and a class loses nothing in either."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import live_class  # noqa: E402
from pgcluster import INSTALL_HINT, pg_bindir  # noqa: E402


def test_the_sqlite_part_counts_every_answer(tmp_path):
    (r,) = live_class.main(
        ["--part", "sqlite", "--students", "12", "--duration", "3", "--json", str(tmp_path / "o")]
    )
    assert json.loads((tmp_path / "o").read_text()) == [r]
    assert r["errors"] == 0 and r["lost"] == 0
    assert r["acknowledged"] == r["submits"] >= 12 * 8
    assert r["rows"] == r["pairs_acknowledged"] == r["tally_answered"] == 12 * 8
    assert r["submit_ms_p95"] >= r["submit_ms_p50"] > 0


def test_the_replicas_part_kills_a_replica_and_loses_nothing():
    if pg_bindir() is None:
        pytest.fail(f"PostgreSQL is not installed: {INSTALL_HINT}", False)
    (r,) = live_class.main(
        ["--part", "replicas", "--replica-students", "9", "--replica-duration", "6"]
    )
    assert r["killed_replica_at_s"] >= 3 and r["students_moved"] == 3
    assert r["unanswered"] == 0 and r["errors"] == 0 and r["lost"] == 0
    assert r["rows"] == r["pairs_expected"] == 9 * 8
    assert r["tally_complete"] is True
