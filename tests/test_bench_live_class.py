"""Smoke test of bench/live_class.py (a tiny run, no timing assertions): the SQLite part
reports what it counts, and the class loses nothing (the replicas on PostgreSQL with one
killed: tests/test_bench_class_hall.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import live_class  # noqa: E402


def test_the_sqlite_part_counts_every_answer(tmp_path):
    (r,) = live_class.main(
        ["--part", "sqlite", "--students", "12", "--duration", "3", "--json", str(tmp_path / "o")]
    )
    assert json.loads((tmp_path / "o").read_text()) == [r]
    assert r["errors"] == 0 and r["lost"] == 0, r
    assert r["acknowledged"] == r["submits"] >= 12 * 8, r
    assert r["rows"] == r["pairs_acknowledged"] == r["tally_answered"] == 12 * 8, r
    assert r["submit_ms"]["p95"] >= r["submit_ms"]["p50"] > 0, r
